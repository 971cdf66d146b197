"""Consumers in a classic group on a live cluster (Apache Kafka and Tansu): krafka members
together, with librdkafka's, and subscribed before their topic exists."""

from __future__ import annotations

import re
import threading
import time
from collections import Counter
from typing import Any

import anyio
import pytest
from _groups import make_topic, member

from krafka import AdminClient, Consumer, NewTopic, Producer, TopicPartition

pytestmark = [pytest.mark.anyio, pytest.mark.broker, pytest.mark.timeout(120)]


class Listener:
    def __init__(self) -> None:
        self.calls: list[tuple[str, set[TopicPartition]]] = []

    def on_partitions_assigned(self, partitions: set[TopicPartition]) -> None:
        self.calls.append(("assigned", set(partitions)))

    async def on_partitions_revoked(self, partitions: set[TopicPartition]) -> None:
        self.calls.append(("revoked", set(partitions)))


async def drain(consumer: Consumer, into: list[Any], until: Any, timeout: float = 40) -> None:
    with anyio.fail_after(timeout):
        while not until():
            records = await consumer.poll(timeout=0.2)
            into.extend(records)
            if records:
                await consumer.commit()


@pytest.mark.one_backend
@pytest.mark.parametrize("strategy", ["range", "cooperative-sticky"])
async def test_two_members_share_and_hand_over(broker: Any, strategy: str) -> None:
    topic = await make_topic(broker.bootstrap_servers, 6, 600)
    group = f"g-{time.time_ns()}"
    first_listener = Listener()
    a = member(
        broker.bootstrap_servers,
        group,
        partition_assignment_strategy=strategy,
        rebalance_listener=first_listener,
    )
    b = member(broker.bootstrap_servers, group, partition_assignment_strategy=strategy)
    got_a: list[Any] = []
    got_b: list[Any] = []
    async with a:
        await a.subscribe([topic])
        await drain(a, got_a, lambda: len(a.assignment()) == 6 and len(got_a) >= 100)
        async with b:
            await b.subscribe([topic])

            def split() -> bool:
                return bool(a.assignment()) and bool(b.assignment())

            with anyio.fail_after(40):
                while not split():
                    for consumer, into in ((a, got_a), (b, got_b)):
                        records = await consumer.poll(timeout=0.1)
                        into.extend(records)
                        if records:
                            await consumer.commit()
            assert a.assignment().isdisjoint(b.assignment())
            assert a.assignment() | b.assignment() == {TopicPartition(topic, p) for p in range(6)}
            with anyio.fail_after(40):
                while len(got_a) + len(got_b) < 600:
                    for consumer, into in ((a, got_a), (b, got_b)):
                        records = await consumer.poll(timeout=0.1)
                        into.extend(records)
                        if records:
                            await consumer.commit()
        # b left: a takes everything back
        with anyio.fail_after(40):
            while len(a.assignment()) < 6:
                await a.poll(timeout=0.2)
    values = Counter(r.value for r in got_a + got_b)
    assert set(values) == {b"%d" % i for i in range(600)}
    assert all(count == 1 for count in values.values()), "a record consumed twice"
    kinds = [k for k, _ in first_listener.calls]
    assert (kinds[0] == "assigned" and "revoked" in kinds) or strategy == "cooperative-sticky"
    assert a.group_metadata().generation_id >= 1


