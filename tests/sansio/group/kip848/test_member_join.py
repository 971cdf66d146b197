"""A KIP-848 member joining, reconciling and acknowledging, in scripted conversations."""

from __future__ import annotations

import re

import pytest
from _kip848_scripted import IDS, Kip848, owned_in, roundtrip, tps

from krafka.protocol.error_codes import ErrorCode
from krafka.protocol.messages import (
    ConsumerGroupHeartbeatRequest,
    OffsetCommitRequest,
    OffsetCommitResponse,
)
from krafka.sansio.actions import RefreshMetadata
from krafka.sansio.connection import Priority
from krafka.sansio.group.events import (
    AssignPartitions,
    AutoCommitDone,
    CommitPositions,
    CommitReason,
    PendingRevocation,
    PollNeeded,
    RevokePartitions,
)
from krafka.sansio.group.membership.state import MembershipState as S
from krafka.structs import OffsetAndMetadata


def test_nothing_happens_before_the_first_poll() -> None:
    m = Kip848()
    m.subscribe("a")
    m.nothing_sent()
    assert m.member.state is S.UNSUBSCRIBED
    m.poll()
    assert m.member.state is S.JOINING
    sent, _ = m.heartbeat()
    assert sent.priority is Priority.HIGH


def test_join_sends_a_full_heartbeat_with_a_client_made_member_id() -> None:
    m = Kip848(server_assignor="uniform", rack="r1", max_poll_interval=45.0)
    m.subscribe("b", "a")
    m.poll()
    sent, request = m.heartbeat()
    assert request == ConsumerGroupHeartbeatRequest(
        group_id="g",
        member_id="member-1",
        member_epoch=0,
        rack_id="r1",
        rebalance_timeout_ms=45000,
        subscribed_topic_names=["a", "b"],
        subscribed_topic_regex="",  # sent with the names: librdkafka's coordinator needs both
        server_assignor="uniform",
        topic_partitions=[],
    )
    assert sent.min_version is None


def test_assignment_is_reconciled_then_acknowledged_at_once() -> None:
    m = Kip848()
    m.subscribe("a")
    m.poll()
    sent, _ = m.heartbeat()
    m.reply(sent, epoch=3, assigned=tps("a-0", "a-1"))
    assert m.member.state is S.RECONCILING
    step = m.expect_step(AssignPartitions)
    assert step.added == step.assignment == tps("a-0", "a-1")
    assert step.generation == 3
    m.nothing_sent()  # no ack before the listener ran
    m.answer(step)
    assert m.member.state is S.ACKNOWLEDGING
    assert m.member.assignment() == tps("a-0", "a-1")
    sent, request = m.heartbeat()  # at once, not after the interval
    assert m.member.state is S.STABLE  # ended when the heartbeat was made
    assert request.member_epoch == 3
    assert owned_in(request) == tps("a-0", "a-1")
    assert request.subscribed_topic_names is None  # unchanged fields stay null
    m.reply(sent, epoch=3)


def test_an_empty_assignment_still_calls_the_assigned_listener_once() -> None:
    m = Kip848()
    m.subscribe("a")
    m.poll()
    sent, _ = m.heartbeat()
    m.reply(sent, epoch=1, assigned=())
    step = m.expect_step(AssignPartitions)
    assert step.added == step.assignment == frozenset()
    m.answer(step)
    sent, request = m.heartbeat()
    assert owned_in(request) == frozenset()
    m.reply(sent, epoch=1, assigned=())  # the same assignment again: nothing to do
    assert m.member.state is S.STABLE
    assert m.step() is None


def test_stable_heartbeats_are_minimal_and_follow_the_server_interval() -> None:
    m = Kip848(instance_id="i1")
    m.join("a", assigned=tps("a-0"))
    m.nothing_sent()
    m.advance(4.9)
    m.nothing_sent()
    m.advance(0.1)
    sent, request = m.heartbeat()
    assert request == ConsumerGroupHeartbeatRequest(
        group_id="g", member_id="member-1", member_epoch=1, instance_id="i1"
    )
    m.reply(sent, epoch=1, interval_ms=2000)
    m.advance(1.9)
    m.nothing_sent()
    m.advance(0.1)
    sent, _ = m.heartbeat()
    m.reply(sent, epoch=1, interval_ms=10)  # floored to 1 s
    m.advance(0.5)
    m.nothing_sent()
    m.advance(0.5)
    m.heartbeat()


