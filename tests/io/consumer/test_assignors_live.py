"""Every classic assignor with three krafka members on Apache Kafka's group coordinator: after
each join and leave the assignments are disjoint, complete and balanced (the coordinator picked
the assignor asked for), and every record is consumed exactly once across the rebalances."""

from __future__ import annotations

import time
from collections import Counter
from contextlib import AsyncExitStack
from typing import Any

import anyio
import pytest
from _groups import make_topic, member

from krafka import Consumer, TopicPartition

pytestmark = [pytest.mark.anyio, pytest.mark.broker, pytest.mark.timeout(90)]

PARTITIONS = 6


@pytest.mark.one_backend
@pytest.mark.parametrize("strategy", ["range", "roundrobin", "sticky", "cooperative-sticky"])
async def test_three_members_join_and_leave(kafka: Any, strategy: str) -> None:
    topic = await make_topic(kafka.bootstrap_servers, PARTITIONS, 300)
    everything = {TopicPartition(topic, p) for p in range(PARTITIONS)}
    group = f"{strategy}-{time.time_ns()}"
    seen: Counter[bytes] = Counter()
    members: list[Consumer] = []

    async def settle(wanted: int) -> None:
        """Poll every member (committing what it read) until `wanted` of them split the topic
        evenly."""
        with anyio.fail_after(30):
            while not balanced(members[:wanted], everything):
                for consumer in members[:wanted]:
                    records = await consumer.poll(timeout=0.05)
                    seen.update(r.value for r in records)
                    if records:
                        await consumer.commit()

    async with AsyncExitStack() as stack:
        for count in (1, 2, 3):
            consumer = member(
                kafka.bootstrap_servers, group, partition_assignment_strategy=strategy
            )
            members.append(await stack.enter_async_context(consumer))
            await consumer.subscribe([topic])
            await settle(count)
        assert_shape(strategy, [sorted(p.partition for p in c.assignment()) for c in members])
        kept = [c.assignment() for c in members]
        leaving = members.pop(1)
        del kept[1]
        await leaving.close()
        await settle(2)
        if "sticky" in strategy:  # the members that stayed keep what they had
            assert all(c.assignment() >= before for c, before in zip(members, kept, strict=True))
        with anyio.fail_after(30):
            while sum(seen.values()) < 300:
                for consumer in members:
                    records = await consumer.poll(timeout=0.05)
                    seen.update(r.value for r in records)
                    if records:
                        await consumer.commit()
    assert seen == Counter(b"%d" % i for i in range(300)), "a record missed or read twice"


def balanced(members: list[Consumer], everything: set[TopicPartition]) -> bool:
    owned = [c.assignment() for c in members]
    sizes = {len(a) for a in owned}
    complete = set().union(*owned) == everything and sum(map(len, owned)) == len(everything)
    return complete and max(sizes) - min(sizes) <= 1


def assert_shape(strategy: str, owned: list[list[int]]) -> None:
    """Range gives each member a run of partitions; round-robin deals them out in turn."""
    if strategy == "range":
        assert sorted(owned) == [[0, 1], [2, 3], [4, 5]]
    elif strategy == "roundrobin":
        assert sorted(owned) == [[0, 3], [1, 4], [2, 5]]
