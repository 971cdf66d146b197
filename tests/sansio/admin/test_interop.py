"""Every request the admin handlers build, at every version both sides speak, is read back by
independent decoders: kafka-python 3's (all admin APIs) and aiokafka's hand-written classes
(the older versions it has). Answers built by kafka-python are read by the handlers too."""

from __future__ import annotations

import io
import uuid
from collections.abc import Callable
from typing import Any

import pytest
from _admin_scripted import NO_JITTER, answer_coordinators, metadata, start

from krafka.protocol.messages import ApiKey
from krafka.protocol.schema import Struct
from krafka.sansio.admin import (
    acls,
    cluster,
    configs,
    group_description,
    group_offsets,
    groups,
    offsets,
    scram,
    topics,
    transactions,
)
from krafka.sansio.admin.operation import Handler
from krafka.sansio.admin.routing import Routing, ToAnyBroker, ToBrokers, ToCoordinators, ToLeaders
from krafka.sansio.coordinator import CoordinatorType
from krafka.structs import OffsetAndMetadata, TopicPartition

kp_admin = pytest.importorskip("kafka.protocol.admin")
kp_consumer = pytest.importorskip("kafka.protocol.consumer")
kp_metadata = pytest.importorskip("kafka.protocol.metadata")
aio_admin = pytest.importorskip("aiokafka.protocol.admin")

T0, T1, U3 = TopicPartition("t", 0), TopicPartition("t", 1), TopicPartition("u", 3)
ACL = acls.AclBinding(
    acls.ResourceType.TOPIC,
    "pay-",
    acls.PatternType.PREFIXED,
    "User:bob",
    "10.0.0.1",
    acls.AclOperation.WRITE,
    acls.AclPermissionType.DENY,
)
ACL_FILTER = acls.AclBindingFilter(resource_type=acls.ResourceType.TOPIC, principal="User:bob")


def coordinators(kind: CoordinatorType = CoordinatorType.GROUP) -> ToCoordinators[str]:
    return ToCoordinators(kind, str, NO_JITTER, lambda: 0.5)


Case = tuple[Callable[[], Handler[Any]], Callable[[], Routing[Any]], list[Any], int]

