"""Leaving: close (auto-commit, revoke or lose, LeaveGroup) and unsubscribe."""

from __future__ import annotations

import pytest
from _assignors import CooperativeBalance
from _group_scripted import Member, commit_response, tps

from krafka.errors import InvalidStateError, KafkaConnectionError, UnknownMemberIdError
from krafka.protocol.error_codes import ErrorCode
from krafka.protocol.messages import (
    LeaveGroupRequest,
    LeaveGroupResponse,
    OffsetCommitRequest,
)
from krafka.sansio.connection import Priority
from krafka.sansio.group import (
    CommitPositions,
    CommitReason,
    GroupMembershipOperation,
    LeaveReason,
    LosePartitions,
    MemberState,
    RevokePartitions,
)
from krafka.structs import OffsetAndMetadata, TopicPartition

C = ErrorCode
T0 = TopicPartition("t", 0)


def stable(m: Member) -> None:
    m.topics(t=2)
    m.start("t")
    m.join_as_follower(tps("t-0", "t-1"))


def test_close_commits_revokes_and_leaves() -> None:
    m = Member(auto_commit=True)
    stable(m)
    op = m.member.leave(m.now, timeout=5)
    step = m.expect_step(CommitPositions)
    assert step.reason is CommitReason.LEAVE
    m.answer(step, {T0: OffsetAndMetadata(12)})
    commit = m.expect(OffsetCommitRequest)
    m.talk.reply(commit, commit_response(m.request(commit)))
    revoke = m.expect_step(RevokePartitions)
    assert revoke.partitions == tps("t-0", "t-1")
    m.answer(revoke)
    leave = m.expect(LeaveGroupRequest)
    assert [(x.member_id, x.group_instance_id) for x in m.request(leave).members] == [("m1", None)]
    assert m.member.state is MemberState.UNJOINED and m.member.generation.generation_id == -1
    assert m.talk.pending(op)
    m.talk.reply(leave, LeaveGroupResponse())
    assert m.talk.outcome(op) is None
    assert m.member.closed
    m.advance(60)
    m.nothing_sent()
    with pytest.raises(InvalidStateError):
        m.subscribe("t")


def test_leave_group_before_v3_names_the_member_directly() -> None:
    m = Member()
    m.talk.versions = {13: 2}
    stable(m)
    m.member.leave(m.now)
    m.answer(m.expect_step(RevokePartitions))
    leave = m.expect(LeaveGroupRequest)
    request = m.request(leave)
    assert request.member_id == "m1" and request.members == []


def test_close_while_rebalancing_loses_what_is_still_owned() -> None:
    m = Member([CooperativeBalance()])
    stable(m)
    m.heartbeat(C.REBALANCE_IN_PROGRESS)
    m.poll()
    m.join_request()
    op = m.member.leave(m.now)
    lost = m.expect_step(LosePartitions)
    assert lost.partitions == tps("t-0", "t-1")
    m.answer(lost)
    leave = m.expect(LeaveGroupRequest)
    m.talk.reply(leave, LeaveGroupResponse())
    assert m.talk.outcome(op) is None


def test_static_member_closes_without_leave_group() -> None:
    m = Member(instance_id="i1")
    stable(m)
    op = m.member.leave(m.now)
    m.answer(m.expect_step(RevokePartitions))
    assert m.talk.outcome(op) is None
    m.nothing_sent()


def test_leave_group_error_fails_the_operation_but_the_member_left() -> None:
    m = Member()
    stable(m)
    op = m.member.leave(m.now)
    m.answer(m.expect_step(RevokePartitions))
    leave = m.expect(LeaveGroupRequest)
    member = LeaveGroupResponse.MemberResponse(member_id="m1", error_code=C.UNKNOWN_MEMBER_ID)
    m.talk.reply(leave, LeaveGroupResponse(members=[member]))
    with pytest.raises(UnknownMemberIdError):
        m.talk.outcome(op)
    assert m.member.closed


def test_close_with_the_coordinator_gone_is_bounded_by_its_timeout() -> None:
    m = Member(auto_commit=True)
    stable(m)
    op = m.member.leave(m.now, timeout=2)
    m.answer(m.expect_step(CommitPositions), {T0: OffsetAndMetadata(3)})
    commit = m.expect(OffsetCommitRequest)
    m.talk.fail(commit, KafkaConnectionError("gone"))
    while m.talk.pending(op):
        m.advance(0.25)
        for sent in list(m.talk.outbox):  # nobody answers anything
            m.talk.outbox.remove(sent)
            m.talk.fail(sent, KafkaConnectionError("gone"))
        step = m.step()
        if step is not None:
            m.answer(step)
    assert m.now <= 2.5
    assert m.member.closed


