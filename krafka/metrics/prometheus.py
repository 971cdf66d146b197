"""`PrometheusCollector`: every live krafka client's metrics for `prometheus_client`.

    prometheus_client.REGISTRY.register(krafka.metrics.PrometheusCollector())

Each scrape reads the clients alive then (`krafka.metrics.registry`) through their `metrics()`
(callable from the HTTP server's thread) and names the values as `krafka.metrics.names` says.
Labels: `client_id`, `group` (consumers), and `topic` / `partition` for per-partition lag,
`type` for a share consumer's acknowledgements; the connection metrics of every client
(`krafka_connection_...`, `krafka.metrics.connections`) add `node_id` and `api`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from krafka.metrics.connections import connection_families
from krafka.metrics.names import ACKNOWLEDGEMENTS, METRICS, RECORDS_LAG, MetricName, MetricType
from krafka.metrics.registry import ClientEntry, ClientKind, live

_LABELS = ("client_id", "group")


class PrometheusCollector(Collector):
    """A `prometheus_client` collector of every live krafka client."""

    def collect(self) -> Iterator[Metric]:
        readings = [(entry, _read(client, entry)) for client, entry in live()]
        for spec in METRICS:
            family = _family(spec)
            for entry, values in readings:
                value = values.get(spec.key) if entry.kind is spec.kind else None
                if value is not None:
                    family.add_metric(_labels(entry), float(value))
            yield family
        yield _lag(readings)
        yield _acknowledgements(readings)
        yield from connection_families((entry.client_id, values) for entry, values in readings)

    def describe(self) -> Iterator[Metric]:
        for spec in METRICS:
            yield _family(spec)
        yield _lag([])
        yield _acknowledgements([])
        yield from connection_families([])


def _read(client: Any, entry: ClientEntry) -> Mapping[str, Any]:
    for _ in range(3):  # the loop thread may change a dict while this thread copies it
        try:
            return entry.read(client)
        except RuntimeError:
            continue
    return {}


def _labels(entry: ClientEntry) -> list[str]:
    return [entry.client_id, entry.group or ""]


def _family(spec: MetricName) -> CounterMetricFamily | GaugeMetricFamily:
    if spec.type is MetricType.COUNTER:
        return CounterMetricFamily(spec.name, spec.help, labels=_LABELS)
    return GaugeMetricFamily(spec.name, spec.help, labels=_LABELS)


def _lag(readings: list[tuple[ClientEntry, Mapping[str, Any]]]) -> GaugeMetricFamily:
    family = GaugeMetricFamily(
        RECORDS_LAG, "Records behind the partition's end", labels=(*_LABELS, "topic", "partition")
    )
    for entry, values in readings:
        if entry.kind is ClientKind.CONSUMER:
            for (topic, partition), lag in values.get("records-lag", {}).items():
                family.add_metric([*_labels(entry), topic, str(partition)], float(lag))
    return family


def _acknowledgements(readings: list[tuple[ClientEntry, Mapping[str, Any]]]) -> Metric:
    family = CounterMetricFamily(
        ACKNOWLEDGEMENTS, "Acknowledgements sent, by type", labels=(*_LABELS, "type")
    )
    for entry, values in readings:
        if entry.kind is ClientKind.SHARE_CONSUMER:
            for kind, count in values.get("acknowledgements_sent_by_type", {}).items():
                family.add_metric([*_labels(entry), kind], float(count))
    return family


__all__ = ["PrometheusCollector"]
