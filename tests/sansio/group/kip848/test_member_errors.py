"""A KIP-848 member's heartbeat errors, leaving, and the poll interval, in scripted
conversations."""

from __future__ import annotations

import base64
import re
import uuid

import pytest
from _kip848_scripted import GROUP, Kip848, owned_in, tps

from krafka.errors import (
    CommitFailedError,
    GroupAuthorizationFailedError,
    InvalidRegularExpressionError,
    KafkaConnectionError,
    KafkaTimeoutError,
    KrafkaError,
    UnsupportedVersionError,
)
from krafka.protocol.error_codes import ErrorCode
from krafka.protocol.messages import (
    ConsumerGroupHeartbeatRequest,
    OffsetCommitRequest,
    OffsetCommitResponse,
)
from krafka.sansio.group.classic.member import LeaveReason
from krafka.sansio.group.events import (
    AssignPartitions,
    GroupFailed,
    GroupMembershipOperation,
    LosePartitions,
    RevokePartitions,
)
from krafka.sansio.group.kip848.member import ConsumerMember
from krafka.sansio.group.membership.member import new_member_id
from krafka.sansio.group.membership.state import MembershipState as S
from krafka.structs import OffsetAndMetadata


def fenced(code: int) -> Kip848:
    m = Kip848()
    m.join("a", assigned=tps("a-0"), epoch=4)
    m.advance(5)
    sent, _ = m.heartbeat()
    m.reply(sent, code=code, epoch=0)
    return m


def test_fenced_member_epoch_loses_the_partitions_and_rejoins_with_the_same_id() -> None:
    m = fenced(ErrorCode.FENCED_MEMBER_EPOCH)
    assert m.member.state is S.FENCED
    lose = m.expect_step(LosePartitions)
    assert lose.partitions == tps("a-0")
    m.nothing_sent()  # no heartbeat while fenced
    m.answer(lose)
    assert m.member.state is S.JOINING
    assert m.member.assignment() == frozenset()
    _, request = m.heartbeat()  # no backoff
    assert (request.member_id, request.member_epoch) == ("member-1", 0)
    assert owned_in(request) == frozenset()  # a rejoin owns nothing
    assert request.subscribed_topic_names == ["a"]


def test_unknown_member_id_rejoins_with_the_same_member_id() -> None:
    """KIP-1082 (Java's AbstractMembershipManager): the client's own id is kept for the life
    of the member; a fenced or unknown member rejoins with it at epoch 0."""
    m = fenced(ErrorCode.UNKNOWN_MEMBER_ID)
    m.answer(m.expect_step(LosePartitions))
    sent, request = m.heartbeat()
    assert (request.member_id, request.member_epoch) == ("member-1", 0)
    m.reply(sent, epoch=7, assigned=tps("a-0"))
    m.poll()
    m.answer_steps()
    sent, _ = m.heartbeat()
    m.reply(sent, code=ErrorCode.FENCED_MEMBER_EPOCH, epoch=0)
    m.answer(m.expect_step(LosePartitions))
    _, request = m.heartbeat()
    assert (request.member_id, request.member_epoch) == ("member-1", 0)


def test_the_member_id_is_a_base64url_uuid_as_javas() -> None:
    """Java's `Uuid.randomUuid().toString()`: 16 random bytes (a v4 UUID), base64url without
    padding (22 characters), never starting with "-"."""
    ids = {new_member_id() for _ in range(2000)}
    assert len(ids) == 2000
    for member_id in ids:
        assert re.fullmatch(r"[A-Za-z0-9_-]{22}", member_id) and member_id[0] != "-"
        raw = base64.urlsafe_b64decode(member_id + "==")
        assert uuid.UUID(bytes=raw).version == 4
    assert re.fullmatch(r"[A-Za-z0-9_-]{22}", ConsumerMember(Kip848().config).member_id)


def test_stale_member_epoch_takes_the_answers_epoch_and_retries() -> None:
    m = Kip848()
    m.join("a", assigned=tps("a-0"), epoch=4)
    m.advance(5)
    sent, _ = m.heartbeat()
    m.reply(sent, code=ErrorCode.STALE_MEMBER_EPOCH, epoch=6)
    assert m.member.state is S.STABLE
    m.advance(0.1)
    _, request = m.heartbeat()
    assert request.member_epoch == 6
    assert owned_in(request) == tps("a-0")  # full after a failure


def test_stale_member_epoch_without_an_epoch_rejoins() -> None:
    m = fenced(ErrorCode.STALE_MEMBER_EPOCH)
    assert m.member.state is S.FENCED
    m.answer(m.expect_step(LosePartitions))
    _, request = m.heartbeat()
    assert (request.member_id, request.member_epoch) == ("member-1", 0)


