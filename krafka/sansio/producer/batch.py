"""A producer batch: the records bound for one partition that travel in one record batch.

Mutable bookkeeping owned by the accumulator and the sender; `seal` encodes it once (with its
producer id, epoch and base sequence) and the same bytes are re-sent on retries, so a retry is
byte-identical and the broker can de-duplicate it.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import Enum
from typing import Any

from krafka.codec import Compression, encode_batch
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
        "created",
        "created_ms",
        "done",
        "error",
        "halves",
        "limit",
        "log_append_time",
        "on_done",
        "order",
        "partition",
        "payload",
        "producer_epoch",
        "producer_id",
        "records",
        "retry_at",
        "size",
        "span",
        "stamped",
        "state",
        "topic",
        "transactional",
        "waiter",
    )

    def __init__(self, topic: str, partition: int, created: float, order: float) -> None:
        self.topic = topic
        self.partition = partition
        self.created = created
        self.created_ms = -1
        self.order = order
        self.span = 1.0
        #: Codec `Record`s (or anything `RecordLike`), in send order.
        self.records: list[Any] = []
        #: Some record has its own timestamp (else every record's is the batch's `created_ms`).
        self.stamped = False
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
        self.payload: bytes | None = None
        self.base_offset = -1
        self.log_append_time = -1
        self.done = False
        self.error: KrafkaError | None = None
        self.halves: tuple[ProducerBatch, ProducerBatch] | None = None
        self.on_done: Callable[[ProducerBatch], None] | None = None
        self.waiter: object = None

    def __repr__(self) -> str:
        return (
            f"<ProducerBatch {self.topic}-{self.partition} #{self.order} "
            f"{len(self.records)} records {self.state.name} seq={self.base_sequence}>"
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
        return len(self.records)

    def add(self, record: Any, size: int) -> int:
        """Append `record` of (estimated) `size` bytes; returns its index in the batch."""
        self.records.append(record)
        self.size += size
        if record.timestamp is not None:
            self.stamped = True
        return len(self.records) - 1

    def encode(
        self, compression: Compression, level: int | None = None, now_ms: int | None = None
    ) -> bytes:
        """The record batch bytes (cached: retries resend the very same bytes)."""
        if self.payload is None:
            self.payload = encode_batch(
                self.records,
                compression,
                0,
                self.producer_id,
                self.producer_epoch,
                self.base_sequence,
                self.transactional,
                compression_level=level,
                now_ms=now_ms if self.created_ms < 0 else self.created_ms,
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
        self._finish()

    def fail(self, error: KrafkaError) -> None:
        self.error = error
        self._finish()

    def _finish(self) -> None:
        self.state = BatchState.DONE
        self.done = True
        callback = self.on_done
        if callback is not None:
            callback(self)

    def split(self) -> tuple[ProducerBatch, ProducerBatch]:
        """Two halves (for MESSAGE_TOO_LARGE); sequences stay contiguous, and the halves'
        orders lie in this batch's `[order, order + span)`, so they sort where it did."""
        half = len(self.records) // 2
        parts = (self.records[:half], self.records[half:])
        span = self.span / 2
        out: list[ProducerBatch] = []
        each = (self.size - BATCH_OVERHEAD) // max(1, len(self.records))
        for order, recs in zip((self.order, self.order + span), parts, strict=True):
            batch = ProducerBatch(self.topic, self.partition, self.created, order)
            batch.created_ms = self.created_ms
            batch.span = span
            batch.records = recs
            batch.stamped = self.stamped
            batch.size += each * len(recs)
            batch.state = BatchState.RETRY
            batch.attempts = self.attempts
            batch.on_done = self.on_done
            batch.transactional = self.transactional
            out.append(batch)
        first, second = out
        second.size = self.size - first.size + BATCH_OVERHEAD
        self.halves = (first, second)
        self.state = BatchState.DONE
        if self.on_done is not None:
            self.on_done(self)  # wakes waiters: their records now belong to the halves
        if self.base_sequence >= 0:
            for part, seq in ((first, self.base_sequence), (second, self.base_sequence + half)):
                part.base_sequence = seq
                part.producer_id = self.producer_id
                part.producer_epoch = self.producer_epoch
        return first, second
