"""KIP-714 client metrics on Apache Kafka 4.4: a broker metrics reporter of the test's own
(`krafka/testing/java/TelemetryRecorder.java`, a `ClientTelemetryExporterProvider`) writes every
push it receives to a file; client-metrics subscriptions are made with IncrementalAlterConfigs
on CLIENT_METRICS resources, matching the test's client ids."""

from __future__ import annotations

import base64
import itertools
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest

import krafka.sync
from krafka import AdminClient, ConfigResource, Consumer, Producer, ShareConsumer, TopicPartition
from krafka.errors import IllegalStateError
from krafka.sansio.admin.configs import ConfigResourceType
from krafka.testing.kafka import KafkaCluster
from krafka.testing.runtime import compile_java

pytestmark = [pytest.mark.anyio, pytest.mark.broker, pytest.mark.timeout(120)]

RECORDER = Path(__file__).parents[2] / "krafka" / "testing" / "java" / "TelemetryRecorder.java"
_IDS = itertools.count()


@dataclass(frozen=True)
class Push:
    instance_id: uuid.UUID
    terminating: bool
    client_id: str
    metrics: dict[str, float]


@dataclass
class TelemetryCluster:
    cluster: KafkaCluster
    file: Path

    @property
    def bootstrap(self) -> str:
        return self.cluster.bootstrap_servers

    def pushes(self) -> list[Push]:
        if not self.file.exists():
            return []
        pushes = []
        for line in self.file.read_text().splitlines():
            instance, terminating, _, client_id, *points = line.split("\t")
            metrics = dict(point.rsplit("=", 1) for point in points)
            values = {name: float(value) for name, value in metrics.items()}
            pushes.append(Push(_kafka_uuid(instance), terminating == "true", client_id, values))
        return pushes

    def total(self, instance_id: uuid.UUID | None, counter: str) -> float:
        """A counter over every push (the broker asks for delta temporality by default)."""
        return sum(p.metrics.get(counter, 0.0) for p in self.pushes_of(instance_id))

    def pushes_of(self, instance_id: uuid.UUID | None) -> list[Push]:
        return [p for p in self.pushes() if p.instance_id == instance_id]

    async def subscribe(self, name: str, client_ids: str, metrics: str) -> None:
        """A client-metrics subscription (1 s interval) for clients whose id matches."""
        resource = ConfigResource(ConfigResourceType.CLIENT_METRICS, name)
        wanted = {"metrics": metrics, "interval.ms": "1000", "match": f"client_id={client_ids}"}
        async with AdminClient(self.bootstrap, enable_metrics_push=False) as admin:
            (await admin.alter_configs({resource: wanted})).raise_for_errors()
            with anyio.fail_after(15):
                while "metrics" not in (await _described(admin, resource)):
                    await anyio.sleep(0.1)
        await anyio.sleep(0.5)  # the brokers' client-metrics manager hears of it


def _kafka_uuid(text: str) -> uuid.UUID:
    """Kafka's `Uuid.toString()`: the 16 bytes in base64url without padding."""
    return uuid.UUID(bytes=base64.urlsafe_b64decode(text + "=="))


async def _described(admin: AdminClient, resource: ConfigResource) -> dict[str, Any]:
    result = await admin.describe_configs([resource])
    return {name: entry.value for name, entry in result[resource].items() if entry.value}


