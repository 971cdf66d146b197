"""Java's connection and node metrics as Prometheus families (`krafka_connection_...`).

Every client kind has them, under one name: labels `client_id`, and `node_id` for a broker's
metrics, `node_id` and `api` (Java's API name, `Produce`) for its requests. Node -1 is a
bootstrap server the metadata did not name yet. Counters carry `_total`, times are seconds,
sizes bytes; rates are left to Prometheus (`rate(krafka_connection_requests_total[5m])`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric

from krafka.metrics.names import MetricType


class Scope(Enum):
    """What one sample of a family describes: the key of the client's metrics it comes from."""

    CLIENT = "connection-metrics"
    NODE = "node-metrics"
    NODE_API = "node-api-metrics"

    @property
    def labels(self) -> tuple[str, ...]:
        return _LABELS[self]


_LABELS = {
    Scope.CLIENT: ("client_id",),
    Scope.NODE: ("client_id", "node_id"),
    Scope.NODE_API: ("client_id", "node_id", "api"),
}


@dataclass(frozen=True, slots=True)
class ConnectionMetricName:
    """One connection metric: its Java name (`key`) in `scope`, its Prometheus `name`."""

    scope: Scope
    key: str
    name: str
    type: MetricType
    help: str

    @property
    def exposed(self) -> str:
        return self.name + "_total" if self.type is MetricType.COUNTER else self.name


_C, _N, _NA = Scope.CLIENT, Scope.NODE, Scope.NODE_API
_T, _G = MetricType.COUNTER, MetricType.GAUGE

CONNECTION_METRICS: tuple[ConnectionMetricName, ...] = (
    ConnectionMetricName(_C, "connection-count", "krafka_connection_count", _G, "Open connections"),
    ConnectionMetricName(
        _C, "connection-creation-total", "krafka_connection_creations", _T, "Connections opened"
    ),
    ConnectionMetricName(
        _C, "connection-close-total", "krafka_connection_closes", _T, "Connections closed"
    ),
    ConnectionMetricName(
        _C,
        "successful-authentication-total",
        "krafka_connection_authentications",
        _T,
        "SASL authentications that succeeded",
    ),
    ConnectionMetricName(
        _C,
        "failed-authentication-total",
        "krafka_connection_authentication_failures",
        _T,
        "SASL authentications refused",
    ),
    ConnectionMetricName(
        _C,
        "successful-reauthentication-total",
        "krafka_connection_reauthentications",
        _T,
        "KIP-368 re-authentications that succeeded",
    ),
    ConnectionMetricName(
        _C,
        "failed-reauthentication-total",
        "krafka_connection_reauthentication_failures",
        _T,
        "KIP-368 re-authentications refused",
    ),
    ConnectionMetricName(
        _C,
        "produce-throttle-time-avg",
        "krafka_connection_produce_throttle_time_avg_seconds",
        _G,
        "Broker quota throttle of Produce answers",
    ),
    ConnectionMetricName(
        _C,
        "produce-throttle-time-max",
        "krafka_connection_produce_throttle_time_max_seconds",
        _G,
        "Broker quota throttle of Produce answers",
    ),
    ConnectionMetricName(
        _C,
        "fetch-throttle-time-avg",
        "krafka_connection_fetch_throttle_time_avg_seconds",
        _G,
        "Broker quota throttle of Fetch answers",
    ),
    ConnectionMetricName(
        _C,
        "fetch-throttle-time-max",
        "krafka_connection_fetch_throttle_time_max_seconds",
        _G,
        "Broker quota throttle of Fetch answers",
    ),
    ConnectionMetricName(
        _N, "incoming-byte-total", "krafka_connection_received_bytes", _T, "Bytes read"
    ),
    ConnectionMetricName(
        _N, "outgoing-byte-total", "krafka_connection_sent_bytes", _T, "Bytes written"
    ),
    ConnectionMetricName(_NA, "request-total", "krafka_connection_requests", _T, "Requests sent"),
    ConnectionMetricName(
        _NA, "response-total", "krafka_connection_responses", _T, "Responses received"
    ),
    ConnectionMetricName(
        _NA,
        "request-failed-total",
        "krafka_connection_request_failures",
        _T,
        "Requests that got no response (timed out, connection lost)",
    ),
    ConnectionMetricName(
        _NA,
        "request-latency-avg",
        "krafka_connection_request_latency_avg_seconds",
        _G,
        "Request latency",
    ),
    ConnectionMetricName(
        _NA,
        "request-latency-max",
        "krafka_connection_request_latency_max_seconds",
        _G,
        "Request latency",
    ),
    ConnectionMetricName(
        _NA,
        "request-size-avg",
        "krafka_connection_request_size_avg_bytes",
        _G,
        "Request size",
    ),
)


def connection_families(
    readings: Iterable[tuple[str, Mapping[str, Any]]],
) -> Iterator[Metric]:
    """The families of `readings`: (client id, the client's metrics) pairs."""
    readings = list(readings)
    for spec in CONNECTION_METRICS:
        family = _family(spec)
        for client_id, values in readings:
            for labels, sample in _samples(spec.scope, client_id, values):
                value = sample.get(spec.key)
                if value is not None:
                    family.add_metric(labels, float(value))
        yield family


def _samples(
    scope: Scope, client_id: str, values: Mapping[str, Any]
) -> Iterator[tuple[list[str], Mapping[str, float]]]:
    found = values.get(scope.value)
    if not found:
        return
    if scope is Scope.CLIENT:
        yield [client_id], found
    elif scope is Scope.NODE:
        for node, sample in found.items():
            yield [client_id, str(node)], sample
    else:
        for (node, api), sample in found.items():
            yield [client_id, str(node), api], sample


def _family(spec: ConnectionMetricName) -> CounterMetricFamily | GaugeMetricFamily:
    labels = spec.scope.labels
    if spec.type is MetricType.COUNTER:
        return CounterMetricFamily(spec.name, spec.help, labels=labels)
    return GaugeMetricFamily(spec.name, spec.help, labels=labels)


__all__ = ["CONNECTION_METRICS", "ConnectionMetricName", "Scope", "connection_families"]
