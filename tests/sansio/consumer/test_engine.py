"""The consumer engine, scripted without a broker: the test plays the driver, the coordinator
and the leaders. Positions (committed -> reset policy), the record buffer, auto-commit, the
listener steps that wait for the application, errors raised by the next poll, and close."""

from __future__ import annotations

from typing import Any

import pytest

from krafka.codec import Record, encode_batch
from krafka.errors import (
    GroupAuthorizationFailedError,
    IllegalStateError,
    TopicAuthorizationFailedError,
    UnknownTopicOrPartitionError,
)
from krafka.protocol.error_codes import ErrorCode
from krafka.protocol.messages import (
    FetchRequest,
    FetchResponse,
    JoinGroupRequest,
    JoinGroupResponse,
    LeaveGroupRequest,
    LeaveGroupResponse,
    ListOffsetsRequest,
    ListOffsetsResponse,
    MetadataResponse,
    OffsetCommitRequest,
    OffsetFetchRequest,
    OffsetFetchResponse,
    SyncGroupRequest,
    SyncGroupResponse,
)
from krafka.protocol.messages.fetch_response import FetchableTopicResponse, PartitionData
from krafka.protocol.messages.metadata_response import (
    MetadataResponseBroker,
    MetadataResponsePartition,
    MetadataResponseTopic,
)
from krafka.sansio.actions import Broker, Coordinator, RefreshMetadata, SendRequest
from krafka.sansio.consumer.config import ConsumerConfig
from krafka.sansio.consumer.engine import AfterPoll, ConsumerEngine
from krafka.sansio.consumer.events import (
    OffsetsCommitted,
    PartitionsAssigned,
    PartitionsRevoked,
    PollReady,
)
from krafka.sansio.consumer.fetcher import FetchConfig
from krafka.sansio.consumer.subscription import ResetStrategy
from krafka.sansio.group.classic.assignors import assignors_for
from krafka.sansio.group.config import GroupConfig
from krafka.sansio.isolation import IsolationLevel
from krafka.sansio.metadata import ClusterMetadata
from krafka.structs import OffsetAndMetadata, TopicPartition
from krafka.testing.conversation import Conversation, commit_response

T0, T1 = TopicPartition("t", 0), TopicPartition("t", 1)
C = ErrorCode


def cluster() -> ClusterMetadata:
    """Topic t: partition 0 led by broker 1, partition 1 by broker 2."""
    meta = ClusterMetadata([("b1", 9092)])
    meta.update(
        MetadataResponse(
            brokers=[MetadataResponseBroker(node_id=n, host=f"b{n}", port=9092) for n in (1, 2)],
            topics=[
                MetadataResponseTopic(
                    name="t",
                    partitions=[
                        MetadataResponsePartition(
                            partition_index=p, leader_id=1 + p, replica_nodes=[1, 2]
                        )
                        for p in (0, 1)
                    ],
                )
            ],
        ),
        0.0,
    )
    return meta


def engine(
    *, group: bool = True, auto_commit: bool = False, **config: Any
) -> tuple[ConsumerEngine, Conversation]:
    group_config = (
        GroupConfig(
            group_id="g",
            enable_auto_commit=auto_commit,
            auto_commit_interval=5.0,
            session_timeout=10.0,
            heartbeat_interval=1.0,
            retry_backoff_max=0.1,
        )
        if group
        else None
    )
    machine = ConsumerEngine(
        ConsumerConfig(
            group=group_config,
            assignors=assignors_for("range") if group else (),
            **config,
        ),
        cluster(),
        rand=lambda: 0.5,
    )
    return machine, Conversation(machine)


def committed_answer(offsets: dict[TopicPartition, int]) -> OffsetFetchResponse:
    group = OffsetFetchResponse.OffsetFetchResponseGroup
    topics = group.OffsetFetchResponseTopics
    part = topics.OffsetFetchResponsePartitions
    return OffsetFetchResponse(
        groups=[
            group(
                group_id="g",
                topics=[
                    topics(
                        name="t",
                        partitions=[
                            part(partition_index=tp.partition, committed_offset=offset)
                            for tp, offset in offsets.items()
                        ],
                    )
                ],
            )
        ]
    )


def records_answer(partition: int, offsets: range) -> FetchResponse:
    batch = encode_batch(
        [Record(key=None, value=b"v%d" % o) for o in offsets], base_offset=offsets.start
    )
    data = PartitionData(
        partition_index=partition,
        high_watermark=offsets.stop,
        last_stable_offset=offsets.stop,
        log_start_offset=0,
        records=batch,
    )
    return FetchResponse(responses=[FetchableTopicResponse(topic="t", partitions=[data])])


