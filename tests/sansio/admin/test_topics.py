"""Topic handlers: what CreateTopics / DeleteTopics / CreatePartitions / Metadata requests
carry, and how their answers become per-topic results (scripted, through the wire format)."""

from __future__ import annotations

import uuid

import pytest
from _admin_scripted import answer_metadata, metadata, start, take

from krafka.errors import (
    InvalidPartitionsError,
    TopicAlreadyExistsError,
    UnknownTopicOrPartitionError,
)
from krafka.protocol.error_codes import ErrorCode
from krafka.protocol.messages import (
    ApiKey,
    CreatePartitionsRequest,
    CreatePartitionsResponse,
    CreateTopicsRequest,
    CreateTopicsResponse,
    DeleteTopicsRequest,
    DeleteTopicsResponse,
    MetadataRequest,
    MetadataResponse,
)
from krafka.sansio.admin.acls import AclOperation
from krafka.sansio.admin.routing import ToAnyBroker, ToBrokers
from krafka.sansio.admin.topics import (
    CLUSTER,
    CreatePartitions,
    CreateTopics,
    DeleteTopics,
    DescribeTopics,
    ListTopics,
    NewPartitions,
    NewTopic,
)

TOPIC_ID = uuid.UUID("12345678-1234-5678-1234-567812345678")


def test_new_topic_validates_and_defaults() -> None:
    topic = NewTopic("orders")
    assert (topic.num_partitions, topic.replication_factor, dict(topic.configs)) == (1, 1, {})
    with pytest.raises(ValueError, match="num_partitions"):
        NewTopic("t", 0)
    with pytest.raises(ValueError, match=r"0\.\.n-1"):
        NewTopic("t", replica_assignment={1: [1]})
    with pytest.raises(ValueError, match="needs a replica"):
        NewTopic("t", replica_assignment={0: []})
    with pytest.raises(ValueError, match="name"):
        NewTopic("")


@pytest.mark.parametrize("version", [4, 5, 7])
def test_create_topics_carries_counts_configs_and_assignments(version: int) -> None:
    topics = {
        "a": NewTopic("a", 6, 3, configs={"cleanup.policy": "compact"}),
        "b": NewTopic("b", replica_assignment={0: [1, 2], 1: [2, 3]}),
        "c": NewTopic("c", None, None),
    }
    _, talk, op = start(
        CreateTopics(topics, True, 15000),
        ToAnyBroker(),
        topics,
        versions={ApiKey.CREATE_TOPICS: version},
    )
    sent, request = take(talk, CreateTopicsRequest)
    assert sent.min_version == 4  # broker defaults (-1) need KIP-464
    assert request.validate_only and request.timeout_ms == 15000
    a, b, c = request.topics
    assert (a.num_partitions, a.replication_factor) == (6, 3)
    assert [(x.name, x.value) for x in a.configs] == [("cleanup.policy", "compact")]
    assert (b.num_partitions, b.replication_factor) == (-1, -1)
    assert [(x.partition_index, x.broker_ids) for x in b.assignments] == [(0, [1, 2]), (1, [2, 3])]
    assert (c.num_partitions, c.replication_factor) == (-1, -1) and not c.assignments
    R = CreateTopicsResponse.CreatableTopicResult
    talk.reply(
        sent,
        CreateTopicsResponse(
            topics=[
                R(name="a", topic_id=TOPIC_ID, num_partitions=6, replication_factor=3),
                R(name="b", error_code=ErrorCode.TOPIC_ALREADY_EXISTS, error_message="exists"),
                R(name="c", error_code=ErrorCode.POLICY_VIOLATION, error_message="no"),
            ]
        ),
    )
    results = talk.outcome(op)
    if version >= 7:
        assert results["a"].topic_id == TOPIC_ID
    if version >= 5:
        assert (results["a"].num_partitions, results["a"].replication_factor) == (6, 3)
    else:
        assert results["a"].num_partitions is None
    assert isinstance(results["b"], TopicAlreadyExistsError)
    assert str(results["b"]) == "create topic 'b' failed: TOPIC_ALREADY_EXISTS (exists)"
    assert type(results["c"]).__name__ == "PolicyViolationError"


def test_create_topics_with_counts_speaks_any_version_and_validate_only_needs_v1() -> None:
    _, talk, _ = start(CreateTopics({"a": NewTopic("a", 1)}, False, 1000), ToAnyBroker(), ["a"])
    sent, _ = take(talk, CreateTopicsRequest)
    assert sent.min_version is None
    _, talk, _ = start(CreateTopics({"a": NewTopic("a", 1)}, True, 1000), ToAnyBroker(), ["a"])
    sent, _ = take(talk, CreateTopicsRequest)
    assert sent.min_version == 1


