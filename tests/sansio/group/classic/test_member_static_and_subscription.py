"""Static membership (KIP-345) and subscriptions: topic sets, patterns, metadata changes."""

from __future__ import annotations

import re

import pytest
from _assignors import CooperativeBalance, EagerRoundRobin
from _group_scripted import Member, metadata, tps

from krafka.errors import FencedInstanceIdError
from krafka.protocol.error_codes import ErrorCode
from krafka.protocol.messages import HeartbeatRequest, JoinGroupRequest
from krafka.sansio.actions import RefreshMetadata
from krafka.sansio.group import (
    AssignPartitions,
    GroupFailed,
    MemberState,
    RevokePartitions,
)

C = ErrorCode


# -- static membership ----------------------------------------------------------------------


def test_static_member_names_its_instance_in_every_group_request() -> None:
    m = Member(instance_id="pod-0")
    m.topics(t=2)
    m.start("t")
    sent, join = m.join_request()
    assert join.group_instance_id == "pod-0" and sent.min_version == 5
    m.reply_join(sent, leader="other")
    sync, request = m.sync_request()
    assert request.group_instance_id == "pod-0" and sync.min_version == 3
    m.reply_sync(sync, tps("t-0"))
    m.answer_steps_until_assigned()
    hb = m.heartbeat()
    assert m.request(hb).group_instance_id == "pod-0" and hb.min_version == 3
    meta = m.member.group_metadata()
    assert meta.group_instance_id == "pod-0"


def test_static_member_restart_gets_its_assignment_back_without_leaving() -> None:
    first = Member(instance_id="pod-0")
    first.topics(t=2)
    first.start("t")
    first.join_as_follower(tps("t-0", "t-1"), member_id="old-id", generation=4)
    op = first.member.leave(first.now)
    first.answer(first.expect_step(RevokePartitions))
    assert first.talk.outcome(op) is None
    first.nothing_sent()  # no LeaveGroup: the coordinator keeps the member for its session

    again = Member(instance_id="pod-0")
    again.topics(t=2)
    again.start("t")
    sent, join = again.join_request()
    assert join.member_id == "" and join.group_instance_id == "pod-0"
    # the coordinator recognises the instance: new member id, same generation, no rebalance
    again.reply_join(sent, member_id="new-id", generation=4, leader="other")
    sync, _ = again.sync_request()
    again.reply_sync(sync, tps("t-0", "t-1"))
    assign = again.expect_step(AssignPartitions)
    assert assign.added == tps("t-0", "t-1") and assign.generation == 4


def test_returning_static_leader_skips_the_assignment() -> None:
    assignor = EagerRoundRobin()
    m = Member([assignor], instance_id="pod-0")
    m.topics(t=2)
    m.start("t")
    sent, join = m.join_request()
    members = {"m1": join.protocols[0].metadata, "m2": metadata(["t"])}
    m.reply_join(sent, member_id="m1", members=members, skip_assignment=True)
    sync, request = m.sync_request()
    assert request.assignments == []
    m.reply_sync(sync, tps("t-1"))
    assert m.answer_steps_until_assigned().assignment == tps("t-1")


def test_fenced_static_instance_on_join_is_fatal() -> None:
    m = Member(instance_id="pod-0")
    m.start("t")
    sent, _ = m.join_request()
    m.reply_join(sent, code=C.FENCED_INSTANCE_ID)
    [failed] = m.events_of(GroupFailed)
    assert isinstance(failed.error, FencedInstanceIdError) and "pod-0" in str(failed.error)


# -- subscriptions --------------------------------------------------------------------------


def stable(m: Member, *topics: str, partitions: frozenset = tps("t-0", "t-1")) -> None:
    m.topics(t=2, u=2)
    m.start(*topics)
    m.join_as_follower(partitions)


