"""The admin operation machine: routing, batching per broker, retries with backoff, moved
brokers, deadlines, and when a call fails as a whole — driven by scripted brokers."""

from __future__ import annotations

import pytest
from _admin_scripted import (
    NO_JITTER,
    answer_coordinator,
    answer_coordinators,
    answer_metadata,
    broker,
    metadata,
    start,
    take,
)

from krafka.errors import (
    GroupAuthorizationFailedError,
    KafkaConnectionError,
    KafkaTimeoutError,
    NonEmptyGroupError,
    ProtocolError,
    UnknownTopicOrPartitionError,
    UnsupportedVersionError,
)
from krafka.protocol.error_codes import ErrorCode
from krafka.protocol.messages import (
    CreateTopicsRequest,
    CreateTopicsResponse,
    DeleteGroupsRequest,
    DeleteGroupsResponse,
    DescribeLogDirsRequest,
    DescribeLogDirsResponse,
    ListOffsetsRequest,
    ListOffsetsResponse,
    MetadataRequest,
)
from krafka.sansio.actions import AnyBroker
from krafka.sansio.admin.cluster import DescribeLogDirs
from krafka.sansio.admin.groups import DeleteGroups
from krafka.sansio.admin.offsets import IsolationLevel, ListOffsets, OffsetSpec
from krafka.sansio.admin.routing import ToAnyBroker, ToBrokers, ToCoordinators, ToLeaders
from krafka.sansio.admin.topics import CreateTopics, NewTopic
from krafka.sansio.coordinator import CoordinatorType
from krafka.structs import TopicPartition


def group_routing() -> ToCoordinators[str]:
    return ToCoordinators(CoordinatorType.GROUP, str, NO_JITTER, lambda: 0.5)


def deleted(*results: tuple[str, int]) -> DeleteGroupsResponse:
    return DeleteGroupsResponse(
        results=[
            DeleteGroupsResponse.DeletableGroupResult(group_id=g, error_code=c) for g, c in results
        ]
    )


def test_no_items_completes_at_once() -> None:
    _, talk, op = start(DeleteGroups(), group_routing(), [])
    assert talk.outcome(op) == {}


def test_groups_are_batched_per_coordinator() -> None:
    _, talk, op = start(DeleteGroups(), group_routing(), ["a", "b", "c"])
    assert answer_coordinators(talk, {"a": 1, "b": 2, "c": 1}) == ["a", "b", "c"]
    talk.step()
    sent_groups = {s.target: talk.request(s).groups_names for s in talk.outbox}
    assert sent_groups == {broker(1): ["a", "c"], broker(2): ["b"]}
    for sent in list(talk.outbox):
        talk.outbox.remove(sent)
        talk.reply(sent, deleted(*[(g, 0) for g in talk.request(sent).groups_names]))
    assert talk.outcome(op) == {"a": None, "b": None, "c": None}


def test_a_moved_coordinator_is_found_again_and_only_its_group_resent() -> None:
    _, talk, op = start(DeleteGroups(), group_routing(), ["a", "b"])
    answer_coordinators(talk, 1)
    sent, request = take(talk, DeleteGroupsRequest)
    assert request.groups_names == ["a", "b"]
    talk.reply(sent, deleted(("a", ErrorCode.NOT_COORDINATOR), ("b", ErrorCode.NON_EMPTY_GROUP)))
    talk.expect_nothing()  # backing off
    talk.advance(0.1)
    assert answer_coordinator(talk, 2) == "a"
    sent, request = take(talk, DeleteGroupsRequest)
    assert sent.target == broker(2) and request.groups_names == ["a"]
    talk.reply(sent, deleted(("a", 0)))
    results = talk.outcome(op)
    assert results["a"] is None and isinstance(results["b"], NonEmptyGroupError)
    assert "group 'b'" in str(results["b"])


def test_a_loading_coordinator_is_retried_after_backoff_at_the_same_broker() -> None:
    operation, talk, op = start(DeleteGroups(), group_routing(), ["a"])
    answer_coordinator(talk, 3)
    sent, _ = take(talk, DeleteGroupsRequest)
    talk.reply(sent, deleted(("a", ErrorCode.COORDINATOR_LOAD_IN_PROGRESS)))
    assert operation.next_deadline() == pytest.approx(0.1)
    talk.expect_nothing()
    talk.advance_to_deadline()
    sent, _ = take(talk, DeleteGroupsRequest)
    assert sent.target == broker(3)
    talk.reply(sent, deleted(("a", 0)))
    assert talk.outcome(op) == {"a": None}


def test_retries_back_off_exponentially_up_to_the_cap() -> None:
    _operation, talk, op = start(DeleteGroups(), group_routing(), ["a"], timeout=100)
    answer_coordinator(talk, 1)
    delays = []
    for _ in range(6):
        sent, _ = take(talk, DeleteGroupsRequest)
        talk.reply(sent, deleted(("a", ErrorCode.COORDINATOR_LOAD_IN_PROGRESS)))
        before = talk.now
        talk.advance_to_deadline()
        delays.append(round(talk.now - before, 3))
    assert delays == [0.1, 0.2, 0.4, 0.8, 1.0, 1.0]
    assert talk.pending(op)


