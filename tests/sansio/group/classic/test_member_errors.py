"""Java's error tables for JoinGroup, SyncGroup and Heartbeat, one scripted conversation each."""

from __future__ import annotations

import pytest
from _group_scripted import Member, commit_response, tps

from krafka.errors import (
    FencedInstanceIdError,
    GroupAuthorizationFailedError,
    GroupMaxSizeReachedError,
    InconsistentGroupProtocolError,
    InvalidGroupIdError,
    InvalidSessionTimeoutError,
    KafkaConnectionError,
    KrafkaError,
    UnknownServerError,
    UnsupportedVersionError,
)
from krafka.protocol.error_codes import ErrorCode
from krafka.protocol.messages import (
    HeartbeatRequest,
    HeartbeatResponse,
    JoinGroupResponse,
    OffsetCommitRequest,
    OffsetFetchRequest,
    SyncGroupResponse,
)
from krafka.sansio.group import GroupFailed, LosePartitions, MemberState, RevokePartitions
from krafka.structs import OffsetAndMetadata, TopicPartition

C = ErrorCode


def stable(m: Member, partitions: frozenset = tps("t-0", "t-1"), generation: int = 1) -> None:
    m.topics(t=2)
    m.start("t")
    m.join_as_follower(partitions, generation=generation)
    assert m.member.state is MemberState.STABLE


def failures(m: Member) -> list[KrafkaError]:
    return [e.error for e in m.events_of(GroupFailed)]


# -- JoinGroup ------------------------------------------------------------------------------


def test_join_coordinator_loading_retries_after_backoff_at_the_same_coordinator() -> None:
    m = Member()
    m.start("t")
    sent, _ = m.join_request()
    m.reply_join(sent, code=C.COORDINATOR_LOAD_IN_PROGRESS)
    assert m.member.state is MemberState.PREPARING_REBALANCE
    m.nothing_sent()
    m.advance(0.1)
    m.join_request()


@pytest.mark.parametrize("code", [C.NOT_COORDINATOR, C.COORDINATOR_NOT_AVAILABLE])
def test_join_coordinator_moved_is_reported_and_joins_again(code: int) -> None:
    m = Member()
    m.start("t")
    sent, _ = m.join_request()
    m.reply_join(sent, code=code)
    m.coordinator_moved()
    m.advance(0.1)
    m.join_request()


def test_join_unknown_member_id_resets_the_member_id_and_rejoins_at_once() -> None:
    m = Member()
    m.start("t")
    sent, _ = m.join_request()
    m.reply_join(sent, member_id="m1", code=C.MEMBER_ID_REQUIRED)
    sent, request = m.join_request()
    assert request.member_id == "m1"
    m.reply_join(sent, code=C.UNKNOWN_MEMBER_ID)
    sent, request = m.join_request()
    assert request.member_id == ""


def test_join_rebalance_in_progress_rejoins_at_once() -> None:
    m = Member()
    m.start("t")
    sent, _ = m.join_request()
    m.reply_join(sent, code=C.REBALANCE_IN_PROGRESS)
    m.join_request()


FATAL_JOIN = [
    (C.FENCED_INSTANCE_ID, FencedInstanceIdError),
    (C.INCONSISTENT_GROUP_PROTOCOL, InconsistentGroupProtocolError),
    (C.INVALID_SESSION_TIMEOUT, InvalidSessionTimeoutError),
    (C.INVALID_GROUP_ID, InvalidGroupIdError),
    (C.GROUP_AUTHORIZATION_FAILED, GroupAuthorizationFailedError),
    (C.GROUP_MAX_SIZE_REACHED, GroupMaxSizeReachedError),
    (C.UNSUPPORTED_VERSION, UnsupportedVersionError),
    (C.UNKNOWN_SERVER_ERROR, UnknownServerError),
]


@pytest.mark.parametrize(("code", "kind"), FATAL_JOIN)
def test_fatal_join_errors_are_raised_and_the_member_waits_for_the_next_poll(
    code: int, kind: type[KrafkaError]
) -> None:
    m = Member()
    m.start("t")
    sent, _ = m.join_request()
    m.reply_join(sent, code=code)
    [error] = failures(m)
    assert isinstance(error, kind)
    assert "g" in str(error) or code == C.UNKNOWN_SERVER_ERROR
    m.advance(10)
    m.nothing_sent()
    m.poll()
    m.join_request()


def test_join_answer_with_another_protocol_type_is_inconsistent() -> None:
    m = Member()
    m.start("t")
    sent, _ = m.join_request()
    m.talk.reply(sent, JoinGroupResponse(generation_id=1, protocol_type="connect", member_id="m1"))
    [error] = failures(m)
    assert isinstance(error, InconsistentGroupProtocolError)


