"""krafka and Apache Kafka's `KafkaConsumer` in one consumer group on Apache Kafka: a classic
cooperative-sticky group and a KIP-848 (`group.protocol=consumer`) group. A member joins mid-way
(Java into krafka's group, krafka into Java's), the rebalance leaves disjoint and complete
assignments, every record is consumed exactly once (each commits after processing), and when the
newcomer leaves the first member takes every partition back."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

import anyio
import pytest
from _java import new_topics

from krafka import Consumer, ConsumerRecord, Producer, TopicPartition
from krafka.testing.javapeer import JavaPeer, Role
from krafka.testing.kafka import KafkaCluster

pytestmark = [pytest.mark.anyio, pytest.mark.one_backend, pytest.mark.timeout(120)]

PARTITIONS = 4
RECORDS = 400


async def produce(bootstrap: str, topic: str, first: int, end: int) -> None:
    async with Producer(bootstrap, linger=0.005) as producer:
        for i in range(first, end):
            await producer.send(topic, b"%d" % i, partition=i % PARTITIONS)
        await producer.flush()


def krafka_member(bootstrap: str, group: str, **options: Any) -> Consumer:
    settings: dict[str, Any] = {
        "group_id": group,
        "auto_offset_reset": "earliest",
        "enable_auto_commit": False,
        "fetch_max_wait": 0.1,
        **options,
    }
    return Consumer(bootstrap, **settings)


async def drain(
    consumer: Consumer, into: list[ConsumerRecord], until: Callable[[], bool], seconds: float = 45
) -> None:
    """Poll (committing what was processed) until `until()`."""
    with anyio.fail_after(seconds):
        while not until():
            records = await consumer.poll(timeout=0.1)
            into.extend(records)
            if records:
                await consumer.commit()


def java_assignment(java: JavaPeer) -> frozenset[TopicPartition]:
    """The Java member's assignment after its latest rebalance callback."""
    last = java.last("assigned", "revoked", "lost")
    return last.assignment if last is not None else frozenset()


async def settled(consumer: Consumer, java: JavaPeer, topic: str) -> None:
    """Both own partitions, disjoint and together all of them (Java asked directly)."""
    java.send("assignment")
    theirs = (await java.aexpect("assignment")).assignment
    ours = consumer.assignment()
    assert ours and theirs, (ours, theirs)
    assert ours.isdisjoint(theirs)
    assert ours | theirs == {TopicPartition(topic, p) for p in range(PARTITIONS)}


def assert_exactly_once(mine: list[ConsumerRecord], java: JavaPeer) -> None:
    counts = Counter([r.value for r in mine] + [r.value for r in java.records()])
    assert set(counts) == {b"%d" % i for i in range(RECORDS)}
    twice = sorted(v for v, n in counts.items() if n > 1)
    assert not twice, f"consumed more than once: {twice[:10]}"


async def test_classic_cooperative_sticky_group_with_kafka_consumer(cluster: KafkaCluster) -> None:
    bootstrap = cluster.bootstrap_servers
    (topic,) = await new_topics(bootstrap, PARTITIONS, "coop-java")
    group = f"g-{topic}"
    await produce(bootstrap, topic, 0, RECORDS // 2)
    mine: list[ConsumerRecord] = []
    everything = {TopicPartition(topic, p) for p in range(PARTITIONS)}
    async with krafka_member(
        bootstrap,
        group,
        partition_assignment_strategy="cooperative-sticky",
        session_timeout=10.0,
        heartbeat_interval=0.5,
    ) as consumer:
        await consumer.subscribe([topic])
        await drain(consumer, mine, lambda: len(mine) >= 40)
        assert consumer.assignment() == everything
        async with JavaPeer(
            Role.GROUP_MEMBER, bootstrap, topics=[topic], group=group, strategy="cooperative-sticky"
        ) as java:
            await drain(consumer, mine, lambda: bool(java_assignment(java)))
            await produce(bootstrap, topic, RECORDS // 2, RECORDS)
            await drain(consumer, mine, lambda: len(mine) + len(java.records()) >= RECORDS)
            await settled(consumer, java, topic)
            assert java.last("revoked") is None  # cooperative: Java only ever gained
        # the Java member left: krafka takes its partitions back
        await drain(consumer, mine, lambda: consumer.assignment() == everything)
    assert_exactly_once(mine, java)
    done = java.last("done")
    assert done is not None and done.data["uncommitted"] == 0


async def test_kip848_group_with_kafka_consumer(cluster: KafkaCluster) -> None:
    bootstrap = cluster.bootstrap_servers
    (topic,) = await new_topics(bootstrap, PARTITIONS, "kip848-java")
    group = f"g-{topic}"
    await produce(bootstrap, topic, 0, RECORDS // 2)
    mine: list[ConsumerRecord] = []
    everything = {TopicPartition(topic, p) for p in range(PARTITIONS)}
    async with JavaPeer(
        Role.GROUP_MEMBER, bootstrap, topics=[topic], group=group, protocol="consumer"
    ) as java:
        await java.aexpect("assigned", where=lambda e: e.assignment == everything)
        with anyio.fail_after(30):
            while len(java.records()) < 40:
                await anyio.sleep(0.05)
        async with krafka_member(bootstrap, group, group_protocol="consumer") as consumer:
            await consumer.subscribe([topic])
            await drain(consumer, mine, lambda: bool(consumer.assignment()))
            await produce(bootstrap, topic, RECORDS // 2, RECORDS)
            await drain(consumer, mine, lambda: len(mine) + len(java.records()) >= RECORDS)
            await drain(consumer, mine, lambda: len(java_assignment(java)) < PARTITIONS)
            await settled(consumer, java, topic)
        # krafka left: the Java member takes its partitions back
        await java.aexpect("assigned", where=lambda e: e.assignment == everything)
    assert_exactly_once(mine, java)
