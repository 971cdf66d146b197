"""Staying in the group: max_poll_interval, the session timeout, heartbeat pacing."""

from __future__ import annotations

import pytest
from _group_scripted import Member, commit_response, tps

from krafka.errors import KafkaConnectionError
from krafka.protocol.error_codes import ErrorCode
from krafka.protocol.messages import (
    HeartbeatRequest,
    LeaveGroupRequest,
    LeaveGroupResponse,
    OffsetCommitRequest,
)
from krafka.sansio.group import LosePartitions, MemberState
from krafka.sansio.group.classic.liveness import POLL_EXPIRED, SESSION_EXPIRED
from krafka.structs import OffsetAndMetadata, TopicPartition

C = ErrorCode


def stable(m: Member) -> None:
    m.topics(t=2)
    m.start("t")
    m.join_as_follower(tps("t-0", "t-1"))


def keep_heartbeating(m: Member, seconds: float) -> None:
    """Answer every heartbeat for `seconds` without polling."""
    for _ in range(int(seconds / m.config.heartbeat_interval)):
        m.heartbeat()


def test_max_poll_interval_exceeded_leaves_loses_and_rejoins_at_the_next_poll() -> None:
    m = Member(max_poll_interval=5.0)
    stable(m)
    keep_heartbeating(m, 4)
    m.advance(1)
    leave = m.expect(LeaveGroupRequest)
    request = m.request(leave)
    assert [(x.member_id, x.reason) for x in request.members] == [
        ("m1", "consumer poll timeout has expired")
    ]
    assert m.member.state is MemberState.UNJOINED
    lost = m.expect_step(LosePartitions)
    assert lost.partitions == tps("t-0", "t-1") and lost.reason == POLL_EXPIRED
    m.answer(lost)
    m.talk.reply(leave, LeaveGroupResponse())
    m.advance(60)
    m.nothing_sent()  # no heartbeats, no join: the application is still busy
    m.poll()
    sent, join = m.join_request()
    assert join.member_id == "" and m.subscription_sent(join).owned_partitions == ()
    # aiokafka#727: a fresh generation, not a member stuck at generation -1
    m.reply_join(sent, member_id="m2", generation=5, leader="other")
    sync, request = m.sync_request()
    assert (request.generation_id, request.member_id) == (5, "m2")
    m.reply_sync(sync, tps("t-1"))
    m.answer_steps_until_assigned()
    op = m.member.commit({TopicPartition("t", 1): OffsetAndMetadata(9)}, m.now)
    commit = m.expect(OffsetCommitRequest)
    assert m.request(commit).generation_id_or_member_epoch == 5
    m.talk.reply(commit, commit_response(m.request(commit)))
    assert m.talk.outcome(op)


def test_polling_keeps_the_member_in_the_group() -> None:
    m = Member(max_poll_interval=5.0)
    stable(m)
    for _ in range(20):
        m.heartbeat()
        m.poll()
    assert m.member.state is MemberState.STABLE


def test_static_member_never_sends_leave_group_when_the_poll_interval_runs_out() -> None:
    m = Member(instance_id="i1", max_poll_interval=5.0)
    stable(m)
    keep_heartbeating(m, 4)
    m.advance(1)
    lost = m.expect_step(LosePartitions)
    assert not any(isinstance(m.request(s), LeaveGroupRequest) for s in m.talk.outbox)
    m.answer(lost)
    m.poll()
    _, join = m.join_request()
    assert join.group_instance_id == "i1"


def test_session_timeout_without_heartbeat_answers_loses_the_partitions() -> None:
    m = Member(session_timeout=3.0)
    stable(m)
    m.advance(1)
    sent = m.expect(HeartbeatRequest)  # never answered
    m.advance(2)
    lost = m.expect_step(LosePartitions)
    assert lost.reason == SESSION_EXPIRED and lost.partitions == tps("t-0", "t-1")
    assert m.member.state is MemberState.UNJOINED
    m.coordinator_moved()  # Java's markCoordinatorUnknown: the session may have moved with it
    m.answer(lost)
    m.talk.fail(sent, KafkaConnectionError("timed out"))
    m.poll()
    _, join = m.join_request()
    assert join.member_id == "m1"  # kept: the coordinator may still know it


def test_failed_heartbeats_back_off_and_the_session_still_expires() -> None:
    m = Member(session_timeout=3.0)
    stable(m)
    sent_at = []
    while m.member.state is MemberState.STABLE:
        m.advance(0.05)
        m.talk.step()
        for sent in list(m.talk.outbox):
            m.talk.outbox.remove(sent)
            assert isinstance(m.request(sent), HeartbeatRequest)
            sent_at.append(m.now)
            m.talk.fail(sent, KafkaConnectionError("reset"))
    assert m.now == pytest.approx(3.0, abs=0.06)
    assert len(sent_at) >= 10  # retried after 0.1 s backoffs, not every heartbeat interval
    assert m.expect_step(LosePartitions).reason == SESSION_EXPIRED


def test_one_heartbeat_in_flight_at_a_time() -> None:
    m = Member()
    stable(m)
    m.advance(1)
    m.expect(HeartbeatRequest)
    m.advance(1)
    m.nothing_sent()


def test_the_next_deadline_is_the_next_heartbeat() -> None:
    m = Member()
    stable(m)
    assert m.member.next_deadline() == pytest.approx(m.now + 1.0)


def test_nothing_is_sent_while_idle() -> None:
    m = Member()
    m.subscribe("t")
    m.advance(100)
    m.nothing_sent()
    assert m.member.next_deadline() is None
    m.poll()
    m.join_request()
