"""Java's close options (KIP-1092 `CloseOptions.GroupMembershipOperation`) on Apache Kafka, for
static members: after `remain_in_group` a member's partitions stay with it until its session
expires; after `leave_group` they go to the other member at once (classic: LeaveGroup naming
the instance id; KIP-848: epoch -1 instead of -2). The classic scenario runs on Tansu too, in
the slow run."""

from __future__ import annotations

import functools
import time
from typing import Any

import anyio
import pytest
from _groups import make_topic, member

from krafka import Consumer, GroupMembershipOperation, TopicPartition
from krafka.sync import Consumer as SyncConsumer
from krafka.testing.kafka import KafkaCluster

pytestmark = [pytest.mark.anyio, pytest.mark.broker, pytest.mark.timeout(90)]


async def settle(members: list[Consumer], wanted: Any, seconds: float = 30) -> None:
    """Poll every member until `wanted()` holds."""
    with anyio.fail_after(seconds):
        while not wanted():
            for consumer in members:
                await consumer.poll(timeout=0.05)


async def keep_polling(consumer: Consumer, seconds: float) -> None:
    with anyio.move_on_after(seconds):
        while True:
            await consumer.poll(timeout=0.1)


@pytest.mark.one_backend
async def test_classic_static_member_remains_then_leaves(kafka: Any) -> None:
    await remains_then_leaves(kafka)


@pytest.mark.slow
async def test_classic_static_member_remains_then_leaves_on_tansu(tansu: Any) -> None:
    """Tansu never removes a static member whose session expired (the group then waits for it;
    see BROKER.md), so there the member comes back instead, and only its LeaveGroup can hand
    its partition over. Slow: Tansu's rebalances take some 20 s here."""
    await remains_then_leaves(tansu)


async def remains_then_leaves(broker: Any) -> None:
    """Static members a and b share a topic; a closes with remain_in_group (nothing moves within
    its session), comes back, then closes with leave_group (its partition moves at once)."""
    on_kafka = isinstance(broker, KafkaCluster)
    topic = await make_topic(broker.bootstrap_servers, 2, prefix="close-classic")
    group = f"close-{time.time_ns()}"
    everything = {TopicPartition(topic, p) for p in range(2)}
    short = 6.0 if on_kafka else 3.0  # Tansu holds a JoinGroup for session/2
    async with member(
        broker.bootstrap_servers, group, group_instance_id="b", session_timeout=short
    ) as b:
        await b.subscribe([topic])
        async with member(
            broker.bootstrap_servers, group, group_instance_id="a", session_timeout=short
        ) as a:
            await a.subscribe([topic])
            await settle([a, b], lambda: len(a.assignment()) == len(b.assignment()) == 1)
            await a.close(group_membership_operation="remain_in_group")
        await keep_polling(b, 2.0)  # within a's session: nothing moves
        assert len(b.assignment()) == 1
        if on_kafka:
            await settle([b], lambda: b.assignment() == everything)  # a's session expired
        session = 45.0 if on_kafka else short
        async with member(
            broker.bootstrap_servers, group, group_instance_id="a", session_timeout=session
        ) as a:
            await a.subscribe([topic])
            await settle([a, b], lambda: len(a.assignment()) == len(b.assignment()) == 1)
            await a.close(group_membership_operation=GroupMembershipOperation.LEAVE_GROUP)
        await settle([b], lambda: b.assignment() == everything, seconds=20)  # not 45 s


@pytest.mark.one_backend
async def test_kip848_static_member_leave_group_hands_over_at_once(kafka: Any) -> None:
    """The coordinator keeps a static member's assignment after a temporary leave (epoch -2,
    the default close) for the session timeout (45 s); `leave_group` (epoch -1) frees it at
    once. The closing member is the blocking consumer, closed from another thread."""
    topic = await make_topic(kafka.bootstrap_servers, 2, prefix="close-kip848")
    group = f"close848-{time.time_ns()}"
    everything = {TopicPartition(topic, p) for p in range(2)}
    options: dict[str, Any] = {"group_protocol": "consumer", "auto_offset_reset": "earliest",
                               "fetch_max_wait": 0.1, "group_id": group}  # fmt: skip
    async with Consumer(kafka.bootstrap_servers, group_instance_id="b", **options) as b:
        await b.subscribe([topic])
        await settle([b], lambda: b.assignment() == everything)
        for operation, moves in (("default", False), ("leave_group", True)):
            a = await anyio.to_thread.run_sync(
                lambda: SyncConsumer(
                    bootstrap_servers=kafka.bootstrap_servers, group_instance_id="a", **options
                )
            )
            a.subscribe([topic])
            with anyio.fail_after(30):
                while not (a.assignment() and len(b.assignment()) == 1):
                    await anyio.to_thread.run_sync(a.poll, 0.05)
                    await b.poll(timeout=0.05)
            await anyio.to_thread.run_sync(
                functools.partial(a.close, 10, group_membership_operation=operation)
            )
            if moves:
                await settle([b], lambda: b.assignment() == everything, seconds=20)
            else:
                await keep_polling(b, 3.0)
                assert len(b.assignment()) == 1  # kept for "a" until its session expires
