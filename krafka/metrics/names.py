"""Java's client metric names -> Prometheus metric names (`krafka_` prefix, base units: seconds
and bytes, `_total` for counters), one table for the collector, the example alert rules and
dashboard, and their tests.

Rates are not exported: Prometheus computes them from the counters (`rate(..._total[5m])`).
Per-partition lag (`records-lag`), acknowledgements by type and unset values (a consumer that
never rebalanced has no `last-rebalance-seconds-ago`) are handled by the collector.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from krafka.metrics.registry import ClientKind


class MetricType(Enum):
    COUNTER = "counter"
    GAUGE = "gauge"


@dataclass(frozen=True, slots=True)
class MetricName:
    """One metric: where it comes from (`key` of the client's Java-named metrics) and what it
    is called in Prometheus (`name`, without `_total` for a counter, as prometheus_client
    wants it)."""

    kind: ClientKind
    key: str
    name: str
    type: MetricType
    help: str

    @property
    def exposed(self) -> str:
        """The name a scrape shows."""
        return self.name + "_total" if self.type is MetricType.COUNTER else self.name


_P, _C, _S, _A = (
    ClientKind.PRODUCER,
    ClientKind.CONSUMER,
    ClientKind.SHARE_CONSUMER,
    ClientKind.ADMIN,
)
_N, _G = MetricType.COUNTER, MetricType.GAUGE

METRICS: tuple[MetricName, ...] = (
    MetricName(_P, "record-send-total", "krafka_producer_records_sent", _N, "Records delivered"),
    MetricName(_P, "record-error-total", "krafka_producer_record_errors", _N, "Records failed"),
    MetricName(_P, "record-retry-total", "krafka_producer_batch_retries", _N, "Batches retried"),
    MetricName(_P, "byte-total", "krafka_producer_sent_bytes", _N, "Record batch bytes sent"),
    MetricName(_P, "request-total", "krafka_producer_requests", _N, "Produce requests sent"),
    MetricName(_P, "batch-size-avg", "krafka_producer_batch_size_avg_bytes", _G, "Batch size"),
    MetricName(_P, "batch-size-max", "krafka_producer_batch_size_max_bytes", _G, "Batch size"),
    MetricName(
        _P, "records-per-request-avg", "krafka_producer_batch_records_avg", _G, "Records/batch"
    ),
    MetricName(
        _P,
        "compression-rate-avg",
        "krafka_producer_compression_ratio",
        _G,
        "Compressed over uncompressed batch size",
    ),
    MetricName(
        _P,
        "request-latency-avg",
        "krafka_producer_request_latency_avg_seconds",
        _G,
        "Produce request latency",
    ),
    MetricName(
        _P,
        "request-latency-max",
        "krafka_producer_request_latency_max_seconds",
        _G,
        "Produce request latency",
    ),
    MetricName(
        _P,
        "produce-throttle-time-avg",
        "krafka_producer_throttle_time_avg_seconds",
        _G,
        "Broker throttle of Produce responses",
    ),
    MetricName(
        _P,
        "produce-throttle-time-max",
        "krafka_producer_throttle_time_max_seconds",
        _G,
        "Broker throttle of Produce responses",
    ),
    MetricName(_P, "buffer-total-bytes", "krafka_producer_buffer_total_bytes", _G, "buffer_memory"),
    MetricName(
        _P,
        "buffer-available-bytes",
        "krafka_producer_buffer_available_bytes",
        _G,
        "buffer_memory not taken by queued records",
    ),
    MetricName(
        _C, "records-consumed-total", "krafka_consumer_records_consumed", _N, "Records polled"
    ),
    MetricName(
        _C, "bytes-consumed-total", "krafka_consumer_consumed_bytes", _N, "Batch bytes fetched"
    ),
    MetricName(_C, "fetch-total", "krafka_consumer_fetches", _N, "Fetch responses"),
    MetricName(
        _C, "fetch-latency-avg", "krafka_consumer_fetch_latency_avg_seconds", _G, "Fetch latency"
    ),
    MetricName(
        _C, "fetch-latency-max", "krafka_consumer_fetch_latency_max_seconds", _G, "Fetch latency"
    ),
    MetricName(
        _C,
        "fetch-throttle-time-avg",
        "krafka_consumer_fetch_throttle_time_avg_seconds",
        _G,
        "Broker throttle of Fetch responses",
    ),
    MetricName(
        _C,
        "fetch-throttle-time-max",
        "krafka_consumer_fetch_throttle_time_max_seconds",
        _G,
        "Broker throttle of Fetch responses",
    ),
    MetricName(
        _C,
        "records-lag-max",
        "krafka_consumer_records_lag_max",
        _G,
        "The largest lag of an assigned partition",
    ),
    MetricName(_C, "commit-total", "krafka_consumer_commits", _N, "OffsetCommit requests"),
    MetricName(
        _C, "commit-failed-total", "krafka_consumer_commit_failures", _N, "Commits that failed"
    ),
    MetricName(
        _C,
        "commit-latency-avg",
        "krafka_consumer_commit_latency_avg_seconds",
        _G,
        "OffsetCommit latency",
    ),
    MetricName(
        _C,
        "commit-latency-max",
        "krafka_consumer_commit_latency_max_seconds",
        _G,
        "OffsetCommit latency",
    ),
    MetricName(_C, "rebalance-total", "krafka_consumer_rebalances", _N, "Rebalances completed"),
    MetricName(
        _C,
        "rebalance-latency-total",
        "krafka_consumer_rebalance_latency_seconds",
        _N,
        "Time spent rebalancing",
    ),
    MetricName(
        _C,
        "rebalance-latency-avg",
        "krafka_consumer_rebalance_latency_avg_seconds",
        _G,
        "Rebalance latency",
    ),
    MetricName(
        _C,
        "rebalance-latency-max",
        "krafka_consumer_rebalance_latency_max_seconds",
        _G,
        "Rebalance latency",
    ),
    MetricName(
        _C,
        "last-rebalance-seconds-ago",
        "krafka_consumer_last_rebalance_age_seconds",
        _G,
        "Time since the last rebalance ended",
    ),
    MetricName(
        _C,
        "last-poll-seconds-ago",
        "krafka_consumer_last_poll_age_seconds",
        _G,
        "Time since the last poll",
    ),
    MetricName(
        _C, "assigned-partitions", "krafka_consumer_assigned_partitions", _G, "Partitions owned"
    ),
    MetricName(
        _S,
        "records-consumed-total",
        "krafka_share_consumer_records_consumed",
        _N,
        "Records polled",
    ),
    MetricName(
        _S,
        "bytes-consumed-total",
        "krafka_share_consumer_consumed_bytes",
        _N,
        "Batch bytes fetched",
    ),
    MetricName(_S, "fetch-total", "krafka_share_consumer_fetches", _N, "ShareFetch responses"),
    MetricName(
        _S,
        "fetch-latency-avg",
        "krafka_share_consumer_fetch_latency_avg_seconds",
        _G,
        "ShareFetch latency",
    ),
    MetricName(
        _S,
        "acknowledgements-error-total",
        "krafka_share_consumer_acknowledgement_errors",
        _N,
        "Acknowledgements the broker refused",
    ),
    MetricName(
        _S,
        "redeliveries",
        "krafka_share_consumer_redeliveries",
        _N,
        "Records acquired again (delivery count above 1)",
    ),
    MetricName(
        _S,
        "lock_renewals",
        "krafka_share_consumer_lock_renewals",
        _N,
        "Acquisition locks renewed",
    ),
    MetricName(
        _S,
        "time-between-poll-avg",
        "krafka_share_consumer_poll_interval_avg_seconds",
        _G,
        "Time between polls",
    ),
    MetricName(
        _S,
        "last-poll-seconds-ago",
        "krafka_share_consumer_last_poll_age_seconds",
        _G,
        "Time since the last poll",
    ),
    MetricName(_A, "request-total", "krafka_admin_calls", _N, "Admin calls"),
    MetricName(_A, "request-error-total", "krafka_admin_call_errors", _N, "Admin calls failed"),
    MetricName(
        _A, "request-latency-avg", "krafka_admin_call_latency_avg_seconds", _G, "Call latency"
    ),
    MetricName(
        _A, "request-latency-max", "krafka_admin_call_latency_max_seconds", _G, "Call latency"
    ),
)

#: Per partition (labels topic, partition): the consumer's `records-lag`.
RECORDS_LAG = "krafka_consumer_records_lag"
#: Per acknowledgement type (label type): the share consumer's acknowledgements sent.
ACKNOWLEDGEMENTS = "krafka_share_consumer_acknowledgements"


def exposed_names() -> set[str]:
    """Every metric name a scrape can show (counters with `_total`)."""
    from krafka.metrics.connections import CONNECTION_METRICS

    connections = {m.exposed for m in CONNECTION_METRICS}
    return {m.exposed for m in METRICS} | {RECORDS_LAG, ACKNOWLEDGEMENTS + "_total"} | connections


__all__ = ["ACKNOWLEDGEMENTS", "METRICS", "RECORDS_LAG", "MetricName", "MetricType"]