def test_join_lost_connection_retries_after_backoff() -> None:
    m = Member()
    m.start("t")
    sent, _ = m.join_request()
    m.talk.fail(sent, KafkaConnectionError("reset"))
    m.nothing_sent()
    m.advance(0.1)
    m.join_request()


def test_static_member_needs_join_group_v5() -> None:
    m = Member(instance_id="i1")
    m.start("t")
    sent, request = m.join_request()
    assert sent.min_version == 5 and request.group_instance_id == "i1"
    m.talk.fail(sent, UnsupportedVersionError("JoinGroup v5 not offered"))
    [error] = failures(m)
    assert isinstance(error, UnsupportedVersionError)


# -- SyncGroup ------------------------------------------------------------------------------


def to_sync(m: Member, generation: int = 1) -> object:
    m.topics(t=2)
    m.start("t")
    sent, _ = m.join_request()
    m.reply_join(sent, member_id="m1", generation=generation, leader="other")
    sync, _ = m.sync_request()
    return sync


@pytest.mark.parametrize(
    ("code", "kind"),
    [
        (C.GROUP_AUTHORIZATION_FAILED, GroupAuthorizationFailedError),
        (C.FENCED_INSTANCE_ID, FencedInstanceIdError),
        (C.UNKNOWN_SERVER_ERROR, UnknownServerError),
    ],
)
def test_fatal_sync_errors(code: int, kind: type[KrafkaError]) -> None:
    m = Member()
    sync = to_sync(m)
    m.reply_sync(sync, code=code)
    [error] = failures(m)
    assert isinstance(error, kind)
    m.nothing_sent()


@pytest.mark.parametrize(
    ("code", "generation", "member_id"),
    [
        (C.REBALANCE_IN_PROGRESS, 1, "m1"),
        (C.UNKNOWN_MEMBER_ID, -1, ""),
        (C.ILLEGAL_GENERATION, -1, "m1"),
    ],
)
def test_sync_errors_that_rejoin_at_once(code: int, generation: int, member_id: str) -> None:
    m = Member()
    sync = to_sync(m)
    m.reply_sync(sync, code=code)
    assert m.member.generation.generation_id == generation
    _, request = m.join_request()
    assert request.member_id == member_id


@pytest.mark.parametrize("code", [C.NOT_COORDINATOR, C.COORDINATOR_NOT_AVAILABLE])
def test_sync_coordinator_moved_is_reported_and_rejoins(code: int) -> None:
    m = Member()
    sync = to_sync(m)
    m.reply_sync(sync, code=code)
    m.coordinator_moved()
    m.advance(0.1)
    m.join_request()


def test_sync_coordinator_loading_rejoins_after_backoff() -> None:
    m = Member()
    sync = to_sync(m)
    m.reply_sync(sync, code=C.COORDINATOR_LOAD_IN_PROGRESS)
    assert not failures(m)
    m.nothing_sent()
    m.advance(0.1)
    m.join_request()


def test_sync_answer_with_another_protocol_name_is_inconsistent() -> None:
    m = Member()
    sync = to_sync(m)
    m.talk.reply(sync, SyncGroupResponse(protocol_type="consumer", protocol_name="range"))
    [error] = failures(m)
    assert isinstance(error, InconsistentGroupProtocolError)


# -- Heartbeat ------------------------------------------------------------------------------


def test_heartbeats_go_on_the_control_lane_every_interval() -> None:
    from krafka.sansio.connection import Priority

    m = Member()
    stable(m)
    m.nothing_sent()
    sent = m.heartbeat()
    assert sent.priority is Priority.HIGH
    request = m.request(sent)
    assert (request.generation_id, request.member_id) == (1, "m1")
    m.advance(0.5)
    m.nothing_sent()
    m.advance(0.5)
    m.heartbeat(wait=False)


def test_heartbeat_rebalance_in_progress_when_stable_rejoins_at_the_next_poll() -> None:
    m = Member()
    stable(m)
    m.heartbeat(C.REBALANCE_IN_PROGRESS)
    m.nothing_sent()  # the application has not polled yet
    assert m.member.state is MemberState.STABLE
    m.poll()
    revoke = m.step()  # eager: all partitions are revoked before rejoining
    assert revoke is not None and revoke.partitions == tps("t-0", "t-1")
    m.answer(revoke)
    m.join_request()