@pytest.mark.parametrize("version", [1, 5, 6])
def test_delete_topics_speaks_both_request_shapes(version: int) -> None:
    _, talk, op = start(
        DeleteTopics(30000), ToAnyBroker(), ["a", "b"], versions={ApiKey.DELETE_TOPICS: version}
    )
    sent, request = take(talk, DeleteTopicsRequest)
    if version >= 6:
        assert [t.name for t in request.topics] == ["a", "b"] and request.topic_names == []
    else:
        assert request.topic_names == ["a", "b"]
    R = DeleteTopicsResponse.DeletableTopicResult
    talk.reply(
        sent,
        DeleteTopicsResponse(
            responses=[
                R(name="a"),
                R(name="b", error_code=ErrorCode.UNKNOWN_TOPIC_OR_PARTITION),
            ]
        ),
    )
    results = talk.outcome(op)
    assert results["a"] is None and isinstance(results["b"], UnknownTopicOrPartitionError)


def partition(index: int, leader: int, replicas: list[int], isr: list[int]) -> object:
    return MetadataResponse.MetadataResponseTopic.MetadataResponsePartition(
        partition_index=index,
        leader_id=leader,
        leader_epoch=4,
        replica_nodes=replicas,
        isr_nodes=isr,
        offline_replicas=[r for r in replicas if r not in isr],
    )


@pytest.mark.parametrize("version", [1, 8, 12])
def test_describe_topics_reads_partitions_leaders_isr_and_operations(version: int) -> None:
    _, talk, op = start(
        DescribeTopics(True), ToAnyBroker(), ["orders", "gone"], versions={ApiKey.METADATA: version}
    )
    sent, request = take(talk, MetadataRequest)
    assert [t.name for t in request.topics] == ["orders", "gone"]
    assert request.allow_auto_topic_creation is (version < 4)  # v4+ can ask not to create
    assert request.include_topic_authorized_operations is (version >= 8)
    T = MetadataResponse.MetadataResponseTopic
    bits = (1 << AclOperation.READ) | (1 << AclOperation.DESCRIBE) | (1 << AclOperation.ALL)
    bits = bits if version >= 8 else -(2**31)
    talk.reply(
        sent,
        metadata_with(
            [
                T(
                    name="orders",
                    topic_id=TOPIC_ID,
                    partitions=[partition(1, -1, [2, 3], [3]), partition(0, 2, [1, 2], [1, 2])],
                    topic_authorized_operations=bits,
                ),
                T(name="gone", error_code=ErrorCode.UNKNOWN_TOPIC_OR_PARTITION),
            ]
        ),
    )
    results = talk.outcome(op)
    orders = results["orders"]
    assert [p.partition for p in orders.partitions] == [0, 1]
    p0, p1 = orders.partitions
    assert (p0.leader, p0.replicas, p0.isr) == (2, (1, 2), (1, 2))
    assert (p1.leader, p1.offline_replicas) == (None, (2,) if version >= 5 else ())
    assert p0.leader_epoch == (4 if version >= 7 else None)
    assert orders.topic_id == (TOPIC_ID if version >= 10 else None)
    if version >= 8:
        assert orders.authorized_operations == {AclOperation.READ, AclOperation.DESCRIBE}
    assert isinstance(results["gone"], UnknownTopicOrPartitionError)


def metadata_with(topics: list[object]) -> MetadataResponse:
    response = metadata()
    response.topics = topics  # type: ignore[assignment]
    return response


def test_list_topics_is_sorted_and_hides_internal_topics_unless_asked() -> None:
    T = MetadataResponse.MetadataResponseTopic
    topics = [T(name="b"), T(name="__consumer_offsets", is_internal=True), T(name="a")]
    for internal, expected in ((False, ["a", "b"]), (True, ["__consumer_offsets", "a", "b"])):
        _, talk, op = start(ListTopics(internal), ToAnyBroker(), [CLUSTER])
        sent, request = take(talk, MetadataRequest)
        assert request.topics is None
        talk.reply(sent, metadata_with(list(topics)))
        assert talk.outcome(op) == {CLUSTER: expected}


def test_create_partitions_goes_to_the_controller_with_assignments() -> None:
    wanted = {"a": NewPartitions(4, [[1], [2]]), "b": NewPartitions(2)}
    _, talk, op = start(CreatePartitions(wanted, True, 9000), ToBrokers(controller=True), wanted)
    answer_metadata(talk, metadata(controller=3))
    sent, request = take(talk, CreatePartitionsRequest)
    assert sent.target.node_id == 3 and request.validate_only and request.timeout_ms == 9000
    a, b = request.topics
    assert (a.name, a.count, [x.broker_ids for x in a.assignments]) == ("a", 4, [[1], [2]])
    assert (b.count, b.assignments) == (2, None)
    R = CreatePartitionsResponse.CreatePartitionsTopicResult
    talk.reply(
        sent,
        CreatePartitionsResponse(
            results=[R(name="a"), R(name="b", error_code=ErrorCode.INVALID_PARTITIONS)]
        ),
    )
    results = talk.outcome(op)
    assert results["a"] is None and isinstance(results["b"], InvalidPartitionsError)
