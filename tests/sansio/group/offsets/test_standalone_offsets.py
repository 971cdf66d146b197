"""Committed offsets of a consumer that assigns partitions itself: generation -1, no member."""

from __future__ import annotations

import pytest
from _group_scripted import commit_response

from krafka.errors import (
    CommitFailedError,
    GroupAuthorizationFailedError,
    KafkaTimeoutError,
    RebalanceInProgressError,
)
from krafka.protocol.error_codes import ErrorCode
from krafka.protocol.messages import (
    OffsetCommitRequest,
    OffsetFetchRequest,
    OffsetFetchResponse,
)
from krafka.sansio.actions import Coordinator, CoordinatorMoved
from krafka.sansio.group.offsets.standalone import StandaloneOffsets
from krafka.structs import OffsetAndMetadata, TopicPartition
from krafka.testing.conversation import Conversation

C = ErrorCode
T0 = TopicPartition("t", 0)


def coordinator_moved(talk: Conversation) -> None:
    talk.step()
    assert talk.events == [CoordinatorMoved("g")]
    talk.events.clear()


def test_commits_with_generation_minus_one_and_no_member() -> None:
    machine = StandaloneOffsets("g", rand=lambda: 0.5)
    talk = Conversation(machine)
    talk.expect_nothing()
    op = machine.commit({T0: OffsetAndMetadata(10, "x")}, talk.now)
    sent = talk.expect(OffsetCommitRequest)
    assert sent.target == Coordinator("g")
    request = talk.request(sent)
    assert (request.generation_id_or_member_epoch, request.member_id) == (-1, "")
    assert request.group_instance_id is None and sent.min_version is None
    talk.reply(sent, commit_response(request))
    assert talk.outcome(op) == {T0: OffsetAndMetadata(10, "x")}
    assert machine.next_deadline() is None


def test_a_commit_timing_out_after_an_unanswered_request_says_it_may_have_been_made() -> None:
    """The coordinator may have written offsets whose request got no answer: the error must
    not let the caller believe nothing was committed."""
    machine = StandaloneOffsets("g", rand=lambda: 0.5)
    talk = Conversation(machine)
    op = machine.commit({T0: OffsetAndMetadata(10)}, talk.now, timeout=1.0)
    talk.advance(0.5)
    talk.fail(talk.expect(OffsetCommitRequest), KafkaTimeoutError("no response within 0.5s"))
    talk.advance(0.1)
    sent = talk.expect(OffsetCommitRequest)
    talk.reply(sent, commit_response(talk.request(sent), C.COORDINATOR_LOAD_IN_PROGRESS))
    talk.advance(1.0)
    with pytest.raises(KafkaTimeoutError, match=r"may have been committed.*safe to commit") as info:
        talk.outcome(op)
    assert info.value.__cause__ is not None


def test_a_commit_refused_until_its_deadline_says_nothing_was_committed() -> None:
    machine = StandaloneOffsets("g", rand=lambda: 0.5)
    talk = Conversation(machine)
    op = machine.commit({T0: OffsetAndMetadata(10)}, talk.now, timeout=0.3)
    while talk.pending(op):
        for sent in list(talk.outbox):
            talk.outbox.remove(sent)
            talk.reply(sent, commit_response(talk.request(sent), C.COORDINATOR_LOAD_IN_PROGRESS))
        talk.advance(0.05)
    with pytest.raises(KafkaTimeoutError, match="nothing was committed"):
        talk.outcome(op)


@pytest.mark.parametrize(
    ("code", "kind"),
    [
        (C.UNKNOWN_MEMBER_ID, CommitFailedError),
        (C.ILLEGAL_GENERATION, CommitFailedError),
        (C.REBALANCE_IN_PROGRESS, RebalanceInProgressError),
    ],
)
def test_a_group_with_active_members_refuses_standalone_commits(code: int, kind: type) -> None:
    machine = StandaloneOffsets("g", rand=lambda: 0.5)
    talk = Conversation(machine)
    op = machine.commit({T0: OffsetAndMetadata(1)}, talk.now)
    sent = talk.expect(OffsetCommitRequest)
    talk.reply(sent, commit_response(talk.request(sent), code))
    with pytest.raises(kind):
        talk.outcome(op)


def test_fetches_committed_offsets_and_reports_a_moved_coordinator() -> None:
    machine = StandaloneOffsets("g", rand=lambda: 0.5)
    talk = Conversation(machine)
    op = machine.fetch_committed([T0], talk.now)
    sent = talk.expect(OffsetFetchRequest)
    group = OffsetFetchResponse.OffsetFetchResponseGroup
    talk.reply(
        sent, OffsetFetchResponse(groups=[group(group_id="g", error_code=C.NOT_COORDINATOR)])
    )
    coordinator_moved(talk)
    talk.advance(0.1)
    sent = talk.expect(OffsetFetchRequest)
    topics = group.OffsetFetchResponseTopics
    part = topics.OffsetFetchResponsePartitions
    answer = group(
        group_id="g",
        topics=[topics(name="t", partitions=[part(partition_index=0, committed_offset=4)])],
    )
    talk.reply(sent, OffsetFetchResponse(groups=[answer]))
    assert talk.outcome(op) == {T0: OffsetAndMetadata(4, "", None)}


def test_not_authorized_for_the_group_fails_waiting_operations() -> None:
    machine = StandaloneOffsets("g", rand=lambda: 0.5)
    talk = Conversation(machine)
    op = machine.commit({T0: OffsetAndMetadata(1)}, talk.now)
    denied = GroupAuthorizationFailedError("FindCoordinator(group 'g') failed")
    talk.fail(talk.expect(OffsetCommitRequest), denied)
    with pytest.raises(GroupAuthorizationFailedError):
        talk.outcome(op)