def fetched_offsets(talk: Conversation, sent: SendRequest[Any]) -> dict[int, int]:
    request: FetchRequest = talk.request(sent)
    return {p.partition: p.fetch_offset for t in request.topics for p in t.partitions}


def taken(talk: Conversation, kind: type[Any]) -> list[Any]:
    found = [e for e in talk.events if isinstance(e, kind)]
    talk.events = [e for e in talk.events if not isinstance(e, kind)]
    return found


def assigned_at(offset: int) -> tuple[ConsumerEngine, Conversation, SendRequest[Any]]:
    """An engine with group g reading t-0 from committed `offset`; returns its first Fetch."""
    machine, talk = engine()
    machine.assign([T0], talk.now)
    sent = talk.expect(OffsetFetchRequest)
    assert sent.target == Coordinator("g")
    talk.reply(sent, committed_answer({T0: offset}))
    fetch = talk.expect(FetchRequest)
    assert fetch.target == Broker(1) and fetched_offsets(talk, fetch) == {0: offset}
    return machine, talk, fetch


def test_an_assigned_partition_reads_from_its_committed_offset_and_poll_hands_records_out() -> None:
    machine, talk, fetch = assigned_at(5)
    assert machine.poll(talk.now) == []
    talk.reply(fetch, records_answer(0, range(5, 8)))
    talk.step()
    assert taken(talk, PollReady), "a waiting poll is woken"
    records = machine.poll(talk.now)
    assert [r.offset for r in records] == [5, 6, 7]
    assert machine.consumed() == {T0: OffsetAndMetadata(8, "", records[-1].leader_epoch)}
    assert fetched_offsets(talk, talk.expect(FetchRequest)) == {0: 8}


def test_a_poll_that_leaves_records_behind_is_followed_by_poll_ready() -> None:
    """An embedder polling on `PollReady` stalled: a poll capped by `max_poll_records` left
    the rest fetched, and no PollReady came for them (no new data was coming)."""
    machine, talk = engine(max_poll_records=2)
    machine.assign([T0], talk.now)
    talk.reply(talk.expect(OffsetFetchRequest), committed_answer({T0: 5}))
    talk.reply(talk.expect(FetchRequest), records_answer(0, range(5, 8)))
    talk.step()
    assert taken(talk, PollReady)
    assert [r.offset for r in machine.poll(talk.now)] == [5, 6]
    talk.step()
    assert taken(talk, PollReady), "a record is left for the next poll"
    assert [r.offset for r in machine.poll(talk.now)] == [7]
    talk.step()
    assert not taken(talk, PollReady)


def test_an_empty_poll_while_a_fetch_is_under_way_gives_the_engine_nothing_to_do() -> None:
    """A driver need not step the engine after a poll that found nothing (`AfterPoll`)."""
    machine, talk, fetch = assigned_at(5)
    assert machine.poll(talk.now) == [] and machine.after_poll() is AfterPoll.NOTHING
    talk.expect_nothing()
    talk.reply(fetch, records_answer(0, range(5, 8)))
    talk.step()
    assert len(machine.poll(talk.now)) == 3
    assert machine.after_poll() is AfterPoll.STEP, "the fetch was used up"
    talk.expect(FetchRequest)
    assert machine.poll(talk.now) == [] and machine.after_poll() is AfterPoll.NOTHING


def test_a_poll_that_starts_a_join_or_an_auto_commit_wakes_the_driver() -> None:
    machine, talk = engine(auto_commit=True)
    machine.subscribe(["t"], talk.now)
    machine.metadata_updated(talk.now)
    talk.step()
    assert machine.poll(talk.now) == [] and machine.after_poll() is AfterPoll.WAKE, "joining"
    machine, talk = engine(auto_commit=True)
    machine.assign([T0], talk.now)
    talk.reply(talk.expect(OffsetFetchRequest), committed_answer({T0: 5}))
    talk.expect(FetchRequest)
    assert machine.poll(talk.now) == [] and machine.after_poll() is AfterPoll.NOTHING
    talk.advance(5.0)
    assert machine.poll(talk.now) == [] and machine.after_poll() is AfterPoll.WAKE, "auto-commit"


def test_a_stable_members_empty_poll_needs_no_step() -> None:
    machine, talk, step = subscribed()
    machine.rebalance_done(step, talk.now)
    talk.reply(talk.expect(OffsetFetchRequest), committed_answer({T0: 5, T1: 9}))
    talk.step()
    assert machine.poll(talk.now) == [] and machine.after_poll() is AfterPoll.NOTHING


