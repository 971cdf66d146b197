"""Share consumer counters (Java's KafkaShareConsumer metrics, seconds here): records and bytes
consumed, ShareFetch latency and throttling, acknowledgements sent by type and refused,
ShareAcknowledge latency, and the time between polls. Plain numbers updated by the machine as
it goes; `snapshot(now)` gives a plain dict, as `Consumer.metrics()` does, with Java's
share-consumer names too (`records-consumed-rate`, `acknowledgements-send-rate`, ...; rates over
Java's 30-60 s window, `krafka.sansio.rate`). `redeliveries` counts records acquired with a
delivery count above 1, `lock_renewals` the renew acknowledgements (KIP-1222)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

from krafka.sansio.rate import WindowedRate
from krafka.sansio.share.acknowledgements import GAP, AcknowledgeType


def type_name(kind: int) -> str:
    """`accept`, `release`, `reject`, `renew`, or `gap` (offsets the broker sent no record for)."""
    return "gap" if kind == GAP else AcknowledgeType(kind).name.lower()


class _Latency:
    __slots__ = ("count", "max", "total")

    def __init__(self) -> None:
        self.count = 0
        self.total = 0.0
        self.max = 0.0

    def record(self, seconds: float) -> None:
        self.count += 1
        self.total += seconds
        self.max = max(self.max, seconds)

    @property
    def avg(self) -> float:
        return self.total / self.count if self.count else 0.0


class ShareConsumerMetrics:
    """Totals since the share consumer started."""

    __slots__ = (
        "acknowledge_latency",
        "acknowledgement_errors",
        "acknowledgements_rate",
        "acknowledgements_sent",
        "bytes_consumed",
        "bytes_rate",
        "errors_rate",
        "fetch_latency",
        "fetch_throttle",
        "last_poll",
        "now",
        "poll_interval",
        "records_consumed",
        "records_fetched",
        "records_rate",
        "redeliveries",
    )

    def __init__(self) -> None:
        self.records_consumed = 0
        self.records_fetched = 0
        self.bytes_consumed = 0
        self.fetch_latency = _Latency()
        self.fetch_throttle = _Latency()
        self.acknowledge_latency = _Latency()
        self.poll_interval = _Latency()
        self.acknowledgements_sent: Counter[str] = Counter()
        self.acknowledgement_errors = 0
        self.last_poll: float | None = None
        self.redeliveries = 0
        #: The time the machine last saw (polls and ShareFetch answers stamp it).
        self.now = 0.0
        self.records_rate = WindowedRate()
        self.bytes_rate = WindowedRate()
        self.acknowledgements_rate = WindowedRate()
        self.errors_rate = WindowedRate()

    def polled(self, now: float, records: int) -> None:
        if self.last_poll is not None:
            self.poll_interval.record(now - self.last_poll)
        self.now = self.last_poll = now
        self.records_consumed += records
        self.records_rate.record(records, now)

    def fetched(self, records: int, size: int, redelivered: int = 0) -> None:
        """A partition of a ShareFetch answer: records acquired, bytes of its record batches,
        how many of them were delivered before."""
        self.records_fetched += records
        self.bytes_consumed += size
        self.redeliveries += redelivered
        self.bytes_rate.record(size, self.now)

    def fetch_answered(self, latency: float, throttle: float, now: float = 0.0) -> None:
        self.now = now
        self.fetch_latency.record(latency)
        self.fetch_throttle.record(throttle)

    def acknowledge_answered(self, latency: float) -> None:
        self.acknowledge_latency.record(latency)

    def sent(self, kinds: Iterable[int]) -> None:
        """Settlements that went out in a ShareFetch or ShareAcknowledge (one type each)."""
        before = self.acknowledgements_sent.total()
        self.acknowledgements_sent.update(type_name(kind) for kind in kinds)
        self.acknowledgements_rate.record(self.acknowledgements_sent.total() - before, self.now)

    def refused(self, count: int) -> None:
        self.acknowledgement_errors += count
        self.errors_rate.record(count, self.now)

    def snapshot(self, now: float) -> dict[str, Any]:
        by_type = {name: self.acknowledgements_sent[name] for name in _TYPES}
        return {
            "records_consumed": self.records_consumed,
            "records_fetched": self.records_fetched,
            "bytes_consumed": self.bytes_consumed,
            "polls": self.poll_interval.count + (self.last_poll is not None),
            "time_between_poll_avg": self.poll_interval.avg,
            "time_between_poll_max": self.poll_interval.max,
            "last_poll_seconds_ago": None if self.last_poll is None else now - self.last_poll,
            "fetches": self.fetch_latency.count,
            "fetch_latency_avg": self.fetch_latency.avg,
            "fetch_latency_max": self.fetch_latency.max,
            "fetch_throttle_time_avg": self.fetch_throttle.avg,
            "fetch_throttle_time_max": self.fetch_throttle.max,
            "acknowledgements_sent": sum(by_type.values()),
            "acknowledgements_sent_by_type": by_type,
            "acknowledgement_errors": self.acknowledgement_errors,
            "acknowledge_requests": self.acknowledge_latency.count,
            "acknowledge_latency_avg": self.acknowledge_latency.avg,
            "acknowledge_latency_max": self.acknowledge_latency.max,
            "redeliveries": self.redeliveries,
            "lock_renewals": by_type["renew"],
            **self._java(now, by_type),
        }

    def _java(self, now: float, by_type: dict[str, int]) -> dict[str, Any]:
        return {
            "records-consumed-total": self.records_consumed,
            "records-consumed-rate": self.records_rate.rate(now),
            "bytes-consumed-total": self.bytes_consumed,
            "bytes-consumed-rate": self.bytes_rate.rate(now),
            "fetch-total": self.fetch_latency.count,
            "fetch-latency-avg": self.fetch_latency.avg,
            "fetch-latency-max": self.fetch_latency.max,
            "fetch-throttle-time-avg": self.fetch_throttle.avg,
            "fetch-throttle-time-max": self.fetch_throttle.max,
            "acknowledgements-send-total": sum(by_type.values()),
            "acknowledgements-send-rate": self.acknowledgements_rate.rate(now),
            "acknowledgements-error-total": self.acknowledgement_errors,
            "acknowledgements-error-rate": self.errors_rate.rate(now),
            "time-between-poll-avg": self.poll_interval.avg,
            "time-between-poll-max": self.poll_interval.max,
            "last-poll-seconds-ago": None if self.last_poll is None else now - self.last_poll,
        }


_TYPES = ("accept", "release", "reject", "renew", "gap")

__all__ = ["ShareConsumerMetrics", "type_name"]
