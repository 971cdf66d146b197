"""Exporting krafka's client metrics.

Every client's `metrics()` holds Java's client metric names (computed in the sans-IO engines);
this package reports them to monitoring systems:

* `PrometheusCollector` (`krafka.metrics.prometheus`, needs `prometheus_client`): every live
  client, `prometheus_client.REGISTRY.register(krafka.metrics.PrometheusCollector())`.
* `krafka.metrics.otel`: OpenTelemetry's messaging metrics when a meter provider is set.
* `krafka.metrics.registry`: the weak registry of live clients both read.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from krafka.metrics.prometheus import PrometheusCollector


def __getattr__(name: str) -> Any:
    if name == "PrometheusCollector":
        from krafka.metrics.prometheus import PrometheusCollector

        return PrometheusCollector
    raise AttributeError(name)


__all__ = ["PrometheusCollector"]
