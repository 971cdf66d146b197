"""KIP-899 rebootstrap with `update_seed_brokers` on three Apache Kafka nodes: clients
bootstrapped from node 1 alone sit idle while every broker is replaced behind a new address
(nodes 2 and 3 restarted on new ports, node 1 stopped). Every broker they know is gone and so
is their only seed; given the new seeds, they rebootstrap and go on without losing a record."""

from __future__ import annotations

import time
from typing import Any

import anyio
import pytest

from krafka import AdminClient, Consumer, NewTopic, Producer, TopicPartition
from krafka.errors import KafkaConnectionError
from krafka.io.client import KafkaClient
from krafka.testing.kafka import KafkaCluster

pytestmark = [pytest.mark.anyio, pytest.mark.broker, pytest.mark.timeout(150)]

TRIGGER = 1.0  # metadata.recovery.rebootstrap.trigger.ms, in seconds
#: A bound far above the few seconds recovery takes (a trigger plus a reconnect backoff), far
#: below what waiting out every dead broker's reconnect backoff in turn took (~45 s).
RECOVERY = 20.0


async def _in_sync(cluster: KafkaCluster, topic: str, live: list[int]) -> None:
    """Until every partition of `topic` has all of `live` in sync (so stopping another node
    loses nothing)."""
    seeds = ",".join(cluster.node(n).address() for n in live)
    async with AdminClient(seeds, enable_metrics_push=False) as admin:
        with anyio.fail_after(30):
            while True:
                described = (await admin.describe_topics([topic])).raise_for_errors()[topic]
                if all(set(live) <= set(p.isr) for p in described.partitions):
                    return
                await anyio.sleep(0.2)


async def _replace_every_broker(cluster: KafkaCluster, topic: str) -> None:
    for node in (2, 3):
        cluster.kill(node)
        await anyio.to_thread.run_sync(lambda n=node: cluster.start_node(n, new_port=True))
        await _in_sync(cluster, topic, [1, 2, 3])
    cluster.kill(1)


async def _consume(consumer: Consumer, count: int, timeout: float = 30.0) -> list[bytes]:
    got: list[bytes] = []
    with anyio.fail_after(timeout):
        while len(got) < count:
            got += [r.value or b"" for r in await consumer.poll(timeout=0.5)]
    return got


@pytest.mark.one_backend
async def test_update_seed_brokers_leads_the_rebootstrap_to_replaced_brokers(
    kafka_cluster_factory: Any,
) -> None:
    cluster: KafkaCluster = kafka_cluster_factory(3, fresh_cluster=True)
    first = cluster.node(1).address()
    topic = f"rebootstrap-{time.time_ns()}"
    partitions = [TopicPartition(topic, 0), TopicPartition(topic, 1)]
    async with AdminClient(first) as admin:
        (await admin.create_topics([NewTopic(topic, 2, 3)])).raise_for_errors()
    options: dict[str, Any] = {"rebootstrap_trigger": TRIGGER}
    async with (
        Producer(first, acks="all", **options) as producer,
        Consumer(first, auto_offset_reset="earliest", fetch_max_wait=0.1, **options) as consumer,
        KafkaClient(first, **options) as stale,
    ):
        await consumer.assign(partitions)
        for i in range(20):
            await producer.send(topic, b"%d" % i, partition=i % 2)
        await producer.flush()
        before = await _consume(consumer, 20)
        consumer.pause(*partitions)  # idle clients: none of them hears of the new addresses

        old = [cluster.node(n).address() for n in (2, 3)]
        await _replace_every_broker(cluster, topic)
        seeds = f"{cluster.node(2).address()},{cluster.node(3).address()}"
        producer.update_seed_brokers(seeds)
        consumer.update_seed_brokers(seeds)

        with pytest.raises(KafkaConnectionError, match=old[0]):  # every known broker is gone
            await stale.refresh_metadata()
        await anyio.sleep(TRIGGER)
        with pytest.raises(KafkaConnectionError) as rebootstrapped:  # to the old seed alone
            await stale.refresh_metadata()
        assert first in str(rebootstrapped.value) and old[0] not in str(rebootstrapped.value)
        consumer.resume(*partitions)
        with anyio.fail_after(RECOVERY):
            for i in range(20, 40):
                await producer.send(topic, b"%d" % i, partition=i % 2)
            await producer.flush()
        after = await _consume(consumer, 20, RECOVERY)
        known = consumer.client.metadata.brokers.values()
        assert {b.node_id: f"{b.host}:{b.port}" for b in known} == {
            n: cluster.node(n).address() for n in (2, 3)
        }
    assert sorted(before + after, key=int) == [b"%d" % i for i in range(40)]


def test_update_seed_brokers_replaces_the_bootstrap_list() -> None:
    client = KafkaClient("old:9092")
    client.update_seed_brokers(["new-1:9092", "new-2:9093"])
    assert [(host, port) for _, host, port in client.metadata.addresses()] == [
        ("new-1", 9092),
        ("new-2", 9093),
    ]
    with pytest.raises(ValueError, match="host:port"):
        client.update_seed_brokers("no-port")