def test_a_new_subscription_rejoins_at_the_next_poll() -> None:
    m = Member()
    stable(m, "t")
    m.subscribe("t", "u")
    m.nothing_sent()
    m.poll()
    m.answer(m.expect_step(RevokePartitions))
    _, join = m.join_request()
    assert m.subscription_sent(join).topics == ("t", "u")


def test_cooperative_member_revokes_partitions_of_topics_it_no_longer_wants() -> None:
    m = Member([CooperativeBalance()])
    m.topics(t=2, u=2)
    m.start("t", "u")
    m.join_as_follower(tps("t-0", "u-0"))
    m.subscribe("t")
    m.poll()
    revoke = m.expect_step(RevokePartitions)
    assert revoke.partitions == tps("u-0")
    m.answer(revoke)
    _, join = m.join_request()
    assert set(m.subscription_sent(join).owned_partitions) == set(tps("t-0"))


def test_an_assignment_outside_the_subscription_is_not_applied() -> None:
    m = Member()
    m.topics(t=2)
    m.start("t")
    sent, _ = m.join_request()
    m.reply_join(sent, leader="other")
    sync, _ = m.sync_request()
    m.reply_sync(sync, tps("other-0"))
    revoke = m.expect_step(RevokePartitions)  # eager, as Java: revoke (nothing), no assign
    assert revoke.partitions == frozenset()
    m.answer(revoke)
    m.join_request()  # rejoins at once with the current subscription
    assert m.member.assignment() == frozenset()


def test_pattern_subscription_waits_for_metadata_and_follows_new_topics() -> None:
    m = Member()
    m.member.subscribe(re.compile(r"orders-.*"), m.now)
    assert m.events_of(RefreshMetadata) == [RefreshMetadata(None)]
    m.poll()
    m.nothing_sent()  # not matched against any metadata yet
    m.topics(**{"orders-eu": 1, "payments": 1, "__consumer_offsets": 50})
    sent, join = m.join_request()
    assert m.subscription_sent(join).topics == ("orders-eu",)
    m.reply_join(sent, leader="other")
    sync, _ = m.sync_request()
    m.reply_sync(sync, tps("orders-eu-0"))
    m.answer_steps_until_assigned()
    m.topics(**{"orders-eu": 1, "orders-us": 2, "payments": 1})
    m.heartbeat()
    m.nothing_sent()
    m.poll()
    m.answer(m.expect_step(RevokePartitions))
    _, join = m.join_request()
    assert m.subscription_sent(join).topics == ("orders-eu", "orders-us")


def test_leader_rejoins_when_a_subscribed_topic_grows() -> None:
    m = Member()
    m.topics(t=2)
    m.start("t")
    sent, join = m.join_request()
    m.reply_join(sent, members={"m1": join.protocols[0].metadata})
    sync, _ = m.sync_request()
    m.reply_sync(sync, tps("t-0", "t-1"))
    m.answer_steps_until_assigned()
    m.poll()
    m.nothing_sent()
    m.topics(t=3)
    m.poll()
    m.answer(m.expect_step(RevokePartitions))
    m.join_request()


def test_follower_leaves_partition_changes_to_the_leader() -> None:
    m = Member()
    stable(m, "t")
    m.topics(t=5)
    m.poll()
    m.nothing_sent()
    assert m.member.state is MemberState.STABLE


def test_subscribing_to_nothing_is_refused() -> None:
    m = Member()
    with pytest.raises(ValueError, match="at least one topic"):
        m.member.subscribe([], m.now)
    with pytest.raises(ValueError, match="non-empty"):
        m.member.subscribe([""], m.now)


def test_heartbeats_stop_once_unjoined() -> None:
    m = Member()
    stable(m, "t")
    m.heartbeat(C.UNKNOWN_MEMBER_ID)
    m.answer(m.step())
    m.advance(30)
    assert not any(
        isinstance(m.request(s), HeartbeatRequest | JoinGroupRequest) for s in m.talk.outbox
    )