CASES: dict[str, Case] = {
    "CreateTopics": (
        lambda: topics.CreateTopics(
            {
                "a": topics.NewTopic("a", 3, 2, {"retention.ms": "1"}),
                "b": topics.NewTopic("b", replica_assignment={0: [1, 2]}),
            },
            True,
            5000,
        ),
        lambda: ToAnyBroker(),
        ["a", "b"],
        ApiKey.CREATE_TOPICS,
    ),
    "DeleteTopics": (
        lambda: topics.DeleteTopics(5000),
        ToAnyBroker,
        ["a", "b"],
        ApiKey.DELETE_TOPICS,
    ),
    "CreatePartitions": (
        lambda: topics.CreatePartitions(
            {"a": topics.NewPartitions(3, [[1], [2]]), "b": topics.NewPartitions(5)}, True, 5000
        ),
        lambda: ToAnyBroker(),
        ["a", "b"],
        ApiKey.CREATE_PARTITIONS,
    ),
    "Metadata": (lambda: topics.DescribeTopics(True), ToAnyBroker, ["a", "b"], ApiKey.METADATA),
    "DescribeConfigs": (
        lambda: configs.DescribeConfigs(["retention.ms"], True, True),
        ToAnyBroker,
        [configs.ConfigResource.topic("t"), configs.ConfigResource.broker()],
        ApiKey.DESCRIBE_CONFIGS,
    ),
    "IncrementalAlterConfigs": (
        lambda: configs.AlterConfigs(
            {
                configs.ConfigResource.topic("t"): (
                    configs.AlterConfigOp.set("a", "1"),
                    configs.AlterConfigOp.delete("b"),
                )
            },
            True,
        ),
        ToAnyBroker,
        [configs.ConfigResource.topic("t")],
        ApiKey.INCREMENTAL_ALTER_CONFIGS,
    ),
    "ListGroups": (
        lambda: groups.ListGroups([groups.GroupState.STABLE], [groups.GroupType.CONSUMER]),
        lambda: ToBrokers(lambda b: b),
        [1],
        ApiKey.LIST_GROUPS,
    ),
    "ListGroupsAll": (
        lambda: groups.ListGroups([], []),
        lambda: ToBrokers(lambda b: b),
        [1],
        ApiKey.LIST_GROUPS,
    ),
    "DescribeGroups": (
        lambda: group_description.DescribeGroups(True),
        coordinators,
        ["g1", "g2"],
        ApiKey.DESCRIBE_GROUPS,
    ),
    "DeleteGroups": (groups.DeleteGroups, coordinators, ["g1", "g2"], ApiKey.DELETE_GROUPS),
    "OffsetFetch": (
        lambda: group_offsets.ListGroupOffsets([T0, T1, U3], False),
        coordinators,
        ["g"],
        ApiKey.OFFSET_FETCH,
    ),
    "OffsetFetchAll": (
        lambda: group_offsets.ListGroupOffsets(None, True),
        coordinators,
        ["g"],
        ApiKey.OFFSET_FETCH,
    ),
    "OffsetCommit": (
        lambda: group_offsets.AlterGroupOffsets(
            {T0: OffsetAndMetadata(5, "m", 2), U3: OffsetAndMetadata(0)}
        ),
        coordinators,
        ["g"],
        ApiKey.OFFSET_COMMIT,
    ),
    "OffsetDelete": (
        lambda: group_offsets.DeleteGroupOffsets([T0, U3]),
        coordinators,
        ["g"],
        ApiKey.OFFSET_DELETE,
    ),
    "ListOffsets": (
        lambda: offsets.ListOffsets(
            {T0: -2, T1: 1_700_000_000_000, U3: -3}, offsets.IsolationLevel.READ_COMMITTED
        ),
        ToLeaders,
        [T0, T1, U3],
        ApiKey.LIST_OFFSETS,
    ),
    "DeleteRecords": (
        lambda: offsets.DeleteRecords({T0: 10, U3: -1}, 5000),
        ToLeaders,
        [T0, U3],
        ApiKey.DELETE_RECORDS,
    ),
    "DescribeCluster": (
        lambda: cluster.DescribeCluster(True),
        ToAnyBroker,
        ["cluster"],
        ApiKey.DESCRIBE_CLUSTER,
    ),
    "DescribeLogDirs": (
        cluster.DescribeLogDirs,
        lambda: ToBrokers(lambda b: b),
        [1],
        ApiKey.DESCRIBE_LOG_DIRS,
    ),
    "CreateAcls": (acls.CreateAcls, ToAnyBroker, [ACL], ApiKey.CREATE_ACLS),
    "DescribeAcls": (acls.DescribeAcls, ToAnyBroker, [ACL_FILTER], ApiKey.DESCRIBE_ACLS),
    "DeleteAcls": (
        acls.DeleteAcls,
        ToAnyBroker,
        [ACL_FILTER, acls.AclBindingFilter()],
        ApiKey.DELETE_ACLS,
    ),
    "DescribeUserScramCredentials": (
        scram.DescribeUserScramCredentials,
        ToAnyBroker,
        ["alice", "bob"],
        ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS,
    ),
    "AlterUserScramCredentials": (
        lambda: scram.AlterUserScramCredentials(
            [
                scram.ScramUpsertion("alice", "SCRAM-SHA-512", "pw", 8192, b"salt"),
                scram.ScramDeletion("bob", scram.ScramMechanism.SCRAM_SHA_256),
            ]
        ),
        ToAnyBroker,
        ["alice", "bob"],
        ApiKey.ALTER_USER_SCRAM_CREDENTIALS,
    ),
    "DescribeProducers": (
        transactions.DescribeProducers,
        ToLeaders,
        [T0, U3],
        ApiKey.DESCRIBE_PRODUCERS,
    ),
    "ListTransactions": (
        lambda: transactions.ListTransactions([transactions.TransactionState.ONGOING], [7], None),
        lambda: ToBrokers(lambda b: b),
        [1],
        ApiKey.LIST_TRANSACTIONS,
    ),
    "DescribeTransactions": (
        transactions.DescribeTransactions,
        lambda: coordinators(CoordinatorType.TRANSACTION),
        ["tx1", "tx2"],
        ApiKey.DESCRIBE_TRANSACTIONS,
    ),
}


def built(case: Case, version: int) -> list[tuple[Any, Any]]:
    """The (SendRequest, request) pairs a handler sends when `version` is negotiated."""
    make_handler, make_routing, keys, api = case
    _, talk, _ = start(make_handler(), make_routing(), keys, versions={api: version})
    answer_coordinators(talk, 1)
    talk.step()
    lookups = [s for s in talk.outbox if s.api_key == ApiKey.METADATA and api != ApiKey.METADATA]
    for sent in lookups:
        talk.outbox.remove(sent)
        talk.reply(sent, metadata({"t": {0: 1, 1: 2}, "u": {3: 1}}))
    talk.step()
    return [(s, talk.request(s)) for s in talk.outbox if s.api_key == api]


