"""OpenTelemetry `MetricsData` (opentelemetry/proto/metrics/v1/metrics.proto) as protobuf bytes:
the payload KIP-714's PushTelemetry carries. Only what a client's own metrics need is written:
a resource with string attributes, one scope, gauges and monotonic sums of doubles."""

from __future__ import annotations

import struct
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum, IntEnum

_VARINT, _FIXED64, _LENGTH = 0, 1, 2


class MetricKind(Enum):
    """A point-in-time value (Gauge) or a monotonically growing total (Sum)."""

    GAUGE = "gauge"
    COUNTER = "counter"


class Temporality(IntEnum):
    """OTLP AggregationTemporality of a Sum."""

    DELTA = 1
    CUMULATIVE = 2


@dataclass(frozen=True, slots=True)
class MetricSample:
    """One metric's value now, named as KIP-714 wants it (`org.apache.kafka.producer...`)."""

    name: str
    value: float
    kind: MetricKind = MetricKind.GAUGE
    #: The data point's attributes (`(("node.id", "1"),)` for a broker's node metrics).
    attributes: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class Point:
    """A sample as encoded: its value and the interval it covers (Unix nanoseconds)."""

    sample: MetricSample
    start_ns: int
    time_ns: int


def encode_metrics_data(
    points: Sequence[Point],
    resource: Mapping[str, str],
    temporality: Temporality,
    scope: str = "krafka",
) -> bytes:
    """MetricsData { resource_metrics: [ResourceMetrics { resource, scope_metrics: [...] }] }."""
    metrics = b"".join(_field(2, _metric(p, temporality)) for p in points)
    scope_metrics = _field(1, _field(1, scope.encode())) + metrics
    resource_bytes = b"".join(_field(1, _key_value(k, v)) for k, v in resource.items())
    resource_metrics = _field(1, resource_bytes) + _field(2, scope_metrics)
    return _field(1, resource_metrics)


def _metric(point: Point, temporality: Temporality) -> bytes:
    name = _field(1, point.sample.name.encode())
    data_point = _number_point(point)
    if point.sample.kind is MetricKind.GAUGE:
        return name + _field(5, _field(1, data_point))
    body = _field(1, data_point) + _varint_field(2, temporality) + _varint_field(3, 1)
    return name + _field(7, body)


def _number_point(point: Point) -> bytes:
    return (
        _fixed64_field(2, struct.pack("<Q", point.start_ns))
        + _fixed64_field(3, struct.pack("<Q", point.time_ns))
        + _fixed64_field(4, struct.pack("<d", float(point.sample.value)))
        + b"".join(_field(7, _key_value(k, v)) for k, v in point.sample.attributes)
    )


def _key_value(key: str, value: str) -> bytes:
    return _field(1, key.encode()) + _field(2, _field(1, value.encode()))


def _field(number: int, payload: bytes) -> bytes:
    return _varint((number << 3) | _LENGTH) + _varint(len(payload)) + payload


def _varint_field(number: int, value: int) -> bytes:
    return _varint((number << 3) | _VARINT) + _varint(value)


def _fixed64_field(number: int, payload: bytes) -> bytes:
    return _varint((number << 3) | _FIXED64) + payload


def _varint(value: int) -> bytes:
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def selected(samples: Iterable[MetricSample], prefixes: Sequence[str]) -> list[MetricSample]:
    """The samples a subscription asks for: names starting with one of `prefixes` ("" is all)."""
    wanted = tuple(prefixes)
    return [s for s in samples if s.name.startswith(wanted)]


__all__ = [
    "MetricKind",
    "MetricSample",
    "Point",
    "Temporality",
    "encode_metrics_data",
    "selected",
]
