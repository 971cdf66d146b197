"""Share consumer counters (Java's KafkaShareConsumer metrics, seconds here): records and bytes
consumed, ShareFetch latency and throttling, acknowledgements sent by type and refused,
ShareAcknowledge latency, and the time between polls. Plain numbers updated by the machine as
it goes; `snapshot(now)` gives a plain dict, as `Consumer.metrics()` does."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

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
        "acknowledgements_sent",
        "bytes_consumed",
        "fetch_latency",
        "fetch_throttle",
        "last_poll",
        "poll_interval",
        "records_consumed",
        "records_fetched",
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

    def polled(self, now: float, records: int) -> None:
        if self.last_poll is not None:
            self.poll_interval.record(now - self.last_poll)
        self.last_poll = now
        self.records_consumed += records

    def fetched(self, records: int, size: int) -> None:
        """A partition of a ShareFetch answer: records acquired, bytes of its record batches."""
        self.records_fetched += records
        self.bytes_consumed += size

    def fetch_answered(self, latency: float, throttle: float) -> None:
        self.fetch_latency.record(latency)
        self.fetch_throttle.record(throttle)

    def acknowledge_answered(self, latency: float) -> None:
        self.acknowledge_latency.record(latency)

    def sent(self, kinds: Iterable[int]) -> None:
        """Settlements that went out in a ShareFetch or ShareAcknowledge (one type each)."""
        self.acknowledgements_sent.update(type_name(kind) for kind in kinds)

    def refused(self, count: int) -> None:
        self.acknowledgement_errors += count

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
        }


_TYPES = ("accept", "release", "reject", "renew", "gap")

__all__ = ["ShareConsumerMetrics", "type_name"]