def test_records_kept_for_one_by_one_delivery_are_not_consumed_yet() -> None:
    machine, talk, fetch = assigned_at(5)
    talk.reply(fetch, records_answer(0, range(5, 8)))
    talk.step()
    machine.keep(machine.poll(talk.now))
    assert machine.buffer.popleft().offset == 5
    assert machine.consumed()[T0].offset == 6 and machine.position(T0) == 6
    machine.seek(T0, 0)
    assert not machine.buffer and machine.position(T0) == 0


def test_without_a_committed_offset_the_reset_policy_asks_the_leader() -> None:
    machine, talk = engine(auto_offset_reset=ResetStrategy.LATEST)
    machine.assign([T0, T1], talk.now)
    talk.reply(talk.expect(OffsetFetchRequest), committed_answer({T0: -1, T1: 3}))
    lookup = talk.expect(ListOffsetsRequest)
    assert lookup.target == Broker(1)
    request = talk.request(lookup)
    assert [(p.partition_index, p.timestamp) for t in request.topics for p in t.partitions] == [
        (0, -1)
    ]
    assert machine.position(T0) is None and machine.position(T1) == 3
    part = ListOffsetsResponse.ListOffsetsTopicResponse.ListOffsetsPartitionResponse
    talk.reply(
        lookup,
        ListOffsetsResponse(
            topics=[
                ListOffsetsResponse.ListOffsetsTopicResponse(
                    name="t", partitions=[part(partition_index=0, offset=42, leader_epoch=0)]
                )
            ]
        ),
    )
    talk.step()
    assert taken(talk, PollReady)
    assert machine.position(T0) == 42


def test_without_a_group_every_partition_starts_by_the_reset_policy() -> None:
    machine, talk = engine(group=False, auto_offset_reset=ResetStrategy.EARLIEST)
    machine.assign([T1], talk.now)
    lookup = talk.expect(ListOffsetsRequest)
    assert lookup.target == Broker(2)
    assert not [s for s in talk.outbox if isinstance(talk.request(s), OffsetFetchRequest)]


def test_an_assigned_topic_the_principal_may_not_describe_fails_each_poll_after_a_refresh() -> None:
    machine, talk = engine(group=False, auto_offset_reset=ResetStrategy.EARLIEST)
    hidden = TopicPartition("hidden", 0)
    machine.assign([hidden], talk.now)
    talk.step()
    denied = MetadataResponseTopic(name="hidden", error_code=C.TOPIC_AUTHORIZATION_FAILED)
    for _ in range(2):
        machine.metadata.update(MetadataResponse(topics=[denied]), talk.now)
        machine.metadata_updated(talk.now)
        with pytest.raises(TopicAuthorizationFailedError, match="hidden"):
            machine.poll(talk.now)
        assert machine.poll(talk.now) == []  # raised once per refresh that still denies it


def test_an_assigned_partition_the_topic_lacks_fails_each_poll_after_a_refresh() -> None:
    machine, talk = engine(group=False, auto_offset_reset=ResetStrategy.EARLIEST)
    missing = TopicPartition("t", 9)
    machine.assign([T0, missing], talk.now)
    talk.step()
    for _ in range(2):
        machine.metadata_updated(talk.now)
        with pytest.raises(UnknownTopicOrPartitionError, match=r"t-9 does not exist: 't' has 2"):
            machine.poll(talk.now)
        assert machine.poll(talk.now) == []  # raised once per refresh that still lacks it
    machine.assign([T0], talk.now)
    machine.metadata_updated(talk.now)
    assert machine.poll(talk.now) == []


def test_polling_with_nothing_subscribed_or_assigned_is_an_illegal_state() -> None:
    machine, talk = engine(group=False)
    for poll in (machine.poll, machine.poll_batches):
        with pytest.raises(IllegalStateError, match="not subscribed to any topics or assigned"):
            poll(talk.now)


def test_auto_commit_goes_out_at_a_poll_once_the_interval_passed() -> None:
    machine, talk = engine(auto_commit=True)
    machine.assign([T0], talk.now)
    talk.reply(talk.expect(OffsetFetchRequest), committed_answer({T0: 5}))
    talk.reply(talk.expect(FetchRequest), records_answer(0, range(5, 8)))
    talk.step()
    assert len(machine.poll(talk.now)) == 3
    talk.advance(4.0)
    machine.poll(talk.now)
    assert not [s for s in talk.outbox if isinstance(talk.request(s), OffsetCommitRequest)]
    talk.advance(1.0)
    machine.poll(talk.now)
    sent = talk.expect(OffsetCommitRequest)
    assert sent.target == Coordinator("g")
    request = talk.request(sent)
    assert request.generation_id_or_member_epoch == -1
    assert [(p.partition_index, p.committed_offset) for p in request.topics[0].partitions] == [
        (0, 8)
    ]
    sent_at = talk.now
    talk.advance(0.5)
    talk.reply(sent, commit_response(request))
    talk.step()
    (done,) = taken(talk, OffsetsCommitted)
    assert done.offsets[T0].offset == 8
    assert done.sent == sent_at  # when it was sent, for the commit's span