@pytest.fixture(scope="session")
def telemetry_cluster(
    kafka_clusters: Any, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[TelemetryCluster]:
    file = tmp_path_factory.mktemp("telemetry") / "pushes.tsv"
    cluster = kafka_clusters.get(
        1,
        classpath=(str(compile_java(RECORDER)),),
        broker_config={
            "metric.reporters": "krafka.testing.TelemetryRecorder",
            "krafka.telemetry.file": str(file),
        },
    )
    yield TelemetryCluster(cluster, file)


async def _wait_for(predicate: Any, timeout: float = 20.0) -> None:
    with anyio.fail_after(timeout):
        while not predicate():
            await anyio.sleep(0.1)


@pytest.mark.one_backend
async def test_producer_and_consumer_push_the_subscribed_metrics(
    telemetry_cluster: TelemetryCluster,
) -> None:
    cluster = telemetry_cluster
    run = f"telemetry-{next(_IDS)}-{time.time_ns()}"
    topic = run
    await cluster.subscribe(
        run, f"{run}-.*", "org.apache.kafka.producer.,org.apache.kafka.consumer."
    )
    async with (
        Producer(cluster.bootstrap, client_id=f"{run}-producer") as producer,
        Consumer(cluster.bootstrap, client_id=f"{run}-consumer", auto_offset_reset="earliest")
        as consumer,
    ):  # fmt: skip
        for i in range(5):
            await producer.send_and_wait(topic, b"%d" % i, partition=0)
        await consumer.assign([TopicPartition(topic, 0)])
        got = 0
        with anyio.fail_after(15):
            while got < 5:
                got += len(await consumer.poll(timeout=0.5))
        producer_id = await producer.client_instance_id(10)
        consumer_id = await consumer.client_instance_id(10)
        assert isinstance(producer_id, uuid.UUID) and isinstance(consumer_id, uuid.UUID)
        assert producer_id != consumer_id and uuid.UUID(int=0) not in (producer_id, consumer_id)
        sent = "org.apache.kafka.producer.record.send.total"
        consumed = "org.apache.kafka.consumer.fetch.manager.records.consumed.total"
        await _wait_for(lambda: cluster.total(producer_id, sent) == 5)
        await _wait_for(lambda: cluster.total(consumer_id, consumed) == 5)
    producer_pushes = cluster.pushes_of(producer_id)
    assert {p.client_id for p in producer_pushes} == {f"{run}-producer"}
    names = {name for push in producer_pushes for name in push.metrics}
    assert all(name.startswith("org.apache.kafka.producer.") for name in names)
    consumer_names = {name for push in cluster.pushes_of(consumer_id) for name in push.metrics}
    assert "org.apache.kafka.consumer.poll.idle.ratio.avg" in consumer_names
    assert "org.apache.kafka.producer.record.queue.time.avg" in names
    assert "org.apache.kafka.producer.connection.creation.total" in names
    assert "org.apache.kafka.producer.node.request.latency.max" in names
    assert "org.apache.kafka.consumer.connection.creation.rate" in consumer_names
    assert "org.apache.kafka.consumer.node.request.latency.avg" in consumer_names
    for instance in (producer_id, consumer_id):
        pushes = cluster.pushes_of(instance)
        assert pushes[-1].terminating and not any(p.terminating for p in pushes[:-1])


async def test_every_client_gets_an_instance_id(telemetry_cluster: TelemetryCluster) -> None:
    bootstrap = telemetry_cluster.bootstrap
    run = f"ids-{next(_IDS)}-{time.time_ns()}"
    async with (
        AdminClient(bootstrap) as admin,
        ShareConsumer(bootstrap, group_id=run) as share_consumer,
    ):
        ids = [await admin.client_instance_id(10), await share_consumer.client_instance_id(10)]
        assert await admin.client_instance_id(0) == ids[0]  # known: no wait
    with krafka.sync.Producer(bootstrap) as producer:
        ids.append(producer.client_instance_id(10))
    assert all(isinstance(i, uuid.UUID) for i in ids) and len(set(ids)) == 3


@pytest.mark.one_backend
async def test_a_changed_subscription_is_picked_up(telemetry_cluster: TelemetryCluster) -> None:
    """The broker answers the push after a subscription change UNKNOWN_SUBSCRIPTION_ID; the
    client subscribes again and pushes what is asked for now, under the same instance id."""
    cluster = telemetry_cluster
    run = f"change-{next(_IDS)}-{time.time_ns()}"
    sent, requests = "org.apache.kafka.producer.record.send", "org.apache.kafka.producer.request"
    await cluster.subscribe(run, f"{run}-.*", sent)
    async with Producer(cluster.bootstrap, client_id=f"{run}-producer") as producer:
        instance = await producer.client_instance_id(10)

        def pushed(prefix: str) -> bool:
            pushes = cluster.pushes_of(instance)
            return any(name.startswith(prefix) for p in pushes for name in p.metrics)

        await _wait_for(lambda: pushed(sent))
        await cluster.subscribe(run, f"{run}-.*", requests)
        await _wait_for(lambda: pushed(requests))
        assert await producer.client_instance_id(0) == instance


@pytest.mark.one_backend
async def test_without_metrics_push_nothing_is_pushed(telemetry_cluster: TelemetryCluster) -> None:
    cluster = telemetry_cluster
    run = f"off-{next(_IDS)}-{time.time_ns()}"
    await cluster.subscribe(run, f"{run}-.*", "org.apache.kafka.")
    config = {"bootstrap.servers": cluster.bootstrap, "client.id": f"{run}-producer",
              "enable.metrics.push": "false"}  # fmt: skip
    async with Producer.from_config(config) as producer:
        await producer.send_and_wait(run, b"v")
        with pytest.raises(IllegalStateError):
            await producer.client_instance_id(1)
        await anyio.sleep(2.0)  # past a first push (0.5-1.5 intervals) had it been on
    assert not [p for p in cluster.pushes() if p.client_id == f"{run}-producer"]
    with pytest.raises(ValueError, match="negative"):
        await Producer(cluster.bootstrap).client_instance_id(-1)