def test_unreleased_instance_id_rejoins_three_times_then_fails() -> None:
    m = Kip848(instance_id="i1")
    m.subscribe("a")
    m.poll()
    for _ in range(3):
        sent, request = m.heartbeat()
        assert request.member_epoch == 0
        m.reply(sent, code=ErrorCode.UNRELEASED_INSTANCE_ID, epoch=0)
        assert m.member.state is S.FENCED
        m.talk.step()
        assert m.member.state is S.JOINING  # nothing to lose: rejoining at once
    sent, _ = m.heartbeat()
    m.reply(sent, code=ErrorCode.UNRELEASED_INSTANCE_ID, epoch=0)
    assert m.member.state is S.FATAL
    (failed,) = m.events_of(GroupFailed)
    assert failed.error.code == ErrorCode.UNRELEASED_INSTANCE_ID  # type: ignore[attr-defined]


@pytest.mark.parametrize("code", [ErrorCode.NOT_COORDINATOR, ErrorCode.COORDINATOR_NOT_AVAILABLE])
def test_a_moved_coordinator_is_reported_and_heartbeats_go_without_backoff(code: int) -> None:
    m = Kip848()
    m.join("a", assigned=tps("a-0"))
    m.advance(5)
    sent, _ = m.heartbeat()
    m.reply(sent, code=code)
    m.coordinator_moved()
    _, request = m.heartbeat()
    assert owned_in(request) == tps("a-0")


def test_a_loading_coordinator_is_retried_with_backoff() -> None:
    m = Kip848()
    m.join("a", assigned=tps("a-0"))
    m.advance(5)
    sent, _ = m.heartbeat()
    m.reply(sent, code=ErrorCode.COORDINATOR_LOAD_IN_PROGRESS)
    assert m.member.state is S.STABLE
    m.nothing_sent()
    assert m.member.next_deadline() == pytest.approx(m.now + 0.1)
    m.talk.advance_to_deadline()
    m.heartbeat()


def test_a_lost_connection_sends_a_full_heartbeat_after_backoff() -> None:
    m = Kip848()
    m.join("a", assigned=tps("a-0"))
    m.advance(5)
    sent = m.expect(ConsumerGroupHeartbeatRequest)
    m.talk.fail(sent, KafkaConnectionError("reset"))
    m.advance(0.1)
    _, request = m.heartbeat()
    assert owned_in(request) == tps("a-0")


@pytest.mark.parametrize(
    ("code", "kind"),
    [
        (ErrorCode.GROUP_AUTHORIZATION_FAILED, GroupAuthorizationFailedError),
        (ErrorCode.INVALID_REGULAR_EXPRESSION, InvalidRegularExpressionError),
        (ErrorCode.UNSUPPORTED_ASSIGNOR, KrafkaError),
        (ErrorCode.UNSUPPORTED_VERSION, UnsupportedVersionError),
        (ErrorCode.FENCED_INSTANCE_ID, KrafkaError),
        (ErrorCode.INVALID_REQUEST, KrafkaError),
        (ErrorCode.GROUP_MAX_SIZE_REACHED, KrafkaError),
        (ErrorCode.UNKNOWN_SERVER_ERROR, KrafkaError),
    ],
)
def test_fatal_errors_lose_the_partitions_and_stop_heartbeats(
    code: int, kind: type[KrafkaError]
) -> None:
    m = Kip848()
    m.join("a", assigned=tps("a-0"))
    m.advance(5)
    sent, _ = m.heartbeat()
    m.reply(sent, code=code)
    assert m.member.state is S.FATAL
    (failed,) = m.events_of(GroupFailed)
    assert isinstance(failed.error, kind)
    assert failed.error.code == code  # type: ignore[attr-defined]
    lose = m.expect_step(LosePartitions)
    m.answer(lose)
    m.advance(60)
    m.poll()
    m.nothing_sent()
    assert m.member.state is S.FATAL


def test_a_refused_version_is_fatal() -> None:
    m = Kip848()
    m.subscribe("a")
    m.poll()
    sent = m.expect(ConsumerGroupHeartbeatRequest)
    m.talk.fail(sent, UnsupportedVersionError("no ConsumerGroupHeartbeat"))
    assert m.member.state is S.FATAL
    assert isinstance(m.events_of(GroupFailed)[0].error, UnsupportedVersionError)


