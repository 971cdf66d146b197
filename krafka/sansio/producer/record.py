"""What `send` hands back: a light handle on a record inside its batch, and its delivery result.

Records themselves travel as codec `Record`s (not tracked by Python's garbage collector, and
encoded without attribute lookups); the handle is two references, `(batch, index)`, so a
producer holding a million undelivered records does not make every GC pass walk a million
objects. A handle follows its batch through splits (MESSAGE_TOO_LARGE).
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
    """Where a record landed. `offset` is -1 when the broker does not say: acks=0, or its
    batch was acknowledged as a duplicate (DUPLICATE_SEQUENCE_NUMBER: the broker already held
    it; counted in the producer's `metrics().duplicate_records`)."""

    topic: str
    partition: int
    offset: int
    timestamp: int


class RecordHandle:
    """Record `index` of `batch`: its delivery state and result."""

    __slots__ = ("batch", "index")

    def __init__(self, batch: ProducerBatch, index: int) -> None:
        self.batch = batch
        self.index = index

    def locate(self) -> tuple[ProducerBatch, int]:
        """The batch (and position) holding the record now, following splits."""
        batch, index = self.batch, self.index
        while batch.halves is not None:
            first, second = batch.halves
            if index < len(first.records):
                batch = first
            else:
                batch, index = second, index - len(first.records)
        if batch is not self.batch:
            self.batch, self.index = batch, index
        return batch, index

    @property
    def done(self) -> bool:
        return self.locate()[0].done

    def exception(self) -> KrafkaError | None:
        """The delivery error, or None (also while still pending)."""
        return self.locate()[0].error

    def result(self) -> RecordMetadata:
        """The delivery result; raises the delivery error. Only valid once `done`."""
        batch, index = self.locate()
        if not batch.done:
            raise RuntimeError("record not delivered yet")
        if batch.error is not None:
            raise batch.error
        offset = batch.base_offset + index if batch.base_offset >= 0 else -1
        ts = batch.log_append_time
        if ts < 0:
            own = batch.records[index].timestamp
            ts = own if own is not None else batch.created_ms
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
