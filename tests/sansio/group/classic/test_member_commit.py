"""Commits and committed offsets of a group member: identities, Java's errors, retries,
RebalanceInProgressError vs CommitFailedError, auto-commit at polls and before rebalances."""

from __future__ import annotations

from typing import Any

import pytest
from _assignors import CooperativeBalance
from _group_scripted import Member, commit_response, tps

from krafka.errors import (
    CommitFailedError,
    FencedInstanceIdError,
    GroupAuthorizationFailedError,
    InvalidCommitOffsetSizeError,
    KafkaTimeoutError,
    OffsetMetadataTooLargeError,
    RebalanceInProgressError,
    TopicAuthorizationFailedError,
    UnknownTopicOrPartitionError,
)
from krafka.protocol.error_codes import ErrorCode
from krafka.protocol.messages import (
    JoinGroupRequest,
    OffsetCommitRequest,
    OffsetFetchRequest,
    OffsetFetchResponse,
)
from krafka.sansio.group import (
    AssignPartitions,
    AutoCommitDone,
    CommitPositions,
    CommitReason,
    LosePartitions,
    MemberState,
    RevokePartitions,
)
from krafka.structs import OffsetAndMetadata, TopicPartition

C = ErrorCode
T0, T1, U0 = TopicPartition("t", 0), TopicPartition("t", 1), TopicPartition("u", 0)


def stable(m: Member, partitions: frozenset = tps("t-0", "t-1")) -> None:
    m.topics(t=2)
    m.start("t")
    m.join_as_follower(partitions)


def committed(request: OffsetCommitRequest) -> dict[TopicPartition, tuple[int, int, str]]:
    return {
        TopicPartition(t.name, p.partition_index): (
            p.committed_offset,
            p.committed_leader_epoch,
            p.committed_metadata,
        )
        for t in request.topics
        for p in t.partitions
    }


def commit(m: Member, offsets: dict[TopicPartition, OffsetAndMetadata]) -> tuple[int, Any]:
    op = m.member.commit(offsets, m.now, timeout=10)
    sent = m.expect(OffsetCommitRequest)
    return op, sent


def test_commit_carries_the_generation_and_only_owned_partitions() -> None:
    m = Member()
    stable(m)
    offsets = {T0: OffsetAndMetadata(42, "meta", 3), U0: OffsetAndMetadata(7)}
    op, sent = commit(m, offsets)
    request = m.request(sent)
    assert (request.group_id, request.generation_id_or_member_epoch, request.member_id) == (
        "g",
        1,
        "m1",
    )
    assert committed(request) == {T0: (42, 3, "meta")}
    m.talk.reply(sent, commit_response(request))
    assert m.talk.outcome(op) == {T0: OffsetAndMetadata(42, "meta", 3)}


def test_static_member_commits_with_its_instance_id_on_v7_or_later() -> None:
    m = Member(instance_id="i1")
    stable(m)
    _, sent = commit(m, {T0: OffsetAndMetadata(1)})
    assert sent.min_version == 7 and m.request(sent).group_instance_id == "i1"


def test_negative_offsets_are_refused() -> None:
    m = Member()
    stable(m)
    with pytest.raises(ValueError, match="invalid offset"):
        m.member.commit({T0: OffsetAndMetadata(-1)}, m.now)


def test_commit_while_preparing_a_rebalance_is_rebalance_in_progress() -> None:
    m = Member()
    stable(m)
    m.heartbeat(C.REBALANCE_IN_PROGRESS)
    m.poll()
    m.answer(m.expect_step(RevokePartitions))
    m.join_request()
    assert m.member.state is MemberState.PREPARING_REBALANCE
    op = m.member.commit({T0: OffsetAndMetadata(5)}, m.now)
    with pytest.raises(RebalanceInProgressError, match="poll"):
        m.talk.outcome(op)


def test_commit_while_completing_a_rebalance_is_rebalance_in_progress() -> None:
    m = Member([CooperativeBalance()])
    stable(m)
    m.heartbeat(C.REBALANCE_IN_PROGRESS)
    m.poll()
    sent, _ = m.join_request()
    m.reply_join(sent, generation=2, leader="other")
    assert m.member.state is MemberState.COMPLETING_REBALANCE
    op = m.member.commit({T0: OffsetAndMetadata(5)}, m.now)  # still owned (cooperative)
    with pytest.raises(RebalanceInProgressError):
        m.talk.outcome(op)