@pytest.mark.parametrize(("instance_id", "epoch"), [(None, -1), ("i1", -2)])
def test_leave_revokes_then_sends_the_leave_epoch(instance_id: str | None, epoch: int) -> None:
    m = Kip848(instance_id=instance_id)
    m.join("a", assigned=tps("a-0"), epoch=3)
    op = m.member.leave(m.now, reason=LeaveReason.UNSUBSCRIBE)
    assert m.member.state is S.PREPARE_LEAVING
    revoke = m.expect_step(RevokePartitions)
    assert revoke.partitions == tps("a-0")
    assert m.talk.pending(op)
    m.answer(revoke)
    sent, request = m.heartbeat()
    assert (request.member_id, request.member_epoch) == ("member-1", epoch)
    assert m.member.state is S.UNSUBSCRIBED
    assert m.talk.pending(op)
    m.reply(sent, code=ErrorCode.UNKNOWN_MEMBER_ID, epoch=epoch)  # a leave always completes
    assert m.talk.outcome(op) is None
    assert m.member.subscription() == frozenset()
    assert not m.member.closed
    m.advance(60)
    m.nothing_sent()
    m.subscribe("b")
    m.poll()
    _, request = m.heartbeat()
    assert (request.member_id, request.member_epoch) == ("member-1", 0)


def test_close_commits_then_revokes_then_leaves_and_closes() -> None:
    m = Kip848(auto_commit=True)
    m.join("a", assigned=tps("a-0"), epoch=3)
    op = m.member.leave(m.now, reason=LeaveReason.CLOSE)
    commit = m.step()
    assert commit is not None
    m.answer(commit, {tps("a-0").__iter__().__next__(): OffsetAndMetadata(5)})
    sent = m.expect(OffsetCommitRequest)
    topic = OffsetCommitResponse.OffsetCommitResponseTopic
    m.talk.reply(
        sent,
        OffsetCommitResponse(
            topics=[topic(name="a", partitions=[topic.OffsetCommitResponsePartition()])]
        ),
    )
    m.answer(m.expect_step(RevokePartitions))
    sent, request = m.heartbeat()
    assert request.member_epoch == -1
    m.reply(sent, epoch=-1)
    assert m.talk.outcome(op) is None
    assert m.member.closed


def test_a_leave_the_coordinator_cannot_be_found_for_still_completes() -> None:
    m = Kip848()
    m.join("a", assigned=tps("a-0"))
    op = m.member.leave(m.now)
    m.answer(m.expect_step(RevokePartitions))
    sent, request = m.heartbeat()
    assert request.member_epoch == -1
    m.talk.fail(sent, KafkaTimeoutError("no coordinator for group 'g' within 30s"))
    assert m.talk.outcome(op) is None
    assert m.member.state is S.UNSUBSCRIBED


def test_a_fenced_member_leaving_completes_at_once() -> None:
    m = fenced(ErrorCode.FENCED_MEMBER_EPOCH)
    op = m.member.leave(m.now, reason=LeaveReason.UNSUBSCRIBE)
    assert m.talk.outcome(op) is None
    lose = m.expect_step(LosePartitions)
    m.answer(lose)
    assert m.member.state is S.UNSUBSCRIBED
    m.nothing_sent()


def test_new_assignments_while_leaving_are_ignored() -> None:
    m = Kip848()
    m.join("a", assigned=tps("a-0"))
    m.advance(5)
    sent, _ = m.heartbeat()
    m.member.leave(m.now)
    revoke = m.expect_step(RevokePartitions)
    m.reply(sent, epoch=2, assigned=tps("a-0", "a-1"))
    assert m.member.state is S.PREPARE_LEAVING
    m.answer(revoke)
    assert m.step() is None


def test_missing_the_poll_interval_leaves_at_once_then_rejoins_at_the_next_poll() -> None:
    m = Kip848(max_poll_interval=30.0)
    m.join("a", assigned=tps("a-0"), epoch=5)
    for _ in range(5):
        m.advance(5)
        sent, _ = m.heartbeat()
        m.reply(sent, epoch=5)
    m.advance(5)  # 30 s without a poll
    sent, request = m.heartbeat()
    assert request.member_epoch == -1
    assert m.member.state is S.STALE
    lose = m.expect_step(LosePartitions)
    assert lose.partitions == tps("a-0")
    m.reply(sent, epoch=-1)  # ignored
    m.answer(lose)
    m.advance(60)
    m.nothing_sent()
    m.poll()
    assert m.member.state is S.JOINING
    sent, request = m.heartbeat()
    assert (request.member_id, request.member_epoch) == ("member-1", 0)
    m.reply(sent, epoch=6, assigned=tps("a-0"))
    assign = m.expect_step(AssignPartitions)
    assert assign.added == tps("a-0")


def test_a_poll_while_the_stale_member_still_loses_rejoins_once_lost() -> None:
    m = Kip848(max_poll_interval=10.0)
    m.join("a", assigned=tps("a-0"))
    m.advance(5)
    sent, _ = m.heartbeat()
    m.reply(sent)
    m.advance(5)
    m.heartbeat()
    lose = m.expect_step(LosePartitions)
    m.poll()
    assert m.member.state is S.STALE
    m.answer(lose)
    assert m.member.state is S.JOINING


