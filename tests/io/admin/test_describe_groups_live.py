"""`AdminClient.describe_groups` of live groups on Apache Kafka, compared with what the members
themselves hold: a classic group (type, state, protocol, assignor, members with their client
ids, static instance id and assignments), a KIP-848 consumer group (server assignor, member
epochs, subscriptions, assignments) and a KIP-932 share group."""

from __future__ import annotations

import time
from typing import Any

import anyio
import pytest

from krafka import AdminClient, Consumer, NewTopic, ShareConsumer, TopicPartition
from krafka.sansio.admin.groups import GroupState, GroupType

pytestmark = [pytest.mark.anyio, pytest.mark.broker, pytest.mark.timeout(60)]


async def new_topic(bootstrap: str, partitions: int) -> str:
    topic = f"described-{time.time_ns()}"
    async with AdminClient(bootstrap) as admin:
        (await admin.create_topics([NewTopic(topic, partitions)])).raise_for_errors()
    return topic


async def describe(bootstrap: str, group: str) -> Any:
    async with AdminClient(bootstrap) as admin:
        return (await admin.describe_groups([group])).raise_for_errors()[group]


async def settle(members: list[Any], partitions: int) -> None:
    with anyio.fail_after(30):
        while sum(len(m.assignment()) for m in members) != partitions or not all(
            m.assignment() for m in members
        ):
            for m in members:
                await m.poll(timeout=0.05)


@pytest.mark.parametrize("protocol", ["classic", "consumer"])
async def test_a_consumer_group_as_its_members_see_it(kafka: Any, protocol: str) -> None:
    topic = await new_topic(kafka.bootstrap_servers, 4)
    group = f"{protocol}-{time.time_ns()}"
    options: dict[str, Any] = {
        "group_id": group,
        "group_protocol": protocol,
        "fetch_max_wait": 0.1,
        "enable_auto_commit": False,
    }
    if protocol == "classic":
        options.update(partition_assignment_strategy="roundrobin", session_timeout=6.0)
        options.update(heartbeat_interval=0.5)
    else:
        options.update(group_remote_assignor="range")
    async with (
        Consumer(kafka.bootstrap_servers, client_id="alpha", **options) as a,
        Consumer(
            kafka.bootstrap_servers, client_id="beta", group_instance_id="beta-1", **options
        ) as b,
    ):
        await a.subscribe([topic])
        await b.subscribe([topic])
        await settle([a, b], 4)
        with anyio.fail_after(20):  # the coordinator has acknowledged assignments too
            while (described := await describe(kafka.bootstrap_servers, group)).state not in (
                GroupState.STABLE,
            ) or any(not m.assignment for m in described.members):
                await a.poll(timeout=0.1)
                await b.poll(timeout=0.1)
        by_client = {m.client_id: m for m in described.members}
        assert set(by_client) == {"alpha", "beta"}
        for consumer, name in ((a, "alpha"), (b, "beta")):
            seen = by_client[name]
            assert seen.member_id == consumer.group_metadata().member_id
            assert set(seen.assignment) == consumer.assignment()
        assert by_client["beta"].group_instance_id == "beta-1"
        assert by_client["alpha"].group_instance_id is None
        assert described.coordinator is not None
        if protocol == "classic":
            assert described.type is GroupType.CLASSIC
            assert (described.protocol_type, described.assignor) == ("consumer", "roundrobin")
        else:
            assert described.type is GroupType.CONSUMER
            assert described.assignor == "range"
            assert described.group_epoch is not None and described.group_epoch >= 2
            for seen in described.members:
                assert seen.subscribed_topics == (topic,)
                assert seen.member_epoch == described.group_epoch
                assert seen.target_assignment == seen.assignment


async def test_a_share_group_as_its_members_see_it(kafka: Any) -> None:
    topic = await new_topic(kafka.bootstrap_servers, 2)
    group = f"share-{time.time_ns()}"
    async with (
        ShareConsumer(kafka.bootstrap_servers, group_id=group, client_id="s1") as a,
        ShareConsumer(kafka.bootstrap_servers, group_id=group, client_id="s2") as b,
    ):
        await a.subscribe([topic])
        await b.subscribe([topic])
        everything = {TopicPartition(topic, p) for p in range(2)}
        with anyio.fail_after(30):
            while not (a.assignment() and b.assignment()):
                await a.poll(timeout=0.1)
                await b.poll(timeout=0.1)
            while (described := await describe(kafka.bootstrap_servers, group)).state is not (
                GroupState.STABLE
            ):
                await a.poll(timeout=0.1)
        assert described.type is GroupType.SHARE
        assert (described.protocol_type, described.assignor) == ("share", "simple")
        by_client = {m.client_id: m for m in described.members}
        assert set(by_client) == {"s1", "s2"}
        for consumer, name in ((a, "s1"), (b, "s2")):
            assert set(by_client[name].assignment) == consumer.assignment()
            assert by_client[name].subscribed_topics == (topic,)
        assert set().union(*(m.assignment for m in described.members)) == everything
