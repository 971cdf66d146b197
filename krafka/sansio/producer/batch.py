"""A producer batch: the records bound for one partition that travel in one record batch.

Mutable bookkeeping owned by the accumulator and the sender; plain sans-IO state (a delivery is
`done` with an `outcome` or an `error`), which whoever drives the producer reads. Records are
written into the batch's `RecordsBuilder` as they are appended (no record objects are kept);
`encode` frames them once (with the producer id, epoch and base sequence) and the same bytes
are re-sent on retries, so a retry is byte-identical and the broker can de-duplicate it. A batch
that finished (delivered, failed or split) lets go of its records and bytes, as Java returns a
batch's buffer to its pool: the handles an application keeps hold only the outcome.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import Enum
from typing import Any

from krafka.codec import Compression, RecordsBuilder
from krafka.errors import KrafkaError

BATCH_OVERHEAD = 61
"""Bytes of a v2 record batch header."""


class BatchState(Enum):
    OPEN = "open"
    SEALED = "sealed"
    IN_FLIGHT = "in-flight"
    RETRY = "retry"
    DONE = "done"


class ProducerBatch:
    """Records for one (topic, partition), in send order."""

    __slots__ = (
        "attempts",
        "base_offset",
        "base_sequence",
        "builder",
        "created",
        "created_ms",
        "done",
        "error",
        "halves",
        "limit",
        "log_append_time",
        "order",
        "outcome",
        "partition",
        "payload",
        "producer_epoch",
        "producer_id",
        "records",
        "retry_at",
        "size",
        "span",
        "stamps",
        "state",
        "topic",
        "transactional",
    )

    def __init__(
        self, topic: str, partition: int, created: float, order: float, created_ms: int
    ) -> None:
        self.topic = topic
        self.partition = partition
        self.created = created
        self.order = order
        self.span = 1.0
        #: The records, encoded in send order (None once the batch finished).
        self.builder: Any = RecordsBuilder(created_ms)
        #: How many records the batch held when it finished (its builder then gone).
        self.records = 0
        #: The timestamp of records that carry none: the wall clock (ms) when it was opened,
        #: an input like every clock reading.
        self.created_ms: int = created_ms
        #: Every record's timestamp, once some record had its own (else all are `created_ms`).
        self.stamps: list[int] | None = None
        self.size = BATCH_OVERHEAD
        #: Seal at this size: `batch_size`, or less when the buffer had less room at opening.
        self.limit = 2**62
        self.state = BatchState.OPEN
        self.attempts = 0
        self.retry_at = 0.0
        self.base_sequence = -1
        self.producer_id = -1
        self.producer_epoch = -1
        self.transactional = False
        self.payload: bytes | memoryview | None = None
        self.base_offset = -1
        self.log_append_time = -1
        self.done = False
        self.error: KrafkaError | None = None
        #: Once delivered: (topic, partition, base_offset, log_append_time, stamps,
        #: created_ms), all a record's `RecordMetadata` is made of, read in one go.
        self.outcome: tuple[str, int, int, int, list[int] | None, int] | None = None
        self.halves: tuple[ProducerBatch, ProducerBatch] | None = None

    def __repr__(self) -> str:
        return (
            f"<ProducerBatch {self.topic}-{self.partition} #{self.order} "
            f"{self.count} records {self.state.name} seq={self.base_sequence}>"
        )

    @property
    def tp(self) -> tuple[str, int]:
        return (self.topic, self.partition)

    @property
    def settled(self) -> bool:
        """Delivered or failed - itself, or (after a split) both its halves."""
        if self.done:
            return True
        return self.halves is not None and all(half.settled for half in self.halves)

    @property
    def count(self) -> int:
        builder = self.builder
        return self.records if builder is None else int(builder.count)

    def add(
        self,
        timestamp: int | None,
        key: bytes | None,
        value: bytes | None,
        headers: Sequence[tuple[str, bytes | None]] | None,
        size: int,
    ) -> int:
        """Append a record of (estimated) `size` bytes; returns its index in the batch."""
        builder = self.builder
        index = int(builder.count)
        builder.append(timestamp, key, value, headers)
        self.size += size
        if timestamp is not None or self.stamps is not None:
            self.stamp(timestamp)
        return index

    def stamp(self, timestamp: int | None) -> None:
        """Note the timestamp of the record just appended (once any record has its own)."""
        stamps = self.stamps
        if stamps is None:
            stamps = self.stamps = [self.created_ms] * (self.builder.count - 1)
        stamps.append(self.created_ms if timestamp is None else timestamp)

    def encode(self, compression: Compression, level: int | None = None) -> bytes | memoryview:
        """The record batch bytes (cached: retries resend the very same bytes); uncompressed,
        a view of the builder's buffer where the batch was written (no copy)."""
        if self.payload is None:
            self.payload = self.builder.seal(
                compression,
                producer_id=self.producer_id,
                producer_epoch=self.producer_epoch,
                base_sequence=self.base_sequence,
                transactional=self.transactional,
                compression_level=level,
            )
        return self.payload

    def reset_identity(self) -> None:
        """Forget sequence and producer id (epoch bump): the next drain re-stamps it."""
        self.base_sequence = -1
        self.producer_id = -1
        self.producer_epoch = -1
        self.payload = None

    def complete(self, base_offset: int, log_append_time: int = -1) -> None:
        self.base_offset = base_offset
        self.log_append_time = log_append_time
        self.outcome = (
            self.topic, self.partition, base_offset, log_append_time, self.stamps, self.created_ms
        )  # fmt: skip
        self._finish()

    def fail(self, error: KrafkaError) -> None:
        self.error = error
        self._finish()

    def _finish(self) -> None:
        self.state = BatchState.DONE
        self.done = True
        self._let_go()

    def _let_go(self) -> None:
        """Drop the records and their bytes: nothing sends or splits a finished batch again."""
        builder = self.builder
        if builder is not None:
            self.records = int(builder.count)
            self.builder = None
        self.payload = None

    def split(self) -> tuple[ProducerBatch, ProducerBatch]:
        """Two halves (for MESSAGE_TOO_LARGE); sequences stay contiguous, and the halves'
        orders lie in this batch's `[order, order + span)`, so they sort where it did."""
        records = self.builder.records()
        half = len(records) // 2
        span = self.span / 2
        out: list[ProducerBatch] = []
        each = (self.size - BATCH_OVERHEAD) // max(1, len(records))
        for order, part in ((self.order, slice(0, half)), (self.order + span, slice(half, None))):
            batch = ProducerBatch(self.topic, self.partition, self.created, order, self.created_ms)
            for record in records[part]:
                batch.builder.append(record.timestamp, record.key, record.value, record.headers)
            batch.stamps = None if self.stamps is None else self.stamps[part]
            batch.span = span
            batch.size += each * batch.count
            batch.state = BatchState.RETRY
            batch.attempts = self.attempts
            batch.transactional = self.transactional
            out.append(batch)
        first, second = out
        second.size = self.size - first.size + BATCH_OVERHEAD
        self.halves = (first, second)
        self.state = BatchState.DONE
        self._let_go()
        if self.base_sequence >= 0:
            for piece, seq in ((first, self.base_sequence), (second, self.base_sequence + half)):
                piece.base_sequence = seq
                piece.producer_id = self.producer_id
                piece.producer_epoch = self.producer_epoch
        return first, second