def test_commits_carry_the_member_epoch_and_unknown_member_fails_them() -> None:
    m = Kip848()
    m.join("a", assigned=tps("a-0"), epoch=7)
    op = m.member.commit({tps("a-0").__iter__().__next__(): OffsetAndMetadata(9)}, m.now)
    sent = m.expect(OffsetCommitRequest)
    body = m.request(sent)
    assert (body.group_id, body.generation_id_or_member_epoch, body.member_id) == (
        GROUP,
        7,
        "member-1",
    )
    topic = OffsetCommitResponse.OffsetCommitResponseTopic
    part = topic.OffsetCommitResponsePartition(error_code=ErrorCode.UNKNOWN_MEMBER_ID)
    m.talk.reply(sent, OffsetCommitResponse(topics=[topic(name="a", partitions=[part])]))
    with pytest.raises(CommitFailedError):
        m.talk.outcome(op)


def test_a_coordinator_lookup_that_is_not_authorized_is_reported() -> None:
    m = Kip848()
    m.subscribe("a")
    m.poll()
    sent = m.expect(ConsumerGroupHeartbeatRequest)
    m.talk.fail(sent, GroupAuthorizationFailedError("FindCoordinator(group 'g') failed"))
    (failed,) = m.events_of(GroupFailed)
    assert isinstance(failed.error, GroupAuthorizationFailedError)


@pytest.mark.parametrize(
    ("instance_id", "operation", "epoch"),
    [
        (None, GroupMembershipOperation.DEFAULT, -1),
        (None, GroupMembershipOperation.LEAVE_GROUP, -1),
        (None, GroupMembershipOperation.REMAIN_IN_GROUP, -1),
        ("i1", GroupMembershipOperation.DEFAULT, -2),
        ("i1", GroupMembershipOperation.LEAVE_GROUP, -1),
        ("i1", GroupMembershipOperation.REMAIN_IN_GROUP, -2),
    ],
)
def test_close_sends_the_leave_epoch_its_group_membership_operation_says(
    instance_id: str | None, operation: GroupMembershipOperation, epoch: int
) -> None:
    """KIP-1092 as Java's leaveGroupEpoch: a static member told to LEAVE_GROUP leaves for good
    (epoch -1, not -2); a dynamic member leaves even told to REMAIN_IN_GROUP (Java's does too:
    tests/io/java/test_close_options_java.py)."""
    m = Kip848(instance_id=instance_id)
    m.join("a", assigned=tps("a-0"), epoch=3)
    op = m.member.leave(m.now, reason=LeaveReason.CLOSE, operation=operation)
    m.answer(m.expect_step(RevokePartitions))
    sent, request = m.heartbeat()
    assert (request.member_id, request.member_epoch) == ("member-1", epoch)
    assert request.instance_id == instance_id
    m.reply(sent, epoch=epoch)
    assert m.talk.outcome(op) is None and m.member.closed


def test_a_commit_refused_for_a_stale_epoch_is_sent_again_with_the_new_one() -> None:
    """The epoch moved on (a new assignment) while the commit was in flight: as Java's, the
    commit is retried after the backoff carrying the member's current epoch."""
    m = Kip848()
    m.join("a", assigned=tps("a-0"), epoch=7)
    tp = next(iter(tps("a-0")))
    op = m.member.commit({tp: OffsetAndMetadata(9)}, m.now)
    sent = m.expect(OffsetCommitRequest)
    topic = OffsetCommitResponse.OffsetCommitResponseTopic
    stale = topic.OffsetCommitResponsePartition(error_code=ErrorCode.STALE_MEMBER_EPOCH)
    m.talk.reply(sent, OffsetCommitResponse(topics=[topic(name="a", partitions=[stale])]))
    m.advance(5)  # the retry's backoff and the next heartbeat are both due
    retry = m.expect(OffsetCommitRequest)
    assert m.request(retry).generation_id_or_member_epoch == 7
    beat, _ = m.heartbeat()
    m.reply(beat, epoch=8, assigned=tps("a-0"))
    m.talk.reply(retry, OffsetCommitResponse(topics=[topic(name="a", partitions=[stale])]))
    m.advance(1.0)
    m.poll()
    again = m.expect(OffsetCommitRequest)
    assert m.request(again).generation_id_or_member_epoch == 8
    ok = topic.OffsetCommitResponsePartition(error_code=ErrorCode.NONE)
    m.talk.reply(again, OffsetCommitResponse(topics=[topic(name="a", partitions=[ok])]))
    assert m.talk.outcome(op) == {tp: OffsetAndMetadata(9)}
