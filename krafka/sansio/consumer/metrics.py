"""Consumer counters (records and bytes consumed, lag, fetch throttling, commits, rebalances),
cheap enough to keep per poll. `fetch_throttle_time_avg` / `_max` are Java's
fetch-throttle-time-avg/max (seconds here): the KIP-219 throttle of Fetch responses, over every
response (0 when not throttled). `lag` is the total over the assigned partitions (seed 000),
`lag_max` the largest, `lag_by_partition` each one's.

`snapshot` also answers Java's consumer-fetch-manager and consumer-coordinator names
(`records-consumed-rate`, `records-lag-max`, `records-lag` per partition, `commit-latency-avg`,
`rebalance-total`, `last-rebalance-seconds-ago`, `assigned-partitions`, ...; seconds, not
milliseconds): rates over Java's 30-60 s window (`krafka.sansio.rate`), averages since the
start. A rebalance is timed from the first JoinGroup of a classic member (or the revocation
that opens it) to the assignment that ends it; a KIP-848 assignment that arrives in one
heartbeat takes no time here.

`time_between_poll_avg` / `_max` and `poll_idle_ratio_avg` are Java's consumer metrics of the
same names: the time from one wait for records to the next, and the share of that the wait
itself took (near 1: the application keeps up; near 0: processing is the bottleneck).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any

from krafka.sansio.consumer.record import ConsumerRecord, FetchedBatch
from krafka.sansio.rate import WindowedRate
from krafka.structs import TopicPartition


class _Timing:
    __slots__ = ("count", "max", "total")

    def __init__(self) -> None:
        self.count = 0
        self.total = 0.0
        self.max = 0.0

    def record(self, seconds: float) -> None:
        self.count += 1
        self.total += seconds
        if seconds > self.max:
            self.max = seconds

    @property
    def avg(self) -> float:
        return self.total / self.count if self.count else 0.0


class ConsumerMetrics:
    """Totals since the consumer started; `snapshot` adds the current lag (total, max and per
    partition)."""

    __slots__ = (
        "batches_consumed",
        "bytes_consumed",
        "bytes_rate",
        "commit",
        "commit_failures",
        "fetch_latency_max",
        "fetch_latency_total",
        "fetch_rate",
        "fetch_throttle_max",
        "fetch_throttle_total",
        "fetches",
        "idle_ratio_total",
        "idle_ratios",
        "last_poll",
        "last_poll_start",
        "last_rebalance",
        "now",
        "poll_between_max",
        "poll_between_total",
        "poll_start",
        "polls",
        "polls_timed",
        "rebalance",
        "rebalance_started",
        "records_consumed",
        "records_rate",
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
        #: The time the consumer last saw (polls and fetch responses stamp it).
        self.now = 0.0
        self.last_poll: float | None = None
        self.records_rate = WindowedRate()
        self.bytes_rate = WindowedRate()
        self.fetch_rate = WindowedRate()
        self.commit = _Timing()
        self.commit_failures = 0
        self.rebalance = _Timing()
        self.rebalance_started: float | None = None
        self.last_rebalance: float | None = None
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

    def consumed(self, records: Sequence[ConsumerRecord], now: float = 0.0) -> None:
        self.polls += 1
        self.records_consumed += len(records)
        self.records_rate.record(len(records), now)

    def polled(self, now: float) -> None:
        self.now = self.last_poll = now

    def fetch_answered(self, latency: float, throttle: float = 0.0, now: float = 0.0) -> None:
        self.now = now
        self.fetches += 1
        self.fetch_rate.record(1, now)
        self.fetch_latency_total += latency
        self.fetch_latency_max = max(self.fetch_latency_max, latency)
        self.fetch_throttle_total += throttle
        self.fetch_throttle_max = max(self.fetch_throttle_max, throttle)

    def fetched(self, size: int) -> None:
        """Bytes of record batches fetched (as Java's bytes-consumed: batch bytes, not only
        keys and values)."""
        self.bytes_consumed += size
        self.bytes_rate.record(size, self.now)

    def consumed_batches(self, batches: Sequence[FetchedBatch], now: float = 0.0) -> None:
        self.polls += 1
        self.batches_consumed += len(batches)
        self.records_rate.record(sum(b.next_offset - b.start for b in batches), now)

    def committed(self, latency: float, failed: bool) -> None:
        """An OffsetCommit answered (or failed) `latency` seconds after it went out."""
        self.commit.record(latency)
        self.commit_failures += failed

    def rebalance_begun(self, now: float) -> None:
        if self.rebalance_started is None:
            self.rebalance_started = now

    def rebalance_ended(self, now: float) -> None:
        """An assignment arrived: the rebalance that started (or this instant) is over."""
        started = now if self.rebalance_started is None else self.rebalance_started
        self.rebalance.record(now - started)
        self.rebalance_started = None
        self.last_rebalance = now

    def snapshot(
        self,
        lags: Mapping[TopicPartition, int],
        now: float | None = None,
        assigned: Collection[TopicPartition] = (),
    ) -> dict[str, Any]:
        at = self.now if now is None else now
        lag_max = max(lags.values(), default=0)
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
            "lag_max": lag_max,
            "lag_by_partition": dict(lags),
            **self._java(at, lags, lag_max, assigned),
        }

    def _java(
        self,
        now: float,
        lags: Mapping[TopicPartition, int],
        lag_max: int,
        assigned: Collection[TopicPartition],
    ) -> dict[str, Any]:
        commit, rebalance = self.commit, self.rebalance
        last_rebalance = self.last_rebalance
        last_poll = self.last_poll
        return {
            "records-consumed-total": self.records_consumed,
            "records-consumed-rate": self.records_rate.rate(now),
            "bytes-consumed-total": self.bytes_consumed,
            "bytes-consumed-rate": self.bytes_rate.rate(now),
            "fetch-total": self.fetches,
            "fetch-rate": self.fetch_rate.rate(now),
            "fetch-latency-avg": self.fetch_latency_total / self.fetches if self.fetches else 0.0,
            "fetch-latency-max": self.fetch_latency_max,
            "fetch-throttle-time-avg": self.fetch_throttle_total / self.fetches
            if self.fetches
            else 0.0,
            "fetch-throttle-time-max": self.fetch_throttle_max,
            "records-lag-max": lag_max,
            "records-lag": dict(lags),
            "commit-total": commit.count,
            "commit-failed-total": self.commit_failures,
            "commit-latency-avg": commit.avg,
            "commit-latency-max": commit.max,
            "rebalance-total": rebalance.count,
            "rebalance-latency-avg": rebalance.avg,
            "rebalance-latency-max": rebalance.max,
            "rebalance-latency-total": rebalance.total,
            "last-rebalance-seconds-ago": None
            if last_rebalance is None
            else max(now - last_rebalance, 0.0),
            "last-poll-seconds-ago": None if last_poll is None else max(now - last_poll, 0.0),
            "assigned-partitions": len(assigned),
        }


__all__ = ["ConsumerMetrics"]
