"""KIP-848 (`group_protocol="consumer"`) through `krafka.Consumer` on librdkafka's mock cluster:
krafka alone over 3 brokers and 12 partitions, target assignments pushed by the mock, and a group
shared with librdkafka's own KIP-848 consumer."""

from __future__ import annotations

import contextlib
import time
from collections import Counter
from typing import Any

import anyio
import pytest

from krafka import Consumer, Producer, TopicPartition
from krafka.protocol import ApiKey
from krafka.protocol.error_codes import ErrorCode

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]

TOPIC = "kip848"


async def produce(cluster: Any, count: int, partitions: int, first: int = 0) -> None:
    async with Producer(cluster.bootstrap_servers, linger=0.002) as producer:
        for i in range(first, first + count):
            await producer.send(TOPIC, b"%d" % i, partition=i % partitions)
        await producer.flush()


def member(cluster: Any, group: str, **kw: Any) -> Consumer:
    return Consumer(
        cluster.bootstrap_servers,
        group_id=group,
        group_protocol="consumer",
        auto_offset_reset="earliest",
        fetch_max_wait=0.1,
        **kw,
    )


def cluster_for(make_mock_cluster: Any) -> Any:
    cluster = make_mock_cluster(3, topics={TOPIC: 12})
    cluster.set_group_consumer_heartbeat_interval(200)
    cluster.set_group_consumer_session_timeout(6000)
    return cluster


async def test_alone_over_three_brokers_every_record_once(make_mock_cluster: Any) -> None:
    cluster = cluster_for(make_mock_cluster)
    await produce(cluster, 1200, 12)
    seen: Counter[bytes] = Counter()
    async with member(cluster, "g-alone") as consumer:
        await consumer.subscribe([TOPIC])
        with anyio.fail_after(60):
            while len(seen) < 1200:
                seen.update(r.value for r in await consumer.poll(timeout=0.5))
        assert consumer.assignment() == {TopicPartition(TOPIC, p) for p in range(12)}
        await consumer.commit()
        metadata = consumer.group_metadata()
        assert metadata.generation_id > 0 and metadata.member_id
    assert seen == Counter(b"%d" % i for i in range(1200))


async def test_target_assignment_is_reconciled(make_mock_cluster: Any) -> None:
    cluster = cluster_for(make_mock_cluster)
    revoked: list[set[TopicPartition]] = []

    class Listener:
        def on_partitions_revoked(self, partitions: set[TopicPartition]) -> None:
            revoked.append(partitions)

    async with member(cluster, "g-target", rebalance_listener=Listener()) as consumer:
        await consumer.subscribe([TOPIC])
        with anyio.fail_after(30):
            while len(consumer.assignment()) < 12:
                await consumer.poll(timeout=0.2)
        member_id = consumer.group_metadata().member_id
        wanted = [(TOPIC, p) for p in (1, 3, 5)]
        cluster.target_assignment("g-target", {member_id: wanted})
        with anyio.fail_after(30):
            while consumer.assignment() != {TopicPartition(t, p) for t, p in wanted}:
                await consumer.poll(timeout=0.2)
        assert revoked and revoked[-1] == {
            TopicPartition(TOPIC, p) for p in range(12) if p not in (1, 3, 5)
        }


async def test_shares_a_group_with_librdkafka_kip848_consumers(make_mock_cluster: Any) -> None:
    """A librdkafka KIP-848 member, then krafka, join; disjoint and complete assignments,
    every record consumed; the librdkafka member leaves and krafka takes every partition."""
    import confluent_kafka

    cluster = cluster_for(make_mock_cluster)
    await produce(cluster, 1200, 12)
    peer = confluent_kafka.Consumer(
        {
            "bootstrap.servers": cluster.bootstrap_servers,
            "group.id": "g-mixed",
            "group.protocol": "consumer",
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
        }
    )
    peer.subscribe([TOPIC])
    closed = False
    seen: Counter[bytes] = Counter()

    def peer_poll() -> set[TopicPartition]:
        for message in peer.consume(500, 0.2):
            if message.error() is None:
                seen[message.value()] += 1
        if seen:
            # nothing new to commit, or a rebalance is under way: both are fine here
            with contextlib.suppress(confluent_kafka.KafkaException):
                peer.commit(asynchronous=False)
        return {TopicPartition(tp.topic, tp.partition) for tp in peer.assignment()}

    try:
        async with member(cluster, "g-mixed", enable_auto_commit=False) as mine:
            await mine.subscribe([TOPIC])
            theirs: set[TopicPartition] = set()
            deadline = time.monotonic() + 60
            while True:
                records = await mine.poll(timeout=0.2)
                seen.update(r.value for r in records)
                if records:
                    await mine.commit()
                theirs = await anyio.to_thread.run_sync(peer_poll)
                ours = mine.assignment()
                shared = bool(ours) and bool(theirs) and ours.isdisjoint(theirs)
                if shared and len(ours | theirs) == 12 and len(seen) == 1200:
                    break
                assert time.monotonic() < deadline, (len(seen), sorted(ours), sorted(theirs))
            await anyio.to_thread.run_sync(peer.close)  # the librdkafka member leaves
            closed = True
            with anyio.fail_after(30):
                while len(mine.assignment()) < 12:
                    await mine.poll(timeout=0.2)
    finally:
        if not closed:
            peer.close()
    assert set(seen) == {b"%d" % i for i in range(1200)}


@pytest.mark.parametrize(
    "code",
    [ErrorCode.FENCED_MEMBER_EPOCH, ErrorCode.UNKNOWN_MEMBER_ID, ErrorCode.NOT_COORDINATOR],
)
async def test_heartbeat_errors_recover(make_mock_cluster: Any, code: ErrorCode) -> None:
    """Fenced or unknown: the partitions are lost and the member rejoins at epoch 0 with the same
    member id (KIP-1082, as Java); NOT_COORDINATOR: find the coordinator again. Either
    way it ends up owning and consuming every partition again; committed work is not redone."""
    cluster = cluster_for(make_mock_cluster)
    await produce(cluster, 300, 12)
    lost: list[set[TopicPartition]] = []

    class Listener:
        def on_partitions_lost(self, partitions: set[TopicPartition]) -> None:
            lost.append(partitions)

    seen: Counter[bytes] = Counter()
    group = f"g-{code.name}"

    async def consume_until(count: int, consumer: Consumer) -> None:
        with anyio.fail_after(60):
            while len(seen) < count or len(consumer.assignment()) < 12:
                records = await consumer.poll(timeout=0.2)
                seen.update(r.value for r in records)
                if records:
                    await consumer.commit()

    async with member(
        cluster, group, rebalance_listener=Listener(), enable_auto_commit=False
    ) as consumer:
        await consumer.subscribe([TOPIC])
        await consume_until(300, consumer)
        before = consumer.group_metadata()
        cluster.push_request_errors(ApiKey.CONSUMER_GROUP_HEARTBEAT, code)
        with anyio.fail_after(30):  # the next heartbeats meet the error, then recover
            started = anyio.current_time()
            while not lost and anyio.current_time() - started < 2.0:
                seen.update(r.value for r in await consumer.poll(timeout=0.1))
        await produce(cluster, 300, 12, first=300)
        await consume_until(600, consumer)
        after = consumer.group_metadata()
    if code is ErrorCode.NOT_COORDINATOR:
        assert not lost and after.member_id == before.member_id
    else:
        assert lost, "fencing loses the partitions"
        assert after.member_id == before.member_id  # KIP-1082: the client's id is kept
    assert set(seen) == {b"%d" % i for i in range(600)}
