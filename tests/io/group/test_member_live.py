"""The sans-IO group member on a live cluster (Apache Kafka and Tansu), driven by
`AttachedMachine`: two members share a topic's partitions, commit, fetch what they committed, and
hand everything over when one leaves. Checks the wire (versions, KIP-394, LeaveGroup forms)
against a real coordinator; the io Consumer integrates the member elsewhere."""

from __future__ import annotations

import uuid
from typing import Any

import anyio
import pytest
from _group_apps import App, wait_until

from krafka.io.client import KafkaClient
from krafka.sansio.group import AssignPartitions
from krafka.sansio.group.classic.assignors import CooperativeStickyAssignor, RangeAssignor
from krafka.structs import OffsetAndMetadata, TopicPartition

pytestmark = [pytest.mark.anyio, pytest.mark.broker, pytest.mark.timeout(90)]


@pytest.mark.one_backend
@pytest.mark.parametrize("cooperative", [False, True], ids=["eager", "cooperative"])
async def test_two_members_share_commit_and_hand_over(broker: Any, cooperative: bool) -> None:
    group, topic = f"g-{uuid.uuid4().hex[:8]}", f"t-{uuid.uuid4().hex[:8]}"
    factory = CooperativeStickyAssignor if cooperative else RangeAssignor
    async with (
        KafkaClient(broker.bootstrap_servers) as c1,
        KafkaClient(broker.bootstrap_servers) as c2,
        anyio.create_task_group() as tg,
    ):
        first, second = App(c1, group, topic, factory()), App(c2, group, topic, factory())
        for app in (first, second):
            app.driver.start()
        await tg.start(first.run)  # the topic is auto-created by its metadata request
        await wait_until(lambda: len(c1.metadata.partitions_for(topic)) == 4)
        partitions = frozenset(TopicPartition(topic, p) for p in range(4))
        await wait_until(lambda: first.member.assignment() == partitions)
        await tg.start(second.run)

        def shared() -> bool:
            a, b = first.member.assignment(), second.member.assignment()
            done = bool(second.steps) and not second.events
            return done and a | b == partitions and not a & b and len(a) == len(b) == 2

        await wait_until(shared)
        assert not first.failures and not second.failures
        assert isinstance(second.steps[-1], AssignPartitions)

        mine = sorted(second.member.assignment())
        now = anyio.current_time()
        op = second.member.commit({tp: OffsetAndMetadata(7, "m") for tp in mine}, now, 10)
        committed = await second.driver.outcome(op, timeout=10)
        assert set(committed) == set(mine)
        op = first.member.fetch_committed(mine, anyio.current_time(), 10)
        fetched = await first.driver.outcome(op, timeout=10)
        assert {tp: om.offset for tp, om in fetched.items() if om} == dict.fromkeys(mine, 7)

        op = second.member.leave(anyio.current_time(), timeout=10)
        await second.driver.outcome(op, timeout=10)
        assert second.member.closed and second.member.assignment() == frozenset()
        await wait_until(lambda: first.member.assignment() == partitions)
        meta = first.member.group_metadata()
        assert meta.group_id == group and meta.generation_id >= 1 and meta.member_id
        tg.cancel_scope.cancel()
