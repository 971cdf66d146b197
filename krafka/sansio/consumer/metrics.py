"""Consumer counters (records and bytes consumed, lag, fetch throttling), cheap enough to keep
per poll. `fetch_throttle_time_avg` / `_max` are Java's fetch-throttle-time-avg/max (seconds
here): the KIP-219 throttle of Fetch responses, over every response (0 when not throttled).
`lag` is the total over the assigned partitions (seed 000), `lag_max` the largest,
`lag_by_partition` each one's. `time_between_poll_avg` / `_max` and `poll_idle_ratio_avg` are
Java's consumer metrics of the same names: the time from one wait for records to the next, and
the share of that the wait itself took (near 1: the application keeps up; near 0: processing is
the bottleneck)."""

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
        "idle_ratio_total",
        "idle_ratios",
        "last_poll_start",
        "poll_between_max",
        "poll_between_total",
        "poll_start",
        "polls",
        "polls_timed",
        "records_consumed",
        "since_last_poll",
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
        self.polls_timed = 0
        self.poll_between_total = 0.0
        self.poll_between_max = 0.0
        self.last_poll_start: float | None = None
        self.poll_start = 0.0
        self.since_last_poll = 0.0
        self.idle_ratios = 0
        self.idle_ratio_total = 0.0

    def poll_started(self, now: float) -> None:
        """The application waits for records (a poll) from `now`."""
        last = self.last_poll_start
        self.since_last_poll = 0.0 if last is None else now - last
        if last is not None:
            self.polls_timed += 1
            self.poll_between_total += self.since_last_poll
            self.poll_between_max = max(self.poll_between_max, self.since_last_poll)
        self.last_poll_start = self.poll_start = now

    def poll_ended(self, now: float) -> None:
        """That wait ended at `now`: its share of the time since the previous one (as Java's
        pollTime / (pollTime + timeSinceLastPoll))."""
        spent = now - self.poll_start
        if spent + self.since_last_poll > 0:
            self.idle_ratios += 1
            self.idle_ratio_total += spent / (spent + self.since_last_poll)

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
            "time_between_poll_avg": self.poll_between_total / (self.polls_timed or 1),
            "time_between_poll_max": self.poll_between_max,
            "poll_idle_ratio_avg": self.idle_ratio_total / self.idle_ratios
            if self.idle_ratios
            else 0.0,
            "lag": sum(lags.values()),
            "lag_max": max(lags.values(), default=0),
            "lag_by_partition": dict(lags),
        }


__all__ = ["ConsumerMetrics"]
