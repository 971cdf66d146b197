"""OpenTelemetry messaging metrics of a producer, a consumer and a share consumer of Apache
Kafka, read with the SDK's InMemoryMetricReader; none without a meter provider."""

from __future__ import annotations

import time
from typing import Any

import anyio
import pytest
from opentelemetry import metrics
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader

from krafka import AdminClient, Consumer, NewTopic, Producer, ShareConsumer
from krafka.metrics.otel import messaging_metrics
from krafka.sansio.admin.configs import ConfigResource

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(90)]

Points = dict[str, list[tuple[dict[str, Any], Any]]]


def points(reader: InMemoryMetricReader) -> Points:
    data = reader.get_metrics_data()
    found: Points = {}
    assert data is not None
    for resource in data.resource_metrics:
        for scope in resource.scope_metrics:
            assert scope.scope.name == "krafka"
            for metric in scope.metrics:
                found[metric.name] = [
                    (dict(p.attributes or {}), p) for p in metric.data.data_points
                ]
    return found


def total(found: Points, name: str, **attributes: Any) -> float:
    wanted = {k.replace("_", "."): v for k, v in attributes.items()}
    return sum(
        p.value if hasattr(p, "value") else p.count
        for attrs, p in found.get(name, [])
        if wanted.items() <= attrs.items()
    )


async def poll_until(consumer: Any, count: int) -> int:
    got = 0
    with anyio.fail_after(30):
        while got < count:
            got += len(await consumer.poll(timeout=0.2))
    return got


async def test_messaging_metrics_of_every_client(kafka: Any) -> None:
    reader = InMemoryMetricReader()
    provider = MeterProvider(metric_readers=[reader])
    stamp = time.time_ns()
    topic, group, share_group = f"otel-{stamp}", f"otel-g-{stamp}", f"otel-sg-{stamp}"
    servers = kafka.bootstrap_servers
    async with AdminClient(servers) as admin:
        (await admin.create_topics([NewTopic(topic, 2)])).raise_for_errors()
        configs = {"share.auto.offset.reset": "earliest"}
        (await admin.alter_configs({ConfigResource.group(share_group): configs})).raise_for_errors()
    async with Producer(servers, meter_provider=provider) as producer:
        for i in range(10):
            await producer.send(topic, b"%d" % i, partition=i % 2)
        await producer.flush()
    async with Consumer(
        servers, group_id=group, auto_offset_reset="earliest", fetch_max_wait=0.1,
        meter_provider=provider,
    ) as consumer:  # fmt: skip
        await consumer.subscribe([topic])
        consumed = await poll_until(consumer, 10)
        await consumer.poll(timeout=0)  # the processing of the last records ends
        await consumer.commit()
    async with ShareConsumer(
        servers, group_id=share_group, fetch_max_wait=0.1, meter_provider=provider
    ) as share:
        await share.subscribe([topic])
        shared = await poll_until(share, 1)
        await share.commit_sync()

    found = points(reader)
    sent = "messaging.client.sent.messages"
    assert total(found, sent, messaging_destination_name=topic) == 10
    assert total(found, sent, messaging_destination_partition_id="1") == 5
    assert all(attrs["messaging.system"] == "kafka" for attrs, _ in found[sent])
    duration = "messaging.client.operation.duration"
    assert total(found, duration, messaging_operation_name="send") == 2  # a batch a partition
    consumed_name = "messaging.client.consumed.messages"
    assert total(found, consumed_name, messaging_consumer_group_name=group) == consumed == 10
    assert total(found, consumed_name, messaging_consumer_group_name=share_group) == shared
    assert total(found, duration, messaging_operation_name="poll") >= 2
    assert total(found, duration, messaging_operation_name="commit") == 1
    assert total(found, duration, messaging_operation_name="acknowledge") == 1
    assert total(found, "messaging.process.duration", messaging_consumer_group_name=group) >= 1


def test_no_meter_provider_no_instruments(monkeypatch: pytest.MonkeyPatch) -> None:
    assert messaging_metrics(None) is None  # the API's placeholder: nothing set
    monkeypatch.setattr(metrics, "get_meter_provider", lambda: MeterProvider())
    assert messaging_metrics(None) is not None  # a global provider set