def test_commit_outside_the_group_is_commit_failed_and_explains_max_poll_interval() -> None:
    m = Member()
    stable(m)
    m.heartbeat(C.UNKNOWN_MEMBER_ID)
    op = m.member.commit({T0: OffsetAndMetadata(5)}, m.now)
    with pytest.raises(CommitFailedError, match="kicked out"):
        m.talk.outcome(op)
    assert "max_poll_interval" in str(CommitFailedError())


def test_commit_answered_rebalance_in_progress_rejoins_at_the_next_poll() -> None:
    m = Member()
    stable(m)
    op, sent = commit(m, {T0: OffsetAndMetadata(5)})
    m.talk.reply(sent, commit_response(m.request(sent), C.REBALANCE_IN_PROGRESS))
    with pytest.raises(RebalanceInProgressError):
        m.talk.outcome(op)
    assert m.member.generation.generation_id == 1  # not reset (kafka-python#2179)
    m.nothing_sent()
    m.poll()
    m.answer(m.expect_step(RevokePartitions))
    m.join_request()


@pytest.mark.parametrize(
    ("code", "member_id"), [(C.UNKNOWN_MEMBER_ID, ""), (C.ILLEGAL_GENERATION, "m1")]
)
def test_commit_with_a_refused_generation_is_commit_failed(code: int, member_id: str) -> None:
    m = Member()
    stable(m)
    op, sent = commit(m, {T0: OffsetAndMetadata(5)})
    m.talk.reply(sent, commit_response(m.request(sent), code))
    with pytest.raises(CommitFailedError):
        m.talk.outcome(op)
    assert m.member.state is MemberState.UNJOINED
    assert m.expect_step(LosePartitions).partitions == tps("t-0", "t-1")
    assert m.member.generation.member_id == member_id


def test_commit_of_an_older_generation_answered_while_rejoining_is_rebalance_in_progress() -> None:
    m = Member()
    stable(m)
    op, sent = commit(m, {T0: OffsetAndMetadata(5)})
    m.heartbeat(C.REBALANCE_IN_PROGRESS)
    m.poll()
    m.answer(m.expect_step(RevokePartitions))
    join, _ = m.join_request()
    m.reply_join(join, generation=2, leader="other")
    sync, _ = m.sync_request()
    m.reply_sync(sync, code=C.REBALANCE_IN_PROGRESS)
    m.join_request()
    assert m.member.state is MemberState.PREPARING_REBALANCE
    m.talk.reply(sent, commit_response(m.request(sent), C.ILLEGAL_GENERATION))
    with pytest.raises(RebalanceInProgressError, match="stale"):
        m.talk.outcome(op)
    assert m.member.state is MemberState.PREPARING_REBALANCE  # no reset


def test_commit_fenced_instance_is_raised() -> None:
    m = Member(instance_id="i1")
    stable(m)
    op, sent = commit(m, {T0: OffsetAndMetadata(5)})
    m.talk.reply(sent, commit_response(m.request(sent), C.FENCED_INSTANCE_ID))
    with pytest.raises(FencedInstanceIdError):
        m.talk.outcome(op)


@pytest.mark.parametrize(
    "code", [C.NOT_COORDINATOR, C.COORDINATOR_NOT_AVAILABLE, C.REQUEST_TIMED_OUT]
)
def test_commit_follows_the_coordinator_and_keeps_the_assignment(code: int) -> None:
    m = Member()
    stable(m)
    op, sent = commit(m, {T0: OffsetAndMetadata(5)})
    m.talk.reply(sent, commit_response(m.request(sent), code))
    m.coordinator_moved()
    m.advance(0.1)
    again = m.expect(OffsetCommitRequest)
    assert committed(m.request(again)) == {T0: (5, -1, "")}
    m.talk.reply(again, commit_response(m.request(again)))
    assert m.talk.outcome(op) == {T0: OffsetAndMetadata(5)}
    assert m.member.assignment() == tps("t-0", "t-1") and m.member.state is MemberState.STABLE