def test_close_commits_what_was_consumed_then_completes() -> None:
    machine, talk = engine(auto_commit=True)
    machine.assign([T0], talk.now)
    talk.reply(talk.expect(OffsetFetchRequest), committed_answer({T0: 5}))
    talk.reply(talk.expect(FetchRequest), records_answer(0, range(5, 7)))
    talk.step()
    machine.poll(talk.now, max_records=1)
    talk.outbox.clear()
    op = machine.close(talk.now, timeout=5.0)
    sent = talk.expect(OffsetCommitRequest)
    request = talk.request(sent)
    assert [p.committed_offset for p in request.topics[0].partitions] == [6]
    assert talk.pending(op)
    closed_at = talk.now
    talk.advance(0.25)
    talk.reply(sent, commit_response(request))
    assert talk.outcome(op) is None
    (done,) = taken(talk, OffsetsCommitted)
    assert done.sent == closed_at
    talk.expect_nothing()


def test_close_completes_at_its_deadline_when_the_coordinator_is_silent() -> None:
    machine, talk = engine(auto_commit=True)
    machine.assign([T0], talk.now)
    machine.seek(T0, 3)
    op = machine.close(talk.now, timeout=2.0)
    talk.expect(OffsetCommitRequest)
    assert machine.next_deadline() == 2.0
    talk.advance_to_deadline()
    assert talk.outcome(op) is None


def test_a_commit_of_a_partition_not_assigned_is_refused() -> None:
    machine, talk = engine()
    machine.assign([T0], talk.now)
    with pytest.raises(Exception, match="not assigned"):
        machine.commit({T1: 3}, talk.now)


def subscribed(
    *, auto_commit: bool = False
) -> tuple[ConsumerEngine, Conversation, PartitionsAssigned]:
    """A classic member of g, alone, assigned both partitions of t; the listener's step is
    returned unanswered."""
    machine, talk = engine(auto_commit=auto_commit)
    machine.subscribe(["t"], talk.now)
    talk.step()
    assert taken(talk, RefreshMetadata) == [RefreshMetadata(frozenset({"t"}))]
    machine.metadata_updated(talk.now)
    talk.expect_nothing()  # a member joins in the application's poll, as Java's
    assert machine.poll(talk.now) == []
    join = talk.expect(JoinGroupRequest)
    assert join.target == Coordinator("g")
    request = talk.request(join)
    protocol = request.protocols[0]
    member = JoinGroupResponse.JoinGroupResponseMember
    talk.reply(
        join,
        JoinGroupResponse(
            generation_id=1,
            protocol_type="consumer",
            protocol_name=protocol.name,
            leader="m1",
            member_id="m1",
            members=[member(member_id="m1", metadata=protocol.metadata)],
        ),
    )
    sync = talk.expect(SyncGroupRequest)
    assignment = talk.request(sync).assignments[0].assignment
    talk.reply(
        sync,
        SyncGroupResponse(
            protocol_type="consumer", protocol_name=protocol.name, assignment=assignment
        ),
    )
    talk.step()
    (step,) = taken(talk, PartitionsAssigned)
    assert step.partitions == frozenset({T0, T1}) == step.assignment
    return machine, talk, step


def test_positions_wait_for_the_listener_of_an_assignment_which_may_seek() -> None:
    machine, talk, step = subscribed()
    assert machine.assignment() == {T0, T1}
    talk.expect_nothing()
    machine.seek(T0, 7)
    machine.rebalance_done(step, talk.now)
    fetch_committed = talk.expect(OffsetFetchRequest)
    request = talk.request(fetch_committed)
    asked = {p for g in request.groups for t in g.topics for p in t.partition_indexes}
    assert asked == {1}, "the listener's seek stands"
    assert fetched_offsets(talk, talk.expect(FetchRequest)) == {0: 7}


def test_a_listener_error_does_not_stop_the_rebalance() -> None:
    machine, talk, step = subscribed()
    machine.rebalance_done(step, talk.now, RuntimeError("listener bug"))
    talk.expect(OffsetFetchRequest)
    with pytest.raises(Exception, match="not the outstanding"):
        machine.rebalance_done(step, talk.now)