def test_heartbeat_rebalance_in_progress_while_completing_is_ignored() -> None:
    m = Member()
    sync = to_sync(m)
    m.heartbeat(C.REBALANCE_IN_PROGRESS)
    m.reply_sync(sync, tps("t-0"))
    m.answer_steps_until_assigned()
    m.poll()
    m.nothing_sent()
    assert m.member.state is MemberState.STABLE


def test_no_heartbeats_before_join_group_answers() -> None:
    m = Member()
    m.start("t")
    m.join_request()
    m.advance(5)
    assert not any(isinstance(m.request(s), HeartbeatRequest) for s in m.talk.outbox)
    m.nothing_sent()


@pytest.mark.parametrize(
    ("code", "member_id"), [(C.ILLEGAL_GENERATION, "m1"), (C.UNKNOWN_MEMBER_ID, "")]
)
def test_heartbeat_fencing_loses_the_partitions(code: int, member_id: str) -> None:
    m = Member()
    stable(m)
    m.heartbeat(code)
    assert m.member.state is MemberState.UNJOINED
    lost = m.expect_step(LosePartitions)
    assert lost.partitions == tps("t-0", "t-1")
    m.answer(lost)
    assert m.member.assignment() == frozenset()
    m.nothing_sent()
    m.poll()
    _sent, request = m.join_request()
    assert request.member_id == member_id
    assert m.subscription_sent(request).owned_partitions == ()


def test_heartbeat_error_about_an_older_generation_is_ignored() -> None:
    m = Member()
    stable(m)
    m.advance(1)
    old = m.expect(HeartbeatRequest)
    # while that heartbeat is in flight, the member is fenced through a commit ...
    m.member.commit({TopicPartition("t", 0): OffsetAndMetadata(1)}, m.now)
    commit = m.expect(OffsetCommitRequest)
    m.talk.reply(commit, commit_response(m.request(commit), C.UNKNOWN_MEMBER_ID))
    m.answer(m.expect_step(LosePartitions))
    m.poll()
    sent, _ = m.join_request()
    m.reply_join(sent, member_id="m9", generation=2, leader="other")
    # ... and rejoined at generation 2: the old heartbeat's answer must not reset it
    m.talk.reply(old, HeartbeatResponse(error_code=C.UNKNOWN_MEMBER_ID))
    assert m.member.state is MemberState.COMPLETING_REBALANCE
    assert m.member.generation.generation_id == 2
    sync, _ = m.sync_request()
    m.reply_sync(sync, tps("t-0"))
    assert m.answer_steps_until_assigned().assignment == tps("t-0")


def test_heartbeat_fenced_instance_is_fatal_and_lost() -> None:
    m = Member(instance_id="i1")
    stable(m)
    sent = m.heartbeat(C.FENCED_INSTANCE_ID)
    assert sent.min_version == 3
    [error] = failures(m)
    assert isinstance(error, FencedInstanceIdError) and "i1" in str(error)
    assert m.expect_step(LosePartitions).partitions == tps("t-0", "t-1")


def test_heartbeat_group_authorization_failed_is_raised() -> None:
    m = Member()
    stable(m)
    m.heartbeat(C.GROUP_AUTHORIZATION_FAILED)
    [error] = failures(m)
    assert isinstance(error, GroupAuthorizationFailedError)


@pytest.mark.parametrize("code", [C.NOT_COORDINATOR, C.COORDINATOR_NOT_AVAILABLE])
def test_heartbeat_coordinator_moved_keeps_the_assignment(code: int) -> None:
    m = Member()
    stable(m)
    m.heartbeat(code)
    m.coordinator_moved()
    m.advance(0.1)
    m.expect(HeartbeatRequest)
    assert m.member.state is MemberState.STABLE
    assert m.member.assignment() == tps("t-0", "t-1")
    assert m.step() is None


def test_heartbeat_lost_connection_retries_and_keeps_the_assignment() -> None:
    m = Member()
    stable(m)
    m.advance(1)
    sent = m.expect(HeartbeatRequest)
    m.talk.fail(sent, KafkaConnectionError("reset"))
    m.advance(0.1)
    m.heartbeat(wait=False)
    assert m.member.assignment() == tps("t-0", "t-1")


def test_heartbeat_coordinator_loading_retries_after_backoff() -> None:
    m = Member()
    stable(m)
    m.heartbeat(C.COORDINATOR_LOAD_IN_PROGRESS)
    assert not failures(m)
    m.advance(0.1)
    m.heartbeat(wait=False)