def test_a_commit_the_moved_coordinator_refused_waits_its_backoff_with_an_honest_deadline() -> None:
    """The member names the backoff's end as its deadline (never a past one: the driver would
    call it again at once, forever) and sends the commit again then."""
    m = Member()
    stable(m)
    op, sent = commit(m, {T0: OffsetAndMetadata(5)})
    m.talk.reply(sent, commit_response(m.request(sent), C.NOT_COORDINATOR))
    m.coordinator_moved()
    deadline = m.member.next_deadline()
    assert deadline is not None and deadline > m.now
    m.talk.expect_nothing()
    m.talk.now = deadline
    again = m.expect(OffsetCommitRequest)
    m.talk.reply(again, commit_response(m.request(again)))
    assert m.talk.outcome(op) == {T0: OffsetAndMetadata(5)}


@pytest.mark.parametrize("code", [C.COORDINATOR_LOAD_IN_PROGRESS, C.UNKNOWN_TOPIC_OR_PARTITION])
def test_commit_retries_after_backoff(code: int) -> None:
    m = Member()
    stable(m)
    op, sent = commit(m, {T0: OffsetAndMetadata(5)})
    m.talk.reply(sent, commit_response(m.request(sent), code))
    m.nothing_sent()
    m.advance(0.1)
    again = m.expect(OffsetCommitRequest)
    m.talk.reply(again, commit_response(m.request(again)))
    assert m.talk.outcome(op) == {T0: OffsetAndMetadata(5)}


def test_commit_gives_up_at_its_deadline() -> None:
    m = Member()
    stable(m)
    op = m.member.commit({T0: OffsetAndMetadata(5)}, m.now, timeout=0.35)
    for _ in range(3):
        sent = m.expect(OffsetCommitRequest)
        m.talk.reply(sent, commit_response(m.request(sent), C.COORDINATOR_LOAD_IN_PROGRESS))
        m.advance(0.1)
    m.advance(0.1)
    with pytest.raises(KafkaTimeoutError, match="COORDINATOR_LOAD_IN_PROGRESS"):
        m.talk.outcome(op)


@pytest.mark.parametrize(
    ("code", "kind"),
    [
        (C.OFFSET_METADATA_TOO_LARGE, OffsetMetadataTooLargeError),
        (C.INVALID_COMMIT_OFFSET_SIZE, InvalidCommitOffsetSizeError),
        (C.GROUP_AUTHORIZATION_FAILED, GroupAuthorizationFailedError),
        (C.TOPIC_AUTHORIZATION_FAILED, TopicAuthorizationFailedError),
    ],
)
def test_commit_errors_raised_to_the_caller(code: int, kind: type[Exception]) -> None:
    m = Member()
    stable(m)
    op, sent = commit(m, {T0: OffsetAndMetadata(5)})
    m.talk.reply(sent, commit_response(m.request(sent), code))
    with pytest.raises(kind):
        m.talk.outcome(op)
    assert m.member.state is MemberState.STABLE


def test_commits_go_one_at_a_time_in_call_order() -> None:
    m = Member()
    stable(m)
    first, sent = commit(m, {T0: OffsetAndMetadata(5)})
    second = m.member.commit({T0: OffsetAndMetadata(9)}, m.now)
    m.nothing_sent()
    m.talk.reply(sent, commit_response(m.request(sent), C.COORDINATOR_LOAD_IN_PROGRESS))
    m.advance(0.1)
    again = m.expect(OffsetCommitRequest)
    assert committed(m.request(again))[T0][0] == 5
    m.talk.reply(again, commit_response(m.request(again)))
    assert m.talk.outcome(first) == {T0: OffsetAndMetadata(5)}
    last = m.expect(OffsetCommitRequest)
    assert committed(m.request(last))[T0][0] == 9
    m.talk.reply(last, commit_response(m.request(last)))
    assert m.talk.outcome(second) == {T0: OffsetAndMetadata(9)}