async def test_mixed_group_with_librdkafka_cooperative(broker: Any) -> None:
    """krafka and librdkafka members of one cooperative-sticky group, both auto-committing (so
    what a member read is committed before its partitions move, and no record is read twice):
    the partitions end up split, every record read once. A manual commit racing a rebalance
    fails (Java's RebalanceInProgressException, librdkafka's ILLEGAL_GENERATION), which is
    why both leave committing to the rebalance."""
    from confluent_kafka import Consumer as RdConsumer

    topic = await make_topic(broker.bootstrap_servers, 4, 400)
    group = f"mixed-{time.time_ns()}"
    rd_seen: list[bytes] = []
    rd_assigned: list[int] = []
    stop = threading.Event()

    def run_librdkafka() -> None:
        rd = RdConsumer(
            {
                "bootstrap.servers": broker.bootstrap_servers,
                "group.id": group,
                "partition.assignment.strategy": "cooperative-sticky",
                "auto.offset.reset": "earliest",
                "auto.commit.interval.ms": 500,
                "session.timeout.ms": 6000,
                "heartbeat.interval.ms": 500,
                "fetch.wait.max.ms": 100,
            }
        )
        rd.subscribe([topic])
        while not stop.is_set():
            message = rd.poll(0.1)
            rd_assigned.append(len(rd.assignment()))
            if message is not None and message.error() is None:
                rd_seen.append(message.value())
        rd.close()

    thread = threading.Thread(target=run_librdkafka, daemon=True)
    thread.start()
    mine: list[Any] = []
    try:
        async with member(
            broker.bootstrap_servers,
            group,
            partition_assignment_strategy="cooperative-sticky",
            enable_auto_commit=True,
            auto_commit_interval=0.5,
        ) as consumer:
            await consumer.subscribe([topic])

            def shared() -> bool:  # both members hold partitions (krafka may start alone)
                theirs = rd_assigned[-1] if rd_assigned else 0
                return 0 < len(consumer.assignment()) < 4 and theirs > 0

            with anyio.move_on_after(60):
                while len(mine) + len(rd_seen) < 400 or not shared():
                    mine.extend(await consumer.poll(timeout=0.2))
            ours = sorted(tp.partition for tp in consumer.assignment())
            assert shared(), (ours, rd_assigned[-1:], len(mine), len(rd_seen))
    finally:
        stop.set()
        await anyio.to_thread.run_sync(thread.join, 20)
    values = Counter([r.value for r in mine] + rd_seen)
    assert set(values) == {b"%d" % i for i in range(400)}
    assert all(c == 1 for c in values.values()), "a record consumed by both members"


@pytest.mark.one_backend
async def test_a_topic_created_after_subscribing_is_assigned_soon(broker: Any) -> None:
    """A subscribed topic the cluster does not know yet is looked up again at the retry backoff
    (Java refreshes metadata for it), not at the next periodic refresh: once it is created the
    group assigns it within seconds."""
    topic = f"late-{time.time_ns()}"
    async with member(broker.bootstrap_servers, f"g-{time.time_ns()}") as consumer:
        await consumer.subscribe([topic])
        with anyio.move_on_after(1.0):
            while True:
                await consumer.poll(timeout=0.2)
        assert consumer.assignment() == set()
        async with AdminClient(broker.bootstrap_servers) as admin:
            (await admin.create_topics([NewTopic(topic, 2)])).raise_for_errors()
        async with Producer(broker.bootstrap_servers) as producer:
            await producer.send_and_wait(topic, b"first", partition=1)
        got: list[Any] = []
        with anyio.fail_after(12):
            while not got:
                got = await consumer.poll(timeout=0.2)
        assert [r.value for r in got] == [b"first"]
        assert consumer.assignment() == {TopicPartition(topic, 0), TopicPartition(topic, 1)}


@pytest.mark.one_backend
async def test_a_pattern_subscription_follows_matching_topics(broker: Any) -> None:
    """A compiled pattern is matched against every topic of the cluster (not only topics the
    client already tracks), again every `metadata_max_age`: a matching topic created later
    joins the assignment, others never do."""
    prefix = f"pat{time.time_ns()}"
    first = await make_topic(broker.bootstrap_servers, 2, 10, prefix=prefix)
    await make_topic(broker.bootstrap_servers, 1, 1, prefix=f"other{prefix}")
    seen: list[bytes] = []
    async with member(broker.bootstrap_servers, f"g-{prefix}", metadata_max_age=1.0) as consumer:
        await consumer.subscribe(re.compile(f"{prefix}-.*"))
        with anyio.fail_after(30):
            while len(seen) < 10:
                seen += [r.value for r in await consumer.poll(timeout=0.2)]
        assert consumer.assignment() == {TopicPartition(first, p) for p in range(2)}
        second = await make_topic(broker.bootstrap_servers, 1, 1, prefix=prefix)
        with anyio.fail_after(30):
            while len(seen) < 11:
                seen += [r.value for r in await consumer.poll(timeout=0.2)]
        assert TopicPartition(second, 0) in consumer.assignment()
        assert consumer.subscription() == {first, second}