def present(value: Any, version: int) -> Any:
    """Our message as kafka-python's to_dict() shows it: fields of `version` only."""
    if isinstance(value, list):
        return [present(v, version) for v in value]
    if not isinstance(value, Struct):
        return value
    return {
        f.name: present(getattr(value, f.name), version)
        for f in value._FIELDS
        if f.present(version)
    }


def normalize(value: Any) -> Any:
    """Plain values from either side (kafka-python shows a zero uuid as None)."""
    if isinstance(value, dict):
        return {k: normalize(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [normalize(v) for v in value]
    if isinstance(value, uuid.UUID):
        return None if value.int == 0 else str(value)
    return value


def their_fields(obj: Any) -> Any:
    """A kafka-python message as a dict of its raw values (to_dict() mangles bytes)."""
    if isinstance(obj, list):
        return [their_fields(o) for o in obj]
    if hasattr(obj, "to_dict"):
        return {name: their_fields(getattr(obj, name)) for name in obj.to_dict()}
    return obj


def theirs(name: str) -> Any:
    for module in (kp_admin, kp_consumer, kp_metadata):
        cls = getattr(module, f"{name.removesuffix('All')}Request", None)
        if cls is not None:
            return cls
    raise AssertionError(name)


@pytest.mark.parametrize("name", sorted(CASES))
def test_kafka_python_reads_every_request_at_every_version(name: str) -> None:
    case = CASES[name]
    cls = theirs(name)
    from krafka.protocol import REQUESTS

    ours = REQUESTS[ApiKey(case[3])]
    checked = 0
    for version in range(
        max(ours.MIN_VERSION, cls.min_version), min(ours.MAX_VERSION, cls.max_version) + 1
    ):
        try:
            requests = built(case, version)
        except Exception as exc:  # a version the handler refuses to build for (documented)
            assert "UnsupportedVersion" in type(exc).__name__, exc
            continue
        for sent, request in requests:
            if sent.min_version is not None and version < sent.min_version:
                continue
            decoded = cls.decode(request.encode(version), version=version)
            assert normalize(their_fields(decoded)) == normalize(present(request, version)), version
            checked += 1
    assert checked, f"no version of {name} was checked"


AIOKAFKA = {
    "CreateTopics": ("CreateTopicsRequest", range(0, 4)),
    "DeleteTopics": ("DeleteTopicsRequest", range(0, 4)),
    "CreatePartitions": ("CreatePartitionsRequest", range(0, 2)),
    "DescribeConfigs": ("DescribeConfigsRequest", range(0, 3)),
    "DescribeGroups": ("DescribeGroupsRequest", range(0, 4)),
    "ListGroupsAll": ("ListGroupsRequest", range(0, 3)),
    "DeleteGroups": ("DeleteGroupsRequest", range(0, 2)),
    "DeleteRecords": ("DeleteRecordsRequest", range(0, 2)),
    "CreateAcls": ("CreateAclsRequest", range(1, 2)),
    "DescribeAcls": ("DescribeAclsRequest", range(1, 2)),  # its v2 is not the flexible v2
    "DeleteAcls": ("DeleteAclsRequest", range(1, 2)),
}


def flatten(value: Any) -> list[Any]:
    if isinstance(value, dict):
        return [x for v in value.values() for x in flatten(v)]
    if isinstance(value, list | tuple):
        return [x for v in value for x in flatten(v)]
    return [value]


@pytest.mark.parametrize("name", sorted(AIOKAFKA))
def test_aiokafka_hand_written_classes_read_the_older_versions(name: str) -> None:
    base, versions = AIOKAFKA[name]
    checked = 0
    for version in versions:
        schema = getattr(aio_admin, f"{base}_v{version}").SCHEMA
        try:
            requests = built(CASES[name], version)
        except Exception as exc:
            assert "UnsupportedVersion" in type(exc).__name__, exc
            continue
        for sent, request in requests:
            if sent.min_version is not None and version < sent.min_version:
                continue
            decoded = schema.decode(io.BytesIO(request.encode(version)))
            assert flatten(decoded) == flatten(present(request, version)), version
            checked += 1
    assert checked
