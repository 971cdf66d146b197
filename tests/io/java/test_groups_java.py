"""krafka and Apache Kafka's `KafkaConsumer` in one consumer group on Apache Kafka: a classic
cooperative-sticky group and a KIP-848 (`group.protocol=consumer`) group. A member joins mid-way
(Java into krafka's group and krafka into Java's), the rebalance leaves disjoint and complete
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


class Listener:
    """krafka's rebalance listener calls, in order."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, set[TopicPartition]]] = []

    def on_partitions_assigned(self, partitions: set[TopicPartition]) -> None:
        self.calls.append(("assigned", set(partitions)))

    def on_partitions_revoked(self, partitions: set[TopicPartition]) -> None:
        self.calls.append(("revoked", set(partitions)))

    def on_partitions_lost(self, partitions: set[TopicPartition]) -> None:
        self.calls.append(("lost", set(partitions)))


@pytest.mark.parametrize("first", ["krafka", "java"])
@pytest.mark.parametrize("protocol", ["classic", "consumer"])
async def test_group_shared_with_kafka_consumer(
    cluster: KafkaCluster, protocol: str, first: str
) -> None:
    """`protocol` "classic" is a cooperative-sticky group, "consumer" a KIP-848 one; `first`
    owns every partition and has consumed some records when the other joins."""
    bootstrap = cluster.bootstrap_servers
    (topic,) = await new_topics(bootstrap, PARTITIONS, f"{protocol}-{first}-first")
    group = f"g-{topic}"
    everything = {TopicPartition(topic, p) for p in range(PARTITIONS)}
    await produce(bootstrap, topic, 0, RECORDS // 2)
    listener = Listener()
    if protocol == "classic":
        consumer = krafka_member(
            bootstrap,
            group,
            partition_assignment_strategy="cooperative-sticky",
            session_timeout=10.0,
            heartbeat_interval=0.5,
            rebalance_listener=listener,
        )
        java = JavaPeer(
            Role.GROUP_MEMBER, bootstrap, topics=[topic], group=group, strategy="cooperative-sticky"
        )
    else:
        consumer = krafka_member(
            bootstrap, group, group_protocol="consumer", rebalance_listener=listener
        )
        java = JavaPeer(
            Role.GROUP_MEMBER, bootstrap, topics=[topic], group=group, protocol=protocol
        )
    mine: list[ConsumerRecord] = []
    krafka_in = False

    async def pump(until: Callable[[], bool]) -> None:
        """krafka polls (and commits what it processed) while in the group, until `until()`."""
        with anyio.fail_after(45):
            while not until():
                if not krafka_in:
                    await anyio.sleep(0.05)
                    continue
                records = await consumer.poll(timeout=0.1)
                mine.extend(records)
                if records:
                    await consumer.commit()

    def owned(member: object) -> frozenset[TopicPartition]:
        return frozenset(consumer.assignment()) if member is consumer else java_assignment(java)

    def consumed(member: object) -> int:
        return len(mine) if member is consumer else len(java.records())

    one, other = (consumer, java) if first == "krafka" else (java, consumer)
    async with one:
        if one is consumer:
            await consumer.subscribe([topic])
            krafka_in = True
        await pump(lambda: consumed(one) >= 40 and owned(one) == everything)
        async with other:
            if other is consumer:
                await consumer.subscribe([topic])
                krafka_in = True
            await pump(lambda: bool(owned(one)) and bool(owned(other)))
            await produce(bootstrap, topic, RECORDS // 2, RECORDS)
            await pump(lambda: len(mine) + len(java.records()) >= RECORDS)
            await pump(lambda: owned(one) | owned(other) == everything)
            await settled(consumer, java, topic)
            # the newcomer only ever gained partitions
            if other is java:
                assert java.last("revoked", "lost") is None
            else:
                assert [kind for kind, _ in listener.calls] == ["assigned"] * len(listener.calls)
            if other is consumer:
                krafka_in = False
        # the newcomer left: the first member takes its partitions back
        await pump(lambda: owned(one) == everything)
    assert_exactly_once(mine, java)
    done = java.last("done")
    assert done is not None and done.data["uncommitted"] == 0
    # krafka's listener saw Java's delta semantics: what it was given, less what it gave up
    held: set[TopicPartition] = set()
    for kind, partitions in listener.calls:
        if kind == "assigned":
            assert held.isdisjoint(partitions), "assigned again what it held"
            held |= partitions
        else:
            assert partitions <= held, "revoked what it did not hold"
            held -= partitions
