"""Consumer counters (records and bytes consumed, lag, fetch throttling), cheap enough to keep
per poll. `fetch_throttle_time_avg` / `_max` are Java's fetch-throttle-time-avg/max (seconds
here): the KIP-219 throttle of Fetch responses, over every response (0 when not throttled).
`lag` is the total over the assigned partitions (seed 000), `lag_max` the largest,
`lag_by_partition` each one's."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from krafka.sansio.consumer.record import ConsumerRecord, FetchedBatch
from krafka.structs import TopicPartition


class ConsumerMetrics:
    """Totals since the consumer started; `snapshot` adds the current lag (total, max and per
    partition)."""

    __slots__ = (
        "batches_consumed",
        "bytes_consumed",
        "fetch_latency_max",
        "fetch_latency_total",
        "fetch_throttle_max",
        "fetch_throttle_total",
        "fetches",
        "polls",
        "records_consumed",
    )

    def __init__(self) -> None:
        self.fetches = 0
        self.fetch_latency_total = 0.0
        self.fetch_latency_max = 0.0
        self.fetch_throttle_total = 0.0
        self.fetch_throttle_max = 0.0
        self.records_consumed = 0
        self.bytes_consumed = 0
        self.batches_consumed = 0
        self.polls = 0

    def consumed(self, records: Sequence[ConsumerRecord]) -> None:
        self.polls += 1
        self.records_consumed += len(records)

    def fetch_answered(self, latency: float, throttle: float = 0.0) -> None:
        self.fetches += 1
        self.fetch_latency_total += latency
        self.fetch_latency_max = max(self.fetch_latency_max, latency)
        self.fetch_throttle_total += throttle
        self.fetch_throttle_max = max(self.fetch_throttle_max, throttle)

    def fetched(self, size: int) -> None:
        """Bytes of record batches fetched (as Java's bytes-consumed: batch bytes, not only
        keys and values)."""
        self.bytes_consumed += size

    def consumed_batches(self, batches: Sequence[FetchedBatch]) -> None:
        self.polls += 1
        self.batches_consumed += len(batches)

    def snapshot(self, lags: Mapping[TopicPartition, int]) -> dict[str, Any]:
        return {
            "records_consumed": self.records_consumed,
            "bytes_consumed": self.bytes_consumed,
            "raw_batches_consumed": self.batches_consumed,
            "polls": self.polls,
            "fetches": self.fetches,
            "fetch_latency_avg": self.fetch_latency_total / self.fetches if self.fetches else 0.0,
            "fetch_latency_max": self.fetch_latency_max,
            "fetch_throttle_time_avg": self.fetch_throttle_total / self.fetches
            if self.fetches
            else 0.0,
            "fetch_throttle_time_max": self.fetch_throttle_max,
            "lag": sum(lags.values()),
            "lag_max": max(lags.values(), default=0),
            "lag_by_partition": dict(lags),
        }


__all__ = ["ConsumerMetrics"]