def test_unsubscribing_revokes_through_the_application_then_leaves() -> None:
    machine, talk, step = subscribed(auto_commit=True)
    machine.rebalance_done(step, talk.now)
    talk.reply(talk.expect(OffsetFetchRequest), committed_answer({T0: 5, T1: 9}))
    op = machine.unsubscribe(talk.now)
    talk.step()
    (revoked,) = taken(talk, PartitionsRevoked)
    assert revoked.partitions == frozenset({T0, T1}) and talk.pending(op)
    machine.rebalance_done(revoked, talk.now)
    leave = talk.expect(LeaveGroupRequest)
    assert leave.target == Coordinator("g")
    talk.reply(leave, LeaveGroupResponse())
    assert talk.outcome(op) is None
    assert machine.assignment() == set()


def test_closing_a_member_commits_then_revokes_through_the_application_then_leaves() -> None:
    machine, talk, step = subscribed(auto_commit=True)
    machine.rebalance_done(step, talk.now)
    talk.reply(talk.expect(OffsetFetchRequest), committed_answer({T0: 5, T1: 9}))
    talk.step()
    assert machine.poll(talk.now) == []  # positions polled count as consumed
    op = machine.close(talk.now, timeout=5.0)
    commit = talk.expect(OffsetCommitRequest)
    request = talk.request(commit)
    assert request.generation_id_or_member_epoch == 1
    assert {p.partition_index: p.committed_offset for p in request.topics[0].partitions} == {
        0: 5,
        1: 9,
    }
    talk.reply(commit, commit_response(request))
    talk.step()
    (revoked,) = taken(talk, PartitionsRevoked)
    assert talk.pending(op)
    machine.rebalance_done(revoked, talk.now)
    talk.reply(talk.expect(LeaveGroupRequest), LeaveGroupResponse())
    assert talk.outcome(op) is None


def test_a_group_error_is_raised_by_the_next_poll_once() -> None:
    machine, talk = engine()
    machine.subscribe(["t"], talk.now)
    machine.metadata_updated(talk.now)
    talk.expect_nothing()  # a member joins in the application's poll, as Java's
    assert machine.poll(talk.now) == []
    join = talk.expect(JoinGroupRequest)
    talk.reply(join, JoinGroupResponse(error_code=C.GROUP_AUTHORIZATION_FAILED, member_id=""))
    talk.step()
    assert taken(talk, PollReady)
    with pytest.raises(GroupAuthorizationFailedError):
        machine.poll(talk.now)
    assert machine.poll(talk.now) == []


def test_no_deadline_while_waiting_only_for_answers() -> None:
    machine, talk = engine(group=False, auto_offset_reset=ResetStrategy.EARLIEST)
    machine.assign([T0], talk.now)
    talk.expect(ListOffsetsRequest)
    assert machine.next_deadline() is None
    talk.expect_nothing()


@pytest.mark.parametrize("isolation", list(IsolationLevel))
def test_cached_offsets_and_lag_come_from_the_last_fetch_response(
    isolation: IsolationLevel,
) -> None:
    """Seed 000's `cached_beginning_offset` / `cached_end_offset`: the log start offset and the
    high watermark (the last stable offset under read_committed) of the last fetch response,
    without a request; None before one and once the partition is no longer assigned. The
    metrics' `lag` is the total over the assigned partitions."""
    machine, talk = engine(fetch=FetchConfig(isolation_level=isolation))
    machine.assign([T0], talk.now)
    talk.reply(talk.expect(OffsetFetchRequest), committed_answer({T0: 5}))
    fetch = talk.expect(FetchRequest)
    assert machine.cached_beginning_offset(T0) is None and machine.cached_end_offset(T0) is None
    answer = records_answer(0, range(5, 8))
    data = answer.responses[0].partitions[0]
    data.high_watermark, data.last_stable_offset, data.log_start_offset = 20, 15, 3
    talk.reply(fetch, answer)
    talk.step()
    end = 15 if isolation is IsolationLevel.READ_COMMITTED else 20
    assert machine.cached_beginning_offset(T0) == 3 and machine.cached_end_offset(T0) == end
    machine.poll(talk.now)
    metrics = machine.metrics.snapshot(machine.lag())
    assert metrics["lag"] == end - 8 and metrics["lag_by_partition"] == {T0: end - 8}
    assert talk.expect(FetchRequest)  # the next fetch, no other request
    machine.assign([T1], talk.now)
    assert machine.cached_end_offset(T0) is None and machine.cached_beginning_offset(T0) is None
    assert machine.metrics.snapshot(machine.lag())["lag"] == 0