def test_an_item_still_retrying_at_the_deadline_times_out_in_its_slot() -> None:
    _, talk, op = start(DeleteGroups(), group_routing(), ["a", "b"], timeout=1.0)
    answer_coordinators(talk, 1)
    sent, _ = take(talk, DeleteGroupsRequest)
    talk.reply(sent, deleted(("a", ErrorCode.COORDINATOR_LOAD_IN_PROGRESS), ("b", 0)))
    while talk.pending(op):
        talk.advance_to_deadline()
        for sent in list(talk.outbox):
            talk.outbox.remove(sent)
            talk.reply(sent, deleted(("a", ErrorCode.COORDINATOR_LOAD_IN_PROGRESS)))
    results = talk.outcome(op)
    assert results["b"] is None
    assert isinstance(results["a"], KafkaTimeoutError)
    assert "COORDINATOR_LOAD_IN_PROGRESS" in str(results["a"]) and "within 1s" in str(results["a"])


def test_a_call_no_item_of_which_was_answered_fails_as_a_whole() -> None:
    _, talk, op = start(DeleteGroups(), group_routing(), ["a"], timeout=1.0)
    while talk.pending(op):
        answer_coordinators(talk, 1)
        talk.step()
        for sent in list(talk.outbox):
            talk.outbox.remove(sent)
            talk.fail(sent, KafkaConnectionError("connection refused"))
        if talk.machine.next_deadline() is not None:
            talk.advance_to_deadline()
    with pytest.raises(KafkaTimeoutError, match="connection refused"):
        talk.outcome(op)


def test_an_api_the_broker_lacks_fails_the_call() -> None:
    _, talk, op = start(DeleteGroups(), group_routing(), ["a", "b"])
    answer_coordinators(talk, 1)
    sent, _ = take(talk, DeleteGroupsRequest)
    talk.fail(sent, UnsupportedVersionError("DeleteGroups is not supported"))
    with pytest.raises(UnsupportedVersionError):
        talk.outcome(op)


def test_an_item_the_answer_leaves_out_fails() -> None:
    _, talk, op = start(DeleteGroups(), group_routing(), ["a", "b"])
    answer_coordinators(talk, 1)
    sent, _ = take(talk, DeleteGroupsRequest)
    talk.reply(sent, deleted(("a", 0)))
    results = talk.outcome(op)
    assert results["a"] is None and isinstance(results["b"], ProtocolError)


def test_a_coordinator_lookup_refused_for_good_fails_that_group_only() -> None:
    _, talk, op = start(DeleteGroups(), group_routing(), ["a", "b"])
    answer_coordinators(talk, 1, errors={"a": ErrorCode.GROUP_AUTHORIZATION_FAILED})
    sent, request = take(talk, DeleteGroupsRequest)
    assert request.groups_names == ["b"]
    talk.reply(sent, deleted(("b", 0)))
    results = talk.outcome(op)
    assert isinstance(results["a"], GroupAuthorizationFailedError) and results["b"] is None


def listed(*parts: tuple[str, int, int, int]) -> ListOffsetsResponse:
    topics: dict[
        str, list[ListOffsetsResponse.ListOffsetsTopicResponse.ListOffsetsPartitionResponse]
    ] = {}
    for topic, p, code, offset in parts:
        topics.setdefault(topic, []).append(
            ListOffsetsResponse.ListOffsetsTopicResponse.ListOffsetsPartitionResponse(
                partition_index=p, error_code=code, offset=offset, timestamp=-1
            )
        )
    return ListOffsetsResponse(
        topics=[
            ListOffsetsResponse.ListOffsetsTopicResponse(name=t, partitions=ps)
            for t, ps in topics.items()
        ]
    )


def test_partitions_go_to_their_leaders_one_request_per_leader() -> None:
    tps = [TopicPartition("t", p) for p in range(4)]
    specs = dict.fromkeys(tps, int(OffsetSpec.LATEST))
    _, talk, op = start(ListOffsets(specs, IsolationLevel.READ_UNCOMMITTED), ToLeaders(), tps)
    request = answer_metadata(talk, metadata({"t": {0: 1, 1: 2, 2: 1, 3: 3}}))
    assert [t.name for t in request.topics] == ["t"] and not request.allow_auto_topic_creation
    talk.step()
    by_leader = {
        s.target.node_id: sorted(p.partition_index for p in talk.request(s).topics[0].partitions)
        for s in talk.outbox
    }
    assert by_leader == {1: [0, 2], 2: [1], 3: [3]}
    for sent in list(talk.outbox):
        talk.outbox.remove(sent)
        parts = talk.request(sent).topics[0].partitions
        talk.reply(
            sent, listed(*[("t", p.partition_index, 0, 10 + p.partition_index) for p in parts])
        )
    results = talk.outcome(op)
    assert {tp: r.offset for tp, r in results.items()} == {tp: 10 + tp.partition for tp in tps}