def test_committing_revoked_partitions_while_the_revocation_is_outstanding() -> None:
    """Java's listener commits in on_partitions_revoked: the partitions are still owned."""
    m = Member([CooperativeBalance()])
    stable(m)
    m.heartbeat(C.REBALANCE_IN_PROGRESS)
    m.poll()
    sent, _ = m.join_request()
    m.reply_join(sent, generation=2, leader="other")
    sync, _ = m.sync_request()
    m.reply_sync(sync, tps("t-0"))
    revoke = m.expect_step(RevokePartitions)
    assert revoke.partitions == tps("t-1")
    op, sent = commit(m, {T1: OffsetAndMetadata(11)})
    request = m.request(sent)
    assert request.generation_id_or_member_epoch == 2 and committed(request) == {T1: (11, -1, "")}
    m.talk.reply(sent, commit_response(request))
    assert m.talk.outcome(op) == {T1: OffsetAndMetadata(11)}
    m.answer(revoke)
    m.answer(m.expect_step(AssignPartitions))


# -- committed offsets ----------------------------------------------------------------------


def fetch_response(
    offsets: dict[TopicPartition, tuple[int, int]], group_code: int = 0, v8: bool = True
) -> OffsetFetchResponse:
    if v8:
        group = OffsetFetchResponse.OffsetFetchResponseGroup
        topics = group.OffsetFetchResponseTopics
        part = topics.OffsetFetchResponsePartitions
        by_topic: dict[str, list[Any]] = {}
        for tp, (offset, code) in offsets.items():
            by_topic.setdefault(tp.topic, []).append(
                part(
                    partition_index=tp.partition,
                    committed_offset=offset,
                    metadata="m",
                    error_code=code,
                )
            )
        return OffsetFetchResponse(
            groups=[
                group(
                    group_id="g",
                    error_code=group_code,
                    topics=[topics(name=t, partitions=ps) for t, ps in by_topic.items()],
                )
            ]
        )
    old = OffsetFetchResponse.OffsetFetchResponseTopic
    opart = old.OffsetFetchResponsePartition
    by: dict[str, list[Any]] = {}
    for tp, (offset, code) in offsets.items():
        by.setdefault(tp.topic, []).append(
            opart(
                partition_index=tp.partition, committed_offset=offset, metadata="m", error_code=code
            )
        )
    return OffsetFetchResponse(
        error_code=group_code, topics=[old(name=t, partitions=ps) for t, ps in by.items()]
    )


def test_fetch_committed_for_newly_assigned_partitions_requires_stable_offsets() -> None:
    m = Member()
    stable(m)
    op = m.member.fetch_committed(tps("t-0", "t-1"), m.now)
    sent = m.expect(OffsetFetchRequest)
    request = m.request(sent)
    assert request.require_stable
    [group] = request.groups
    assert group.group_id == "g" and [(t.name, t.partition_indexes) for t in group.topics] == [
        ("t", [0, 1])
    ]
    m.talk.reply(sent, fetch_response({T0: (17, 0), T1: (-1, 0)}))
    assert m.talk.outcome(op) == {T0: OffsetAndMetadata(17, "m", None), T1: None}


def test_fetch_committed_in_the_old_layout() -> None:
    m = Member()
    m.talk.versions = {9: 5}  # OffsetFetch v5
    stable(m)
    op = m.member.fetch_committed([T0], m.now)
    sent = m.expect(OffsetFetchRequest)
    request = m.request(sent)
    assert request.group_id == "g" and not request.require_stable
    m.talk.reply(sent, fetch_response({T0: (3, 0)}, v8=False))
    assert m.talk.outcome(op) == {T0: OffsetAndMetadata(3, "m", None)}


def test_fetch_committed_retries_unstable_offsets_and_follows_the_coordinator() -> None:
    m = Member()
    stable(m)
    op = m.member.fetch_committed([T0], m.now)
    sent = m.expect(OffsetFetchRequest)
    m.talk.reply(sent, fetch_response({T0: (-1, C.UNSTABLE_OFFSET_COMMIT)}))
    m.advance(0.1)
    sent = m.expect(OffsetFetchRequest)
    m.talk.reply(sent, fetch_response({}, group_code=C.NOT_COORDINATOR))
    m.coordinator_moved()
    m.advance(0.1)
    sent = m.expect(OffsetFetchRequest)
    m.talk.reply(sent, fetch_response({T0: (8, 0)}))
    assert m.talk.outcome(op) == {T0: OffsetAndMetadata(8, "m", None)}