def test_close_when_never_joined_completes_at_once() -> None:
    m = Member()
    m.subscribe("t")
    op = m.member.leave(m.now)
    assert m.talk.outcome(op) is None
    assert m.member.leave(m.now) > op  # closing again is fine


def test_unsubscribe_revokes_leaves_and_allows_subscribing_again() -> None:
    m = Member(auto_commit=True)
    stable(m)
    op = m.member.leave(m.now, reason=LeaveReason.UNSUBSCRIBE)
    m.answer(m.expect_step(RevokePartitions))  # no auto-commit on unsubscribe
    leave = m.expect(LeaveGroupRequest)
    m.talk.reply(leave, LeaveGroupResponse())
    assert m.talk.outcome(op) is None
    assert not m.member.closed and m.member.subscription() == frozenset()
    m.poll()
    m.advance(10)
    m.nothing_sent()
    m.subscribe("u")
    m.poll()
    _, join = m.join_request()
    assert m.subscription_sent(join).topics == ("u",) and join.member_id == ""


def test_commit_after_close_fails() -> None:
    m = Member()
    m.subscribe("t")
    m.talk.outcome(m.member.leave(m.now))
    with pytest.raises(InvalidStateError):
        m.talk.outcome(m.member.commit({T0: OffsetAndMetadata(1)}, m.now))


def test_close_during_a_pending_join_leaves_on_the_control_lane() -> None:
    """Brokers answer one request per connection at a time: a LeaveGroup behind the member's
    own pending JoinGroup would wait out the rebalance and be lost at close, leaving a ghost
    member (on Tansu, a ghost leader nobody replaces)."""
    m = Member()
    m.topics(t=2)
    m.start("t")
    first, _ = m.join_request()
    m.reply_join(first, member_id="m1", code=C.MEMBER_ID_REQUIRED)
    pending, request = m.join_request()
    assert request.member_id == "m1"
    op = m.member.leave(m.now, timeout=5)
    leave = m.expect(LeaveGroupRequest)
    assert leave.priority is Priority.HIGH
    assert [x.member_id for x in m.request(leave).members] == ["m1"]
    m.talk.reply(leave, LeaveGroupResponse())
    assert m.talk.outcome(op) is None
    m.reply_join(pending, member_id="m1")
    m.nothing_sent()


@pytest.mark.parametrize(
    ("instance_id", "operation", "leaves"),
    [
        (None, GroupMembershipOperation.DEFAULT, True),
        (None, GroupMembershipOperation.LEAVE_GROUP, True),
        (None, GroupMembershipOperation.REMAIN_IN_GROUP, False),
        ("i1", GroupMembershipOperation.DEFAULT, False),
        ("i1", GroupMembershipOperation.LEAVE_GROUP, True),
        ("i1", GroupMembershipOperation.REMAIN_IN_GROUP, False),
    ],
)
def test_close_leaves_as_its_group_membership_operation_says(
    instance_id: str | None, operation: GroupMembershipOperation, leaves: bool
) -> None:
    """KIP-1092's CloseOptions: LEAVE_GROUP makes a static member send LeaveGroup naming its
    instance id; REMAIN_IN_GROUP sends none (the session timeout decides)."""
    m = Member(instance_id=instance_id)
    stable(m)
    op = m.member.leave(m.now, operation=operation)
    m.answer(m.expect_step(RevokePartitions))
    if not leaves:
        assert m.talk.outcome(op) is None and m.member.closed
        m.nothing_sent()
        return
    leave = m.expect(LeaveGroupRequest)
    assert [(x.member_id, x.group_instance_id) for x in m.request(leave).members] == [
        ("m1", instance_id)
    ]
    m.talk.reply(leave, LeaveGroupResponse())
    assert m.talk.outcome(op) is None and m.member.closed


def test_unsubscribe_of_a_dynamic_member_leaves_whatever_a_close_would_do() -> None:
    m = Member()
    stable(m)
    op = m.member.leave(m.now, reason=LeaveReason.UNSUBSCRIBE)
    m.answer(m.expect_step(RevokePartitions))
    m.talk.reply(m.expect(LeaveGroupRequest), LeaveGroupResponse())
    assert m.talk.outcome(op) is None and not m.member.closed