def test_heartbeat_rebalance_in_progress_answered_while_preparing_is_ignored() -> None:
    m = Member()
    stable(m)
    m.advance(1)
    in_flight = m.expect(HeartbeatRequest)
    m.member.commit({TopicPartition("t", 0): OffsetAndMetadata(1)}, m.now)  # STABLE: fine
    commit = m.expect(OffsetCommitRequest)
    m.talk.reply(commit, commit_response(m.request(commit), C.REBALANCE_IN_PROGRESS))
    m.poll()
    m.answer(m.expect_step(RevokePartitions))
    sent, _ = m.join_request()
    assert m.member.state is MemberState.PREPARING_REBALANCE
    m.talk.reply(in_flight, HeartbeatResponse(error_code=C.REBALANCE_IN_PROGRESS))
    assert m.member.state is MemberState.PREPARING_REBALANCE
    m.reply_join(sent, generation=2, leader="other")
    sync, _ = m.sync_request()
    m.reply_sync(sync, tps("t-1"))
    m.answer_steps_until_assigned()
    m.poll()
    m.nothing_sent()  # no extra rebalance came out of the stale answer


def test_heartbeat_answered_after_the_member_was_reset_is_ignored() -> None:
    m = Member()
    stable(m)
    m.advance(1)
    in_flight = m.expect(HeartbeatRequest)
    m.member.commit({TopicPartition("t", 0): OffsetAndMetadata(1)}, m.now)
    commit = m.expect(OffsetCommitRequest)
    m.talk.reply(commit, commit_response(m.request(commit), C.UNKNOWN_MEMBER_ID))
    assert m.member.state is MemberState.UNJOINED
    for code in (C.REBALANCE_IN_PROGRESS,):
        m.talk.reply(in_flight, HeartbeatResponse(error_code=code))
    assert m.member.state is MemberState.UNJOINED
    assert not failures(m)
    m.answer(m.expect_step(LosePartitions))
    m.poll()
    _, request = m.join_request()
    assert request.member_id == ""


def test_not_authorized_to_find_the_coordinator_is_raised_once_per_poll() -> None:
    """The driver's coordinator lookup was refused: the requests waiting for it fail with the
    refusal; the join fails the group once, and is tried again only after the next poll."""
    denied = GroupAuthorizationFailedError("FindCoordinator(group 'g') failed")
    m = Member()
    m.subscribe("t")
    m.poll()
    fetch = m.member.fetch_committed([TopicPartition("t", 0)], m.now)
    m.talk.fail(m.expect(OffsetFetchRequest), denied)
    with pytest.raises(GroupAuthorizationFailedError):
        m.talk.outcome(fetch)
    sent, _ = m.join_request()
    m.talk.fail(sent, denied)
    [error] = failures(m)
    assert isinstance(error, GroupAuthorizationFailedError)
    m.advance(0.5)
    m.nothing_sent()  # not again until the application polls
    assert not failures(m)
    m.poll()
    sent, _ = m.join_request()
    m.talk.fail(sent, denied)
    assert len(failures(m)) == 1


def test_an_unreadable_sync_group_answer_ends_the_round_like_a_lost_connection() -> None:
    from krafka.errors import RemoteProtocolError

    m = Member()
    sync = to_sync(m)
    m.talk.fail(sync, RemoteProtocolError("SyncGroupResponse v3: assignment: null bytes"))
    assert not failures(m)
    m.advance(0.1)
    m.join_request()


@pytest.mark.parametrize("code", [C.NOT_COORDINATOR, C.COORDINATOR_NOT_AVAILABLE])
def test_join_after_a_moved_coordinator_names_its_backoff_not_a_past_deadline(code: int) -> None:
    """Found by the fault tests: a member naming a past retry time as its deadline with nothing
    to send makes the driver call it again at once, forever. After a moved coordinator the
    deadline is the backoff's end, and JoinGroup goes then."""
    m = Member()
    m.start("t")
    sent, _ = m.join_request()
    m.reply_join(sent, code=code)
    m.coordinator_moved()
    deadline = m.member.next_deadline()
    assert deadline is not None and deadline > m.now
    m.nothing_sent()
    m.talk.now = deadline
    m.join_request()


@pytest.mark.parametrize("request_kind", ["join", "sync"])
def test_an_error_code_krafka_does_not_know_fails_the_group_instead_of_crashing(
    request_kind: str,
) -> None:
    """A code newer than krafka (or a hostile one) is read as an unexpected, non-retriable
    error: the application hears of it; the member must not raise a bare ValueError."""
    m = Member()
    m.topics(t=1)
    m.start("t")
    sent, _ = m.join_request()
    if request_kind == "join":
        m.reply_join(sent, code=9999)
    else:
        m.reply_join(sent, leader="other")
        sync, _ = m.sync_request()
        m.reply_sync(sync, code=9999)
    [failed] = m.events_of(GroupFailed)
    assert "9999" in str(failed.error)
