"""KIP-848 (`group_protocol="consumer"`) on Apache Kafka's group coordinator: the server's
`uniform` and `range` assignors (`group_remote_assignor`) splitting a topic between krafka
members and handing everything to the one that stays; a regular-expression subscription the
coordinator resolves (SubscribedTopicRegex), picking up a topic created later; and a group
shared with librdkafka's KIP-848 consumer (the twin of the mock-cluster scenario)."""

from __future__ import annotations

import contextlib
import re
import time
from collections import Counter
from typing import Any

import anyio
import pytest
from _groups import make_topic

from krafka import AdminClient, Consumer, Producer, TopicPartition
from krafka.io.client import KafkaClient
from krafka.protocol.error_codes import ErrorCode
from krafka.protocol.messages import ConsumerGroupHeartbeatRequest

pytestmark = [pytest.mark.anyio, pytest.mark.broker, pytest.mark.timeout(90)]


def member(bootstrap: str, group: str, **kw: Any) -> Consumer:
    options: dict[str, Any] = {
        "group_id": group,
        "group_protocol": "consumer",
        "auto_offset_reset": "earliest",
        "enable_auto_commit": False,
        "fetch_max_wait": 0.1,
        **kw,
    }
    return Consumer(bootstrap, **options)


async def poll_all(members: list[Consumer], seen: Counter[bytes]) -> None:
    for consumer in members:
        records = await consumer.poll(timeout=0.05)
        seen.update(r.value for r in records)
        if records:
            await consumer.commit()


@pytest.mark.parametrize("assignor", ["uniform", "range"])
async def test_server_assignors_split_and_hand_over(kafka: Any, assignor: str) -> None:
    topic = await make_topic(kafka.bootstrap_servers, 4, 200, prefix="kip848")
    group = f"{assignor}-{time.time_ns()}"
    everything = {TopicPartition(topic, p) for p in range(4)}
    seen: Counter[bytes] = Counter()
    async with (
        member(kafka.bootstrap_servers, group, group_remote_assignor=assignor) as a,
        member(kafka.bootstrap_servers, group, group_remote_assignor=assignor) as b,
    ):
        await a.subscribe([topic])
        await b.subscribe([topic])
        with anyio.fail_after(30):
            while not (
                len(a.assignment()) == len(b.assignment()) == 2
                and a.assignment() | b.assignment() == everything
            ):
                await poll_all([a, b], seen)
        if assignor == "range":  # range hands out runs of partitions
            owned = sorted(sorted(p.partition for p in c.assignment()) for c in (a, b))
            assert owned == [[0, 1], [2, 3]]
        await b.close()
        with anyio.fail_after(30):
            while a.assignment() != everything or sum(seen.values()) < 200:
                await poll_all([a], seen)
    assert seen == Counter(b"%d" % i for i in range(200))


@pytest.mark.one_backend
async def test_a_regex_subscription_picks_up_a_new_topic(kafka: Any) -> None:
    prefix = f"rx{time.time_ns()}"
    first = await make_topic(kafka.bootstrap_servers, 2, 10, prefix=prefix)
    async with member(kafka.bootstrap_servers, f"g-{prefix}") as consumer:
        await consumer.subscribe(re.compile(f"{prefix}-.*"))
        seen: Counter[bytes] = Counter()
        with anyio.fail_after(30):
            while sum(seen.values()) < 10:
                await poll_all([consumer], seen)
        assert consumer.assignment() == {TopicPartition(first, p) for p in range(2)}
        second = await make_topic(kafka.bootstrap_servers, 1, 0, prefix=prefix)
        async with Producer(kafka.bootstrap_servers) as producer:
            await producer.send_and_wait(second, b"new", partition=0)
        with anyio.fail_after(40):  # the coordinator resolves regexes again every few seconds
            while seen[b"new"] == 0:
                await poll_all([consumer], seen)
        assert TopicPartition(second, 0) in consumer.assignment()