def test_any_failure_makes_the_next_heartbeat_full() -> None:
    m = Kip848()
    m.join("a", assigned=tps("a-0"))
    m.advance(5)
    sent, _ = m.heartbeat()
    m.reply(sent, epoch=1, code=ErrorCode.COORDINATOR_LOAD_IN_PROGRESS)  # retried after backoff
    m.advance(0.05)
    m.nothing_sent()
    m.advance(0.05)
    sent, request = m.heartbeat()
    assert request.subscribed_topic_names == ["a"]
    assert request.rebalance_timeout_ms == 30000
    assert owned_in(request) == tps("a-0")


def test_a_reconciliation_waiting_for_a_poll_says_so_once_until_the_poll() -> None:
    """With auto-commit on only the application's poll starts a reconciliation (it commits
    first): the member asks for that poll, so a poll already waiting runs it at once instead
    of sleeping out its timeout (Java's poll loop sends a PollEvent each round)."""
    m = Kip848(auto_commit=True)
    m.join("a", assigned=tps("a-0", "a-1"))
    m.advance(5)
    sent, _ = m.heartbeat()
    m.reply(sent, epoch=2, assigned=tps("a-1", "a-2"))
    assert m.events_of(PollNeeded) == [PollNeeded()]
    m.advance(5)
    sent, _ = m.heartbeat()
    m.reply(sent, epoch=2)
    assert m.events_of(PollNeeded) == []  # once until the poll
    m.poll()
    assert m.expect_step(CommitPositions).reason is CommitReason.REBALANCE
    assert m.events_of(PollNeeded) == []


def test_without_auto_commit_a_reconciliation_needs_no_poll() -> None:
    m = Kip848(auto_commit=False)
    m.subscribe("a")
    m.poll()
    sent, _ = m.heartbeat()
    m.reply(sent, epoch=1, assigned=tps("a-0"))
    assert m.expect_step(AssignPartitions).assignment == tps("a-0")
    assert m.events_of(PollNeeded) == []


def test_revocation_commits_then_revokes_then_assigns_then_acks() -> None:
    m = Kip848(auto_commit=True)
    m.join("a", assigned=tps("a-0", "a-1"))
    m.advance(5)
    sent, _ = m.heartbeat()
    m.reply(sent, epoch=2, assigned=tps("a-1", "a-2"))
    assert m.step() is None  # auto-commit waits for the application's poll
    assert m.events_of(PendingRevocation) == []
    m.poll()
    assert m.events_of(PendingRevocation) == [PendingRevocation(tps("a-0"))]
    commit = m.expect_step(CommitPositions)
    assert commit.reason is CommitReason.REBALANCE
    assert commit.partitions == tps("a-0", "a-1")
    m.answer(commit, {tp: OffsetAndMetadata(7) for tp in tps("a-0", "a-1")})
    sent = m.expect(OffsetCommitRequest)
    body = m.request(sent)
    assert (body.generation_id_or_member_epoch, body.member_id) == (2, "member-1")
    assert roundtrip(body, 9) == body
    # heartbeats while reconciling keep the old assignment (null: unchanged)
    m.advance(5)
    hb, request = m.heartbeat()
    assert request.topic_partitions is None
    m.reply(hb, epoch=2)
    part = OffsetCommitResponse.OffsetCommitResponseTopic.OffsetCommitResponsePartition
    m.talk.reply(
        sent,
        OffsetCommitResponse(
            topics=[
                OffsetCommitResponse.OffsetCommitResponseTopic(
                    name="a", partitions=[part(partition_index=0), part(partition_index=1)]
                )
            ]
        ),
    )
    assert m.events_of(AutoCommitDone)[0].error is None
    revoke = m.expect_step(RevokePartitions)
    assert revoke.partitions == tps("a-0")
    m.answer(revoke)
    assign = m.expect_step(AssignPartitions)
    assert (assign.added, assign.assignment) == (tps("a-2"), tps("a-1", "a-2"))
    m.answer(assign)
    sent, request = m.heartbeat()
    assert owned_in(request) == tps("a-1", "a-2")


def test_a_listener_error_leaves_the_assignment_unacknowledged_until_the_next_poll() -> None:
    m = Kip848()
    m.join("a", assigned=tps("a-0"))
    m.advance(5)
    sent, _ = m.heartbeat()
    m.reply(sent, epoch=2, assigned=tps("a-1"))
    revoke = m.expect_step(RevokePartitions)
    m.answer(revoke, error=RuntimeError("listener broke"))
    assert m.member.state is S.RECONCILING
    assert m.step() is None
    m.nothing_sent()
    m.poll()
    revoke = m.expect_step(RevokePartitions)
    m.answer(revoke)
    m.answer(m.expect_step(AssignPartitions))
    _, request = m.heartbeat()
    assert owned_in(request) == tps("a-1")


