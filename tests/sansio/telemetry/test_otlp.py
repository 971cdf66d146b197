"""The OTLP MetricsData encoder, read back with a minimal protobuf reader (the live test has
Apache Kafka's own OTLP classes parse it)."""

from __future__ import annotations

import struct

from _protobuf import read_message as _read

from krafka.sansio.telemetry import ClientKind, MetricKind, MetricSample, telemetry_samples
from krafka.sansio.telemetry.otlp import Point, Temporality, encode_metrics_data, selected


def test_metrics_data_carries_the_resource_and_each_metric() -> None:
    points = [
        Point(MetricSample("a.gauge", 1.5), 10, 10),
        Point(MetricSample("a.total", 7, MetricKind.COUNTER), 5, 20),
    ]
    data = encode_metrics_data(points, {"client_id": "me"}, Temporality.DELTA)
    (resource_metrics,) = _read(data)[1]
    rm = _read(resource_metrics)
    attribute = _read(_read(rm[1][0])[1][0])
    assert attribute[1] == [b"client_id"] and _read(attribute[2][0])[1] == [b"me"]
    scope_metrics = _read(rm[2][0])
    assert _read(scope_metrics[1][0])[1] == [b"krafka"]
    gauge, counter = (_read(m) for m in scope_metrics[2])
    assert gauge[1] == [b"a.gauge"] and 7 not in gauge
    point = _read(_read(gauge[5][0])[1][0])
    assert struct.unpack("<d", point[4][0]) == (1.5,)
    assert struct.unpack("<Q", point[3][0]) == (10,)
    total = _read(counter[7][0])
    assert total[2] == [Temporality.DELTA] and total[3] == [1]  # monotonic
    point = _read(total[1][0])
    assert struct.unpack("<Q", point[2][0]) == (5,) and struct.unpack("<Q", point[3][0]) == (20,)
    assert struct.unpack("<d", point[4][0]) == (7.0,)


def test_a_subscription_selects_by_prefix_and_the_empty_prefix_is_everything() -> None:
    samples = [MetricSample("org.apache.kafka.producer.x", 1), MetricSample("io.krafka.y", 2)]
    assert selected(samples, ["org.apache.kafka."]) == samples[:1]
    assert selected(samples, [""]) == samples
    assert selected(samples, []) == []


def test_client_metrics_take_javas_names_and_units() -> None:
    metrics = {"records_sent": 3, "request_latency_avg": 0.25, "bytes_sent": 10, "lag": {}}
    samples = {s.name: s for s in telemetry_samples(ClientKind.PRODUCER, metrics)}
    assert samples["org.apache.kafka.producer.record.send.total"].kind is MetricKind.COUNTER
    assert samples["org.apache.kafka.producer.request.latency.avg"].value == 250.0  # ms
    assert samples["io.krafka.producer.bytes.sent"].kind is MetricKind.COUNTER
    assert len(samples) == 3  # the nested lag map is not a metric


def test_connection_and_node_metrics_are_pushed_under_javas_names() -> None:
    metrics = {
        "requests_sent": 4,
        "connection-metrics": {
            "connection-creation-total": 2.0,
            "connection-creation-rate": 0.5,
            "request-total": 9.0,
            "request-latency-avg": 0.1,
            "produce-throttle-time-max": 0.0,
        },
        "node-metrics": {1: {"request-latency-avg": 0.02, "request-total": 3.0}},
    }
    samples = {(s.name, s.attributes): s for s in telemetry_samples(ClientKind.PRODUCER, metrics)}
    creation = samples["org.apache.kafka.producer.connection.creation.total", ()]
    assert creation.kind is MetricKind.COUNTER and creation.value == 2
    assert samples["org.apache.kafka.producer.connection.creation.rate", ()].value == 0.5
    node = (("node.id", "1"),)
    latency = samples["org.apache.kafka.producer.node.request.latency.avg", node]
    assert latency.kind is MetricKind.GAUGE and latency.value == 20.0  # ms
    assert samples["org.apache.kafka.producer.node.request.total", node].kind is MetricKind.COUNTER
    assert samples["org.apache.kafka.producer.request.total", ()].value == 4  # the producer's own
    names = {name for name, _ in samples}
    assert not [name for name in names if "throttle" in name]
    assert "org.apache.kafka.producer.request.latency.avg" not in names  # nodes have latency


def test_a_data_point_carries_its_attributes() -> None:
    sample = MetricSample("n.latency", 2.0, MetricKind.GAUGE, (("node.id", "3"),))
    data = encode_metrics_data([Point(sample, 1, 1)], {}, Temporality.CUMULATIVE)
    (resource_metrics,) = _read(data)[1]
    gauge = _read(_read(_read(resource_metrics)[2][0])[2][0])
    point = _read(_read(gauge[5][0])[1][0])
    attribute = _read(point[7][0])
    assert attribute[1] == [b"node.id"] and _read(attribute[2][0])[1] == [b"3"]