@pytest.mark.one_backend
async def test_shares_a_group_with_a_librdkafka_kip848_consumer(kafka: Any) -> None:
    """A librdkafka KIP-848 member and a krafka one: disjoint and complete assignments, every
    record consumed; the librdkafka member leaves and krafka takes every partition."""
    import confluent_kafka

    topic = await make_topic(kafka.bootstrap_servers, 4, 400, prefix="kip848-mixed")
    group = f"mixed-{time.time_ns()}"
    peer = confluent_kafka.Consumer(
        {
            "bootstrap.servers": kafka.bootstrap_servers,
            "group.id": group,
            "group.protocol": "consumer",
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
        }
    )
    peer.subscribe([topic])
    closed = False
    seen: Counter[bytes] = Counter()

    def peer_poll() -> set[TopicPartition]:
        for message in peer.consume(500, 0.2):
            if message.error() is None:
                seen[message.value()] += 1
        if seen:
            with contextlib.suppress(confluent_kafka.KafkaException):  # nothing new to commit
                peer.commit(asynchronous=False)
        return {TopicPartition(tp.topic, tp.partition) for tp in peer.assignment()}

    try:
        async with member(kafka.bootstrap_servers, group) as mine:
            await mine.subscribe([topic])
            with anyio.fail_after(60):
                while True:
                    await poll_all([mine], seen)
                    theirs = await anyio.to_thread.run_sync(peer_poll)
                    ours = mine.assignment()
                    shared = bool(ours) and bool(theirs) and ours.isdisjoint(theirs)
                    if shared and len(ours | theirs) == 4 and len(seen) == 400:
                        break
            await anyio.to_thread.run_sync(peer.close)
            closed = True
            with anyio.fail_after(30):
                while len(mine.assignment()) < 4:
                    await mine.poll(timeout=0.2)
    finally:
        if not closed:
            peer.close()
    assert set(seen) == {b"%d" % i for i in range(400)}


async def test_a_removed_member_rejoins_with_its_own_member_id(kafka: Any) -> None:
    """KIP-1082: the member id is the client's (a base64url UUID, as Java's). Removed from the
    group by another client (a leave heartbeat in its name), the member's next heartbeat is
    answered UNKNOWN_MEMBER_ID; it loses its partitions and rejoins with the same id at epoch
    0, and gets them back."""
    topic = await make_topic(kafka.bootstrap_servers, 2, prefix="kip1082")
    group = f"kip1082-{time.time_ns()}"
    everything = {TopicPartition(topic, p) for p in range(2)}
    lost: list[set[TopicPartition]] = []

    class Listener:
        def on_partitions_lost(self, partitions: set[TopicPartition]) -> None:
            lost.append(partitions)

    async with member(kafka.bootstrap_servers, group, rebalance_listener=Listener()) as consumer:
        await consumer.subscribe([topic])
        with anyio.fail_after(30):
            while consumer.assignment() != everything:
                await consumer.poll(timeout=0.1)
        first = consumer.group_metadata()
        assert re.fullmatch(r"[A-Za-z0-9_-]{22}", first.member_id)
        async with KafkaClient(kafka.bootstrap_servers) as other:
            removed = await other.send_to_coordinator(
                group,
                ConsumerGroupHeartbeatRequest(
                    group_id=group, member_id=first.member_id, member_epoch=-1
                ),
            )
        assert removed.error_code == ErrorCode.NONE
        with anyio.fail_after(30):
            while not lost or consumer.assignment() != everything:
                await consumer.poll(timeout=0.1)
        assert lost == [everything]
        again = consumer.group_metadata()
        assert again.member_id == first.member_id
        assert again.generation_id > 0
        async with AdminClient(kafka.bootstrap_servers) as admin:
            described = (await admin.describe_groups([group])).raise_for_errors()[group]
        assert [m.member_id for m in described.members] == [first.member_id]


async def test_a_long_poll_takes_the_first_assignment_and_returns_its_records(kafka: Any) -> None:
    """A poll already waiting when the coordinator hands out the assignment starts the
    reconciliation (with auto-commit on only the application's poll may: it commits first)
    and returns the records, as Java's poll loop does, instead of sleeping out its timeout."""
    topic = await make_topic(kafka.bootstrap_servers, 1, 5, prefix="longpoll")
    async with member(kafka.bootstrap_servers, f"g-{topic}", enable_auto_commit=True) as consumer:
        await consumer.subscribe([topic])
        records = await consumer.poll(timeout=60.0)
    assert [r.value for r in records] == [b"%d" % i for i in range(5)]
