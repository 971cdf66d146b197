"""The sans-IO group member on librdkafka's mock cluster: the coordinator moves and answers
NOT_COORDINATOR / COORDINATOR_LOAD_IN_PROGRESS to JoinGroup, Heartbeat and OffsetCommit (and
drops SyncGroup connections): the members recover, keep their assignment where no rebalance was
due, and the committed positions survive the move."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from _group_apps import App, LeaderSyncsLast, wait_until

from krafka.protocol.error_codes import ErrorCode
from krafka.protocol.messages import ApiKey
from krafka.sansio.group import MemberState
from krafka.sansio.group.classic.assignors import CooperativeStickyAssignor
from krafka.structs import OffsetAndMetadata, TopicPartition
from krafka.testing.mockcluster import MockCluster, MockFault

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(90)]
C = ErrorCode
GROUP, TOPIC = "movers", "t"
PARTITIONS = frozenset(TopicPartition(TOPIC, p) for p in range(6))


def stable(*apps: App) -> bool:
    return all(a.member.state is MemberState.STABLE and not a.events for a in apps)


def shared(*apps: App) -> bool:
    owned = [a.member.assignment() for a in apps]
    disjoint = sum(len(o) for o in owned) == len(frozenset().union(*owned))
    return stable(*apps) and disjoint and frozenset().union(*owned) == PARTITIONS


@pytest.mark.one_backend
async def test_coordinator_moves_and_coordinator_errors(
    make_mock_cluster: Any,
) -> None:
    cluster: MockCluster = make_mock_cluster(3, topics={TOPIC: 6})
    cluster.set_group_initial_rebalance_delay(0)
    cluster.set_coordinator("group", GROUP, 1)
    async with (
        LeaderSyncsLast(cluster.bootstrap_servers) as c1,
        LeaderSyncsLast(cluster.bootstrap_servers) as c2,
        anyio.create_task_group() as tg,
    ):
        first = App(c1, GROUP, TOPIC, CooperativeStickyAssignor(), session_timeout=3.0)
        second = App(c2, GROUP, TOPIC, CooperativeStickyAssignor(), session_timeout=3.0)
        for app in (first, second):
            app.driver.start()
            await tg.start(app.run)
        await wait_until(lambda: shared(first, second) and len(first.member.assignment()) == 3)
        generation = first.member.generation.generation_id

        # positions committed before the move
        mine = sorted(first.member.assignment())
        op = first.member.commit(
            {tp: OffsetAndMetadata(40 + tp.partition) for tp in mine}, anyio.current_time(), 15
        )
        await first.driver.outcome(op, timeout=15)

        # the coordinator moves; heartbeats and commits hear about it in different ways
        cluster.set_coordinator("group", GROUP, 2)
        cluster.push_request_errors(
            ApiKey.HEARTBEAT, C.NOT_COORDINATOR, C.COORDINATOR_LOAD_IN_PROGRESS
        )
        cluster.push_request_errors(
            ApiKey.OFFSET_COMMIT, C.COORDINATOR_LOAD_IN_PROGRESS, C.NOT_COORDINATOR
        )
        await anyio.sleep(2.0)
        theirs = sorted(second.member.assignment())
        op = second.member.commit(
            {tp: OffsetAndMetadata(70 + tp.partition) for tp in theirs}, anyio.current_time(), 15
        )
        await second.driver.outcome(op, timeout=15)
        assert shared(first, second)
        assert first.member.generation.generation_id == generation  # no rebalance happened

        # a rebalance through a moving, loading coordinator and a dropped SyncGroup
        cluster.set_coordinator("group", GROUP, 3)
        cluster.push_request_errors(
            ApiKey.JOIN_GROUP, C.COORDINATOR_LOAD_IN_PROGRESS, C.NOT_COORDINATOR
        )
        cluster.push_request_errors(ApiKey.SYNC_GROUP, MockFault.DISCONNECT)
        third = App(
            LeaderSyncsLast(cluster.bootstrap_servers),
            GROUP,
            TOPIC,
            CooperativeStickyAssignor(),
            3.0,
        )
        async with third.client:
            third.driver.start()
            await tg.start(third.run)
            await wait_until(
                lambda: (
                    shared(first, second, third)
                    and sorted(len(a.member.assignment()) for a in (first, second, third))
                    == [2, 2, 2]
                ),
                timeout=60,
            )
            assert not (first.failures or second.failures or third.failures)

            # every committed position survived the moves
            op = third.member.fetch_committed(sorted(PARTITIONS), anyio.current_time(), 15)
            committed = await third.driver.outcome(op, timeout=15)
            expected = {tp: 40 + tp.partition for tp in mine} | {
                tp: 70 + tp.partition for tp in theirs
            }
            assert {tp: om.offset for tp, om in committed.items() if om} == expected
            tg.cancel_scope.cancel()