@pytest.mark.parametrize(
    ("group_code", "code", "kind"),
    [
        (C.GROUP_AUTHORIZATION_FAILED, 0, GroupAuthorizationFailedError),
        (0, C.UNKNOWN_TOPIC_OR_PARTITION, UnknownTopicOrPartitionError),
        (0, C.TOPIC_AUTHORIZATION_FAILED, TopicAuthorizationFailedError),
    ],
)
def test_fetch_committed_errors(group_code: int, code: int, kind: type[Exception]) -> None:
    m = Member()
    stable(m)
    op = m.member.fetch_committed([T0], m.now)
    sent = m.expect(OffsetFetchRequest)
    m.talk.reply(sent, fetch_response({T0: (-1, code)}, group_code=group_code))
    with pytest.raises(kind):
        m.talk.outcome(op)


# -- auto-commit ----------------------------------------------------------------------------


def test_an_auto_commit_commits_owned_positions_and_says_how_it_went() -> None:
    """The driver decides when an auto-commit is due (the engine's timer); the member commits
    the owned ones of the positions and reports with `AutoCommitDone`, not an operation
    outcome."""
    m = Member(auto_commit=True)
    stable(m)
    offsets = {T0: OffsetAndMetadata(3), T1: OffsetAndMetadata(4), U0: OffsetAndMetadata(1)}
    assert m.member.auto_commit(offsets, m.now) is not None
    sent_at = m.now
    sent = m.expect(OffsetCommitRequest)
    m.advance(0.1)
    m.talk.reply(sent, commit_response(m.request(sent)))
    [done] = m.events_of(AutoCommitDone)
    assert done.sent == sent_at  # for the commit's span
    assert done.error is None and done.offsets == {
        T0: OffsetAndMetadata(3),
        T1: OffsetAndMetadata(4),
    }
    assert m.step() is None


def test_no_auto_commit_while_a_rebalance_is_under_way() -> None:
    m = Member(auto_commit=True)
    stable(m)
    m.heartbeat(C.REBALANCE_IN_PROGRESS)
    m.poll()
    m.expect_step(CommitPositions)  # the rebalance's own commit, before revoking
    assert m.member.auto_commit({T0: OffsetAndMetadata(3)}, m.now) is None


def test_eager_auto_commit_before_the_rebalance_then_revoke_then_join() -> None:
    m = Member(auto_commit=True)
    stable(m)
    m.heartbeat(C.REBALANCE_IN_PROGRESS)
    m.poll()
    step = m.expect_step(CommitPositions)
    assert step.reason is CommitReason.REBALANCE and step.pending_revocation
    m.answer(step, {T0: OffsetAndMetadata(3)})
    sent = m.expect(OffsetCommitRequest)
    assert not any(isinstance(m.request(s), JoinGroupRequest) for s in m.talk.outbox)
    assert m.step() is None  # waits for the commit
    m.talk.reply(sent, commit_response(m.request(sent), C.COORDINATOR_LOAD_IN_PROGRESS))
    m.advance(0.1)
    sent = m.expect(OffsetCommitRequest)  # retried within the rebalance timeout
    m.talk.reply(sent, commit_response(m.request(sent)))
    m.answer(m.expect_step(RevokePartitions))
    m.join_request()


def test_auto_commit_before_the_rebalance_that_fails_for_good_still_rejoins() -> None:
    m = Member(auto_commit=True)
    stable(m)
    m.heartbeat(C.REBALANCE_IN_PROGRESS)
    m.poll()
    m.answer(m.expect_step(CommitPositions), {T0: OffsetAndMetadata(3)})
    sent = m.expect(OffsetCommitRequest)
    m.talk.reply(sent, commit_response(m.request(sent), C.OFFSET_METADATA_TOO_LARGE))
    [done] = m.events_of(AutoCommitDone)
    assert isinstance(done.error, OffsetMetadataTooLargeError)
    m.answer(m.expect_step(RevokePartitions))
    m.join_request()


def test_cooperative_auto_commit_before_the_rebalance_keeps_partitions_flowing() -> None:
    m = Member([CooperativeBalance()], auto_commit=True)
    stable(m)
    m.heartbeat(C.REBALANCE_IN_PROGRESS)
    m.poll()
    step = m.expect_step(CommitPositions)
    assert not step.pending_revocation
    m.answer(step, {})  # nothing consumed: nothing to commit
    m.join_request()  # no revocation under cooperative
    assert m.member.assignment() == tps("t-0", "t-1")