def test_a_moved_leader_is_looked_up_again() -> None:
    tp = TopicPartition("t", 0)
    handler = ListOffsets({tp: int(OffsetSpec.EARLIEST)}, IsolationLevel.READ_UNCOMMITTED)
    _, talk, op = start(handler, ToLeaders(), [tp])
    answer_metadata(talk, metadata({"t": {0: 1}}))
    sent, _ = take(talk, ListOffsetsRequest)
    talk.reply(sent, listed(("t", 0, ErrorCode.NOT_LEADER_OR_FOLLOWER, -1)))
    talk.expect_nothing()
    talk.advance_to_deadline()
    answer_metadata(talk, metadata({"t": {0: 2}}))
    sent, _ = take(talk, ListOffsetsRequest)
    assert sent.target == broker(2)
    talk.reply(sent, listed(("t", 0, 0, 5)))
    assert talk.outcome(op)[tp].offset == 5


def test_unknown_topics_and_partitions_fail_at_once_leaderless_ones_wait() -> None:
    tps = [TopicPartition("gone", 0), TopicPartition("t", 9), TopicPartition("t", 1)]
    handler = ListOffsets(dict.fromkeys(tps, -1), IsolationLevel.READ_UNCOMMITTED)
    _, talk, op = start(handler, ToLeaders(), tps)
    answer_metadata(
        talk, metadata({"gone": ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "t": {0: 1, 1: -1}})
    )
    talk.expect_nothing()
    talk.advance_to_deadline()
    answer_metadata(talk, metadata({"t": {0: 1, 1: 3}}))
    sent, _ = take(talk, ListOffsetsRequest)
    assert sent.target == broker(3)
    talk.reply(sent, listed(("t", 1, 0, 7)))
    results = talk.outcome(op)
    assert isinstance(results[tps[0]], UnknownTopicOrPartitionError)
    assert isinstance(results[tps[1]], UnknownTopicOrPartitionError)
    assert results[tps[2]].offset == 7


def created(*topics: tuple[str, int]) -> CreateTopicsResponse:
    return CreateTopicsResponse(
        topics=[CreateTopicsResponse.CreatableTopicResult(name=n, error_code=c) for n, c in topics]
    )


def test_controller_requests_follow_the_controller() -> None:
    handler = CreateTopics({"a": NewTopic("a", 3)}, False, 5000)
    _, talk, op = start(handler, ToBrokers(controller=True), ["a"])
    request = answer_metadata(talk, metadata(controller=2))
    assert request.topics == []
    sent, body = take(talk, CreateTopicsRequest)
    assert sent.target == broker(2) and body.timeout_ms == 5000
    talk.reply(sent, created(("a", ErrorCode.NOT_CONTROLLER)))
    talk.advance_to_deadline()
    answer_metadata(talk, metadata(controller=3))
    sent, _ = take(talk, CreateTopicsRequest)
    assert sent.target == broker(3)
    talk.reply(sent, created(("a", 0)))
    assert talk.outcome(op)["a"].name == "a"


def test_requests_that_may_have_taken_effect_are_not_retried() -> None:
    handler = CreateTopics({"a": NewTopic("a"), "b": NewTopic("b")}, False, 5000)
    _, talk, op = start(handler, ToAnyBroker(), ["a", "b"])
    sent, _ = take(talk, CreateTopicsRequest)
    assert sent.target == AnyBroker()
    talk.reply(
        sent,
        created(("a", ErrorCode.REQUEST_TIMED_OUT), ("b", ErrorCode.THROTTLING_QUOTA_EXCEEDED)),
    )
    talk.advance_to_deadline()
    sent, body = take(talk, CreateTopicsRequest)
    assert [t.name for t in body.topics] == ["b"]
    talk.reply(sent, created(("b", 0)))
    results = talk.outcome(op)
    assert type(results["a"]).__name__ == "RequestTimedOutError" and results["b"].name == "b"


def test_a_broker_not_in_the_cluster_fails_its_items() -> None:
    _, talk, op = start(DescribeLogDirs(), ToBrokers(lambda b: b), [1, 7])
    answer_metadata(talk, metadata())
    sent, _ = take(talk, DescribeLogDirsRequest)
    assert sent.target == broker(1)
    talk.reply(sent, DescribeLogDirsResponse())
    results = talk.outcome(op)
    assert results[1] == {} and "broker 7 is not in the cluster" in str(results[7])


def test_lookups_are_not_repeated_while_one_is_in_flight() -> None:
    tps = [TopicPartition("t", 0), TopicPartition("t", 1)]
    handler = ListOffsets(dict.fromkeys(tps, -1), IsolationLevel.READ_UNCOMMITTED)
    _, talk, _ = start(handler, ToLeaders(), tps)
    talk.step()
    talk.step()
    assert [type(talk.request(s)) for s in talk.outbox] == [MetadataRequest]
