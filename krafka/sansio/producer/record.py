"""A record waiting for delivery, and what its delivery reports.

`PendingRecord` is the one object created per `send()`: the codec encodes it directly (it has
the `key`, `value`, `headers`, `timestamp` a `RecordLike` needs) and it resolves from its batch's
result, so no per-record future exists. Drivers subclass it to make it awaitable.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from krafka.errors import KrafkaError

if TYPE_CHECKING:
    from krafka.sansio.producer.batch import ProducerBatch

Header = tuple[str, "bytes | None"]


@dataclass(frozen=True, slots=True)
class RecordMetadata:
    """Where a record landed. `offset` is -1 when acks=0 (the broker does not say)."""

    topic: str
    partition: int
    offset: int
    timestamp: int


class PendingRecord:
    """One record on its way: its fields, and its batch and position once appended."""

    __slots__ = ("batch", "headers", "index", "key", "size", "timestamp", "value")

    def __init__(
        self,
        key: bytes | None,
        value: bytes | None,
        headers: Sequence[Header],
        timestamp: int,
        size: int,
    ) -> None:
        self.key = key
        self.value = value
        self.headers = headers
        self.timestamp = timestamp
        self.size = size
        self.batch: ProducerBatch | None = None
        self.index = 0

    @property
    def done(self) -> bool:
        batch = self.batch
        return batch is not None and batch.done

    def exception(self) -> KrafkaError | None:
        """The delivery error, or None (also while still pending)."""
        batch = self.batch
        return None if batch is None else batch.error

    def result(self) -> RecordMetadata:
        """The delivery result; raises the delivery error. Only valid once `done`."""
        batch = self.batch
        if batch is None or not batch.done:
            raise RuntimeError("record not delivered yet")
        if batch.error is not None:
            raise batch.error
        offset = batch.base_offset + self.index if batch.base_offset >= 0 else -1
        ts = batch.log_append_time if batch.log_append_time >= 0 else self.timestamp
        return RecordMetadata(batch.topic, batch.partition, offset, ts)


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
