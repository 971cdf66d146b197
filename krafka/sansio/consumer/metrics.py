"""Consumer counters (records and bytes consumed, lag), cheap enough to keep per poll."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from krafka.sansio.consumer.record import ConsumerRecord, FetchedBatch
from krafka.structs import TopicPartition


class ConsumerMetrics:
    """Totals since the consumer started; `snapshot` adds the current lag."""

    __slots__ = ("batches_consumed", "bytes_consumed", "polls", "records_consumed")

    def __init__(self) -> None:
        self.records_consumed = 0
        self.bytes_consumed = 0
        self.batches_consumed = 0
        self.polls = 0

    def consumed(self, records: Sequence[ConsumerRecord]) -> None:
        self.polls += 1
        self.records_consumed += len(records)
        size = 0
        for record in records:
            key, value = record[5], record[6]
            if isinstance(key, bytes | bytearray | memoryview):
                size += len(key)
            if isinstance(value, bytes | bytearray | memoryview):
                size += len(value)
        self.bytes_consumed += size

    def consumed_batches(self, batches: Sequence[FetchedBatch]) -> None:
        self.polls += 1
        self.batches_consumed += len(batches)
        self.bytes_consumed += sum(len(b.data) for b in batches)

    def snapshot(self, lags: Mapping[TopicPartition, int]) -> dict[str, Any]:
        return {
            "records_consumed": self.records_consumed,
            "bytes_consumed": self.bytes_consumed,
            "raw_batches_consumed": self.batches_consumed,
            "polls": self.polls,
            "lag": dict(lags),
            "lag_max": max(lags.values(), default=0),
        }


__all__ = ["ConsumerMetrics"]
