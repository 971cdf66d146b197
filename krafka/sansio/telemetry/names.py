"""A client's own `metrics()` as KIP-714 metric names.

Java names a telemetry metric `org.apache.kafka.` + its group (without `-metrics`) + its name,
dashes made dots (`producer-metrics` / `record-queue-time-avg` ->
`org.apache.kafka.producer.record.queue.time.avg`). Values krafka keeps under a Java metric's
meaning take that name (Java's unit: latencies and throttle times in milliseconds); the rest
keep krafka's own name under `io.krafka.<client>.`, as KIP-714 allows for non-standard metrics.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import Enum
from typing import Final

from krafka.sansio.telemetry.otlp import MetricKind, MetricSample


class ClientKind(Enum):
    """Which client pushes: the name of its metrics namespace."""

    PRODUCER = "producer"
    CONSUMER = "consumer"
    SHARE_CONSUMER = "share.consumer"
    ADMIN = "admin"


_MS: Final = 1000.0
_G, _C = MetricKind.GAUGE, MetricKind.COUNTER

#: krafka's metric -> (Java's telemetry name after `org.apache.kafka.`, kind, scale).
_JAVA: Final[Mapping[ClientKind, Mapping[str, tuple[str, MetricKind, float]]]] = {
    ClientKind.PRODUCER: {
        "records_sent": ("producer.record.send.total", _C, 1.0),
        "requests_sent": ("producer.request.total", _C, 1.0),
        "retries": ("producer.record.retry.total", _C, 1.0),
        "errors": ("producer.record.error.total", _C, 1.0),
        "batch_size_avg": ("producer.batch.size.avg", _G, 1.0),
        "batch_size_max": ("producer.batch.size.max", _G, 1.0),
        "request_latency_avg": ("producer.request.latency.avg", _G, _MS),
        "request_latency_max": ("producer.request.latency.max", _G, _MS),
        "produce_throttle_time_avg": ("producer.produce.throttle.time.avg", _G, _MS),
        "produce_throttle_time_max": ("producer.produce.throttle.time.max", _G, _MS),
        "record_queue_time_avg": ("producer.record.queue.time.avg", _G, _MS),
        "record_queue_time_max": ("producer.record.queue.time.max", _G, _MS),
    },
    ClientKind.CONSUMER: {
        "records_consumed": ("consumer.fetch.manager.records.consumed.total", _C, 1.0),
        "bytes_consumed": ("consumer.fetch.manager.bytes.consumed.total", _C, 1.0),
        "fetches": ("consumer.fetch.manager.fetch.total", _C, 1.0),
        "fetch_latency_avg": ("consumer.fetch.manager.fetch.latency.avg", _G, _MS),
        "fetch_latency_max": ("consumer.fetch.manager.fetch.latency.max", _G, _MS),
        "fetch_throttle_time_avg": ("consumer.fetch.manager.fetch.throttle.time.avg", _G, _MS),
        "fetch_throttle_time_max": ("consumer.fetch.manager.fetch.throttle.time.max", _G, _MS),
        "lag_max": ("consumer.fetch.manager.records.lag.max", _G, 1.0),
        "poll_idle_ratio_avg": ("consumer.poll.idle.ratio.avg", _G, 1.0),
        "time_between_poll_avg": ("consumer.time.between.poll.avg", _G, _MS),
        "time_between_poll_max": ("consumer.time.between.poll.max", _G, _MS),
    },
    ClientKind.SHARE_CONSUMER: {
        "records_consumed": ("share.consumer.fetch.manager.records.consumed.total", _C, 1.0),
        "bytes_consumed": ("share.consumer.fetch.manager.bytes.consumed.total", _C, 1.0),
        "fetches": ("share.consumer.fetch.manager.fetch.total", _C, 1.0),
        "fetch_latency_avg": ("share.consumer.fetch.manager.fetch.latency.avg", _G, _MS),
        "fetch_latency_max": ("share.consumer.fetch.manager.fetch.latency.max", _G, _MS),
        "time_between_poll_avg": ("share.consumer.time.between.poll.avg", _G, _MS),
        "time_between_poll_max": ("share.consumer.time.between.poll.max", _G, _MS),
    },
    ClientKind.ADMIN: {},
}

#: Counters among krafka's own metrics (the rest are gauges).
_KRAFKA_COUNTERS: Final = frozenset(
    {
        "bytes_sent",
        "batches_sent",
        "duplicate_batches",
        "duplicate_records",
        "raw_batches_consumed",
        "polls",
        "records_fetched",
        "acknowledgements_sent",
        "acknowledgement_errors",
        "acknowledge_requests",
    }
)


def telemetry_samples(kind: ClientKind, metrics: Mapping[str, object]) -> list[MetricSample]:
    """The numeric values of `metrics` (a client's `metrics()` as a mapping) under KIP-714
    names; nested values (per-partition lag, per-type counts) and unknown (None) are left out,
    but for the connection and node metrics, pushed as Java pushes them."""
    java = _JAVA[kind]
    samples = _connection_samples(kind, metrics)
    for key, value in metrics.items():
        if isinstance(value, bool) or not isinstance(value, int | float):
            continue
        if key in java:
            name, metric_kind, scale = java[key]
            samples.append(MetricSample(f"org.apache.kafka.{name}", value * scale, metric_kind))
        else:
            metric_kind = _C if key in _KRAFKA_COUNTERS else _G
            dotted = key.replace("_", ".")
            samples.append(MetricSample(f"io.krafka.{kind.value}.{dotted}", value, metric_kind))
    return samples


def _connection_samples(kind: ClientKind, metrics: Mapping[str, object]) -> list[MetricSample]:
    """Java's connection group (`org.apache.kafka.producer.connection.creation.rate`) and node
    metrics (`org.apache.kafka.producer.node.request.latency.avg`, attribute `node.id`);
    latencies in milliseconds. Throttle times are the client's own metrics already."""
    samples = []
    connection = metrics.get("connection-metrics")
    if isinstance(connection, Mapping):
        prefix = f"org.apache.kafka.{kind.value}."
        samples += [
            _connection_sample(prefix, key, value, ())
            for key, value in connection.items()
            if "latency" not in key  # Java's connection group has none: its nodes have
        ]
    nodes = metrics.get("node-metrics")
    if isinstance(nodes, Mapping):
        prefix = f"org.apache.kafka.{kind.value}.node."
        for node, values in nodes.items():
            node_id = (("node.id", str(node)),)
            samples += [_connection_sample(prefix, k, v, node_id) for k, v in values.items()]
    own = {f"org.apache.kafka.{name}" for name, _, _ in _JAVA[kind].values()}
    return [s for s in samples if "throttle" not in s.name and s.name not in own]


def _connection_sample(
    prefix: str, key: str, value: float, attributes: tuple[tuple[str, str], ...]
) -> MetricSample:
    kind = _C if key.endswith("-total") else _G
    scale = _MS if "latency" in key else 1.0
    return MetricSample(prefix + key.replace("-", "."), value * scale, kind, attributes)


__all__ = ["ClientKind", "telemetry_samples"]