def test_unknown_topic_ids_wait_for_metadata_and_the_known_part_is_reconciled() -> None:
    m = Kip848()
    m.member.update_topic_ids({"a": IDS["a"]}, 0.0)
    m.subscribe("a", "b")
    m.poll()
    sent, _ = m.heartbeat()
    m.reply(sent, epoch=1, assigned=tps("a-0", "b-0"))
    assert m.events_of(RefreshMetadata) == [RefreshMetadata(None)]
    assign = m.expect_step(AssignPartitions)
    assert assign.assignment == tps("a-0")
    m.answer(assign)
    sent, request = m.heartbeat()
    # b-0 is reported too: the member will take it once metadata names it, so the coordinator
    # must not give it to anyone else meanwhile (an answer moving it could be lost)
    assert owned_in(request) == tps("a-0", "b-0")
    m.reply(sent, epoch=1)
    assert m.member.state is S.RECONCILING
    m.nothing_sent()
    m.member.update_topic_ids(IDS, m.now)
    assign = m.expect_step(AssignPartitions)
    assert (assign.added, assign.assignment) == (tps("b-0"), tps("a-0", "b-0"))
    m.answer(assign)
    _, request = m.heartbeat()
    assert owned_in(request) == tps("a-0", "b-0")
    assert m.member.state is S.STABLE


def test_a_revoked_topic_missing_from_metadata_is_named_from_the_local_cache() -> None:
    m = Kip848()
    m.join("a", "b", assigned=tps("a-0", "b-0"))
    m.member.update_topic_ids({"b": IDS["b"]}, m.now)  # metadata forgot "a"
    m.advance(5)
    sent, _ = m.heartbeat()
    m.reply(sent, epoch=2, assigned=tps("a-1", "b-0"))
    assert m.events_of(RefreshMetadata) == []
    revoke = m.expect_step(RevokePartitions)
    assert revoke.partitions == tps("a-0")


def test_pattern_subscription_needs_v1_and_dropping_it_sends_an_empty_regex() -> None:
    m = Kip848()
    m.member.subscribe(re.compile("a|b"), m.now)
    m.poll()
    sent, request = m.heartbeat()
    assert sent.min_version == 1
    assert request.subscribed_topic_regex == "a|b"
    assert request.subscribed_topic_names == []
    m.reply(sent, epoch=1, assigned=tps("a-0"))
    m.answer_steps()
    sent, request = m.heartbeat()
    assert request.subscribed_topic_regex is None
    m.reply(sent, epoch=1)
    m.subscribe("a")
    m.advance(5)
    sent, request = m.heartbeat()
    assert (request.subscribed_topic_regex, request.subscribed_topic_names) == ("", ["a"])
    assert sent.min_version == 1


@pytest.mark.parametrize("version", [0, 1])
def test_heartbeats_cross_the_wire_at_both_versions(version: int) -> None:
    m = Kip848(version=version, instance_id="i", server_assignor="range", rack="r")
    m.join("a", "b", assigned=tps("a-0", "b-3"))
    m.member.leave(m.now)
    m.answer_steps()
    _, request = m.heartbeat()  # heartbeat() checks the round trip at `version`
    assert request.member_epoch == -2


def test_a_negative_epoch_in_a_success_answer_is_ignored() -> None:
    m = Kip848()
    m.join("a", assigned=tps("a-0"))
    m.advance(5)
    sent, _ = m.heartbeat()
    m.reply(sent, epoch=-1, assigned=())
    assert m.member.member_epoch == 1
    assert m.member.state is S.STABLE
    assert m.step() is None


def test_a_full_heartbeat_mid_reconciliation_also_names_the_partitions_being_taken() -> None:
    m = Kip848()
    m.join("a", assigned=tps("a-0"))
    m.advance(5)
    sent, _ = m.heartbeat()
    m.reply(sent, epoch=2, assigned=tps("a-0", "a-1"))
    assign = m.expect_step(AssignPartitions)  # the driver is taking a-1 now
    m.advance(5)
    sent, request = m.heartbeat()
    assert request.topic_partitions is None  # minimal: nothing changed yet
    m.reply(sent, epoch=2, code=ErrorCode.COORDINATOR_LOAD_IN_PROGRESS)
    m.advance(0.1)
    _, request = m.heartbeat()
    assert owned_in(request) == tps("a-0", "a-1")  # full, and a-1 may be owned already
    m.answer(assign)


def test_an_auto_commit_commits_owned_positions_once_stable() -> None:
    m = Kip848(auto_commit=True, auto_commit_interval=5.0)
    m.join("a", assigned=tps("a-0"))
    offsets = {tp: OffsetAndMetadata(7) for tp in tps("a-0", "b-0")}
    assert m.member.auto_commit(offsets, m.now) is not None
    sent = m.expect(OffsetCommitRequest)
    assert {t.name for t in m.request(sent).topics} == {"a"}
    assert m.step() is None
