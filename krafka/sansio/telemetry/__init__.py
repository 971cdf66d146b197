"""KIP-714 client metrics, sans-IO: the subscription and push machine, the OTLP payload, and the
names a client's own metrics take."""

from krafka.sansio.telemetry.machine import (
    DEFAULT_PUSH_INTERVAL,
    Subscription,
    TelemetryConfig,
    TelemetryMachine,
    TelemetryState,
)
from krafka.sansio.telemetry.names import ClientKind, telemetry_samples
from krafka.sansio.telemetry.otlp import MetricKind, MetricSample, encode_metrics_data

__all__ = [
    "DEFAULT_PUSH_INTERVAL",
    "ClientKind",
    "MetricKind",
    "MetricSample",
    "Subscription",
    "TelemetryConfig",
    "TelemetryMachine",
    "TelemetryState",
    "encode_metrics_data",
    "telemetry_samples",
]
