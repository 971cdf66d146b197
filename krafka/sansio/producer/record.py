"""What `send` hands back: a light handle on a record inside its batch, and its delivery result.

Records themselves travel as codec `Record`s (not tracked by Python's garbage collector, and
encoded without attribute lookups); a handle is two references, `(batch, index)`, and follows
its record through splits (MESSAGE_TOO_LARGE). The functions below are what every handle
implementation (this one, `krafka.io`'s awaitable ones) does with those two references.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from krafka.errors import KrafkaError

if TYPE_CHECKING:
    from krafka.sansio.producer.batch import ProducerBatch

Header = tuple[str, "bytes | None"]


class RecordMetadata(NamedTuple):
    """Where a record landed. `offset` is -1 when the broker does not say: acks=0, or its
    batch was acknowledged as a duplicate (DUPLICATE_SEQUENCE_NUMBER: the broker already held
    it; counted in the producer's `metrics().duplicate_records`).

    A named tuple (as in aiokafka and kafka-python): one is made for every confirmed record,
    so it must be cheap to make.
    """

    topic: str
    partition: int
    offset: int
    timestamp: int


_new_tuple = tuple.__new__


def metadata_of(batch: ProducerBatch, index: int) -> RecordMetadata:
    """The `RecordMetadata` of record `index` of a delivered `batch`."""
    metadata = delivered(batch, index)
    if metadata is None:
        raise RuntimeError(f"{batch!r} was not delivered")
    return metadata


def delivered(batch: ProducerBatch, index: int) -> RecordMetadata | None:
    """`metadata_of` if `batch` was delivered (then it was never split), else None; read from
    the batch's `outcome`, the one attribute a delivery sets for this."""
    outcome = batch.outcome
    if outcome is None:
        return None
    topic, partition, base, timestamp, stamps, created = outcome
    if timestamp < 0:
        timestamp = created if stamps is None else stamps[index]
    return _new_tuple(
        RecordMetadata, (topic, partition, base + index if base >= 0 else -1, timestamp)
    )


def locate(batch: ProducerBatch, index: int) -> tuple[ProducerBatch, int]:
    """Where record `index` of `batch` is now: after a split (MESSAGE_TOO_LARGE) it lives in one
    of the halves."""
    while batch.halves is not None:
        first, second = batch.halves
        size = first.count
        if index < size:
            batch = first
        else:
            batch, index = second, index - size
    return batch, index


def result_of(batch: ProducerBatch, index: int) -> RecordMetadata:
    """The delivery result of record `index` of `batch`; raises its delivery error."""
    batch, index = locate(batch, index)
    if not batch.done:
        raise RuntimeError("record not delivered yet")
    if batch.error is not None:
        raise fresh_error(batch.error)
    return metadata_of(batch, index)


def fresh_error(error: KrafkaError) -> KrafkaError:
    """A copy of a batch's delivery error to raise for one of its records.

    The stored error is never raised itself, so it never holds a traceback: it cannot keep the
    frames (and handles) of every task that awaited it alive, nor grow a traceback per record.
    """
    raised = copy.copy(error)
    raised.__cause__ = error.__cause__
    return raised


class RecordHandle:
    """Record `index` of `batch`: its delivery state and result (follows splits)."""

    __slots__ = ("batch", "index")

    def __init__(self, batch: ProducerBatch, index: int) -> None:
        self.batch = batch
        self.index = index

    def locate(self) -> tuple[ProducerBatch, int]:
        """The batch (and position) holding the record now."""
        return locate(self.batch, self.index)

    @property
    def done(self) -> bool:
        return self.locate()[0].done

    def exception(self) -> KrafkaError | None:
        """The delivery error, or None (also while still pending)."""
        return self.locate()[0].error

    def result(self) -> RecordMetadata:
        """The delivery result; raises the delivery error. Only valid once `done`."""
        return result_of(self.batch, self.index)

    def delivered(self) -> RecordMetadata | None:
        """The `RecordMetadata` if the record is delivered and its batch was never split
        (the common case, read without `locate`), else None: pending, failed or split."""
        return delivered(self.batch, self.index)

    def __repr__(self) -> str:
        return describe(self, "RecordHandle")


def describe(handle: Any, name: str) -> str:
    """`<DeliveryHandle orders-0 #5 pending>`."""
    batch, index = locate(handle.batch, handle.index)
    state = "done" if batch.done else "pending"
    return f"<{name} {batch.topic}-{batch.partition} #{index} {state}>"


_BLOBS = (bytes, bytearray, memoryview)


def check_headers(headers: Iterable[Any]) -> list[Header]:
    """`headers` as a list of `(str, bytes | None)` pairs, the API contract; anything else
    raises `TypeError` naming it (a `bytes` key would otherwise be written as its repr)."""
    out: list[Header] = []
    for header in headers:
        if not isinstance(header, tuple | list) or len(header) != 2:
            raise TypeError(f"a header is a (str, bytes | None) pair, not {header!r}")
        key, value = header
        if not isinstance(key, str):
            raise TypeError(
                f"header key {key!r} is {type(key).__name__}: header keys are str"
                + (" (decode it: key.decode())" if isinstance(key, _BLOBS) else "")
            )
        if value is not None and not isinstance(value, _BLOBS):
            raise TypeError(
                f"header {key!r} has a {type(value).__name__} value: header values are bytes "
                "or None"
            )
        out.append((key, value if value is None or type(value) is bytes else bytes(value)))
    return out


def check_record(key: object, value: object, timestamp: object) -> None:
    """`TypeError` naming `key` or `value` when it is not bytes-like or None (the codec's own
    message, "string argument without an encoding", names neither); `check_timestamp`."""
    if timestamp is not None:
        check_timestamp(timestamp)
    for name, data in (("key", key), ("value", value)):
        if data is not None and not isinstance(data, _BLOBS):
            raise TypeError(
                f"send({name}=...): a record's {name} is bytes or None, not "
                f"{type(data).__name__} ({data!r:.40})"
                + (f": encode it ({name}.encode())" if isinstance(data, str) else "")
            )


def check_timestamp(timestamp: object) -> None:
    """A record's timestamp is epoch milliseconds, an int >= 0, or None (Java refuses a
    negative one): `TypeError` / `ValueError` naming it."""
    if isinstance(timestamp, bool) or not isinstance(timestamp, int):
        raise TypeError(
            f"send(timestamp=...): epoch milliseconds as an int, or None, not "
            f"{type(timestamp).__name__} ({timestamp!r:.40})"
        )
    if timestamp < 0:
        raise ValueError(f"send(timestamp={timestamp}): a timestamp is >= 0 (or None)")


def estimate_size(key: bytes | None, value: bytes | None, headers: Sequence[Header]) -> int:
    """Upper bound of a record's encoded size (varint overheads included), for batching."""
    size = 21
    if key is not None:
        size += len(key)
    if value is not None:
        size += len(value)
    for hkey, hval in headers:
        size += len(hkey) * 4 + 10 + (len(hval) if hval is not None else 0)
    return size
