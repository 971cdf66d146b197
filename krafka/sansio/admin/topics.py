"""Topics: create, delete, list and describe them, and add partitions.

CreateTopics, DeleteTopics and CreatePartitions go to the controller (a KRaft broker forwards
them); listing and describing read a Metadata answer from any broker. Creating and deleting are
not retried on codes that may mean the work was done (only NOT_CONTROLLER and throttling are).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

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
from krafka.protocol.messages.create_partitions_request import (
    CreatePartitionsAssignment,
    CreatePartitionsTopic,
)
from krafka.protocol.messages.create_topics_request import (
    CreatableReplicaAssignment,
    CreatableTopic,
    CreatableTopicConfig,
)
from krafka.protocol.schema import ZERO_UUID
from krafka.sansio.actions import Versioned
from krafka.sansio.admin.acls import AclOperation, authorized_operations
from krafka.sansio.admin.operation import AdminOperation, Call, Handler
from krafka.sansio.admin.outcome import (
    CONTROLLER_MOVED,
    NOTHING_MOVES,
    Done,
    ItemResult,
    for_code,
)
from krafka.sansio.admin.routing import METADATA_MAX_VERSION, Target, ToBrokers

#: CreateTopics v4+ accept -1 partitions / replication factor: the broker's defaults (KIP-464).
_BROKER_DEFAULTS_VERSION: Final = 4
_DELETE_BY_STATE_VERSION: Final = 6
_TOPIC_AUTHORIZED_OPERATIONS_VERSION: Final = 8
#: Metadata v4+ can ask a broker not to create the topics it is asked about (older ones do).
_AUTO_CREATE_FLAG_VERSION: Final = 4


@dataclass(frozen=True, slots=True)
class NewTopic:
    """A topic to create. `num_partitions` / `replication_factor` None take the broker's
    defaults; `replica_assignment` ({partition: [broker ids]}, partitions 0..n-1) places
    the replicas by hand and replaces both."""

    name: str
    num_partitions: int | None = 1
    replication_factor: int | None = 1
    configs: Mapping[str, str] = field(default_factory=dict)
    replica_assignment: Mapping[int, Sequence[int]] | None = None

    def __post_init__(self) -> None:
        if not self.name:
            raise ValueError("NewTopic needs a name")
        if self.num_partitions is not None and self.num_partitions < 1:
            raise ValueError(f"topic {self.name!r}: num_partitions must be >= 1 (or None)")
        if self.replication_factor is not None and self.replication_factor < 1:
            raise ValueError(f"topic {self.name!r}: replication_factor must be >= 1 (or None)")
        assignment = self.replica_assignment
        if assignment is not None:
            if sorted(assignment) != list(range(len(assignment))) or not assignment:
                raise ValueError(
                    f"topic {self.name!r}: replica_assignment must cover partitions 0..n-1"
                )
            if any(not replicas for replicas in assignment.values()):
                raise ValueError(f"topic {self.name!r}: every partition needs a replica")

    def _creatable(self) -> CreatableTopic:
        manual = self.replica_assignment is not None
        assignments = [
            CreatableReplicaAssignment(partition_index=p, broker_ids=[int(b) for b in brokers])
            for p, brokers in sorted((self.replica_assignment or {}).items())
        ]
        configs = [CreatableTopicConfig(name=k, value=v) for k, v in self.configs.items()]
        return CreatableTopic(
            name=self.name,
            num_partitions=-1 if manual or self.num_partitions is None else self.num_partitions,
            replication_factor=(
                -1 if manual or self.replication_factor is None else self.replication_factor
            ),
            assignments=assignments,
            configs=configs,
        )

    def _needs_defaults(self) -> bool:
        return self.replica_assignment is None and (
            self.num_partitions is None or self.replication_factor is None
        )


@dataclass(frozen=True, slots=True)
class CreatedTopic:
    """What the broker says it created (or would create, with `validate_only`); fields the
    broker's version does not report are None."""

    name: str
    topic_id: uuid.UUID | None = None
    num_partitions: int | None = None
    replication_factor: int | None = None


@dataclass(frozen=True, slots=True)
class NewPartitions:
    """Grow a topic to `total_count` partitions; `assignments` places the new ones by hand
    (one list of broker ids per new partition)."""

    total_count: int
    assignments: Sequence[Sequence[int]] | None = None


@dataclass(frozen=True, slots=True)
class TopicPartitionInfo:
    """One partition of a described topic: broker ids of its leader (None: no leader now),
    replicas, in-sync replicas and offline replicas."""

    partition: int
    leader: int | None
    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    offline_replicas: tuple[int, ...] = ()
    leader_epoch: int | None = None


@dataclass(frozen=True, slots=True)
class TopicDescription:
    name: str
    topic_id: uuid.UUID | None
    internal: bool
    partitions: tuple[TopicPartitionInfo, ...]
    authorized_operations: frozenset[AclOperation] | None = None


def _topic_id(value: Any) -> uuid.UUID | None:
    return None if value is None or value == ZERO_UUID else uuid.UUID(str(value))


def _positive(value: Any) -> int | None:
    return int(value) if value is not None and int(value) >= 0 else None


class CreateTopics(Handler[str]):
    what = "create topics"

    def __init__(self, topics: Mapping[str, NewTopic], validate_only: bool, timeout_ms: int):
        self.topics = topics
        self.validate_only = validate_only
        self.timeout_ms = timeout_ms

    def describe(self, key: str) -> str:
        return f"topic {key!r}"

    def requests(self, target: Target, keys: Sequence[str]) -> list[Call[str]]:
        request = CreateTopicsRequest(
            topics=[self.topics[k]._creatable() for k in keys],
            timeout_ms=self.timeout_ms,
            validate_only=self.validate_only,
        )
        defaults = any(self.topics[k]._needs_defaults() for k in keys)
        minimum = _BROKER_DEFAULTS_VERSION if defaults else (1 if self.validate_only else None)
        return [Call(request, tuple(keys), min_version=minimum)]

    def on_response(
        self, call: Call[str], target: Target, response: Any
    ) -> Mapping[str, ItemResult]:
        assert isinstance(response, CreateTopicsResponse)
        out: dict[str, ItemResult] = {}
        for t in response.topics:
            name = str(t.name)
            what = f"create topic {name!r}"
            code = int(t.error_code)
            outcome = for_code(code, what, t.error_message, moved=CONTROLLER_MOVED, retry=False)
            out[name] = outcome or Done(
                CreatedTopic(
                    name,
                    _topic_id(t.topic_id),
                    _positive(t.num_partitions),
                    _positive(t.replication_factor),
                )
            )
        return out


def create_topics(
    topics: Iterable[NewTopic], *, timeout: float, validate_only: bool = False
) -> AdminOperation[str]:
    """The admin call creating `topics` on the controller, for a `ClientCore` to run (what
    `AdminClient.create_topics` runs): `start(now)` it; it completes with `{name: CreatedTopic
    or error}` within `timeout` seconds."""
    new: dict[str, NewTopic] = {}
    for topic in topics:
        if topic.name in new:
            raise ValueError(f"topic {topic.name!r} is listed twice")
        new[topic.name] = topic
    handler = CreateTopics(new, validate_only, int(timeout * 1000))
    return AdminOperation(handler, ToBrokers(controller=True), new, timeout=timeout)


class DeleteTopics(Handler[str]):
    what = "delete topics"

    def __init__(self, timeout_ms: int) -> None:
        self.timeout_ms = timeout_ms

    def describe(self, key: str) -> str:
        return f"topic {key!r}"

    def requests(self, target: Target, keys: Sequence[str]) -> list[Call[str]]:
        names, timeout_ms = list(keys), self.timeout_ms

        def build(version: int) -> DeleteTopicsRequest:
            if version >= _DELETE_BY_STATE_VERSION:
                states = [DeleteTopicsRequest.DeleteTopicState(name=n) for n in names]
                return DeleteTopicsRequest(topics=states, timeout_ms=timeout_ms)
            return DeleteTopicsRequest(topic_names=names, timeout_ms=timeout_ms)

        return [Call(Versioned(ApiKey.DELETE_TOPICS, build), tuple(keys))]

    def on_response(
        self, call: Call[str], target: Target, response: Any
    ) -> Mapping[str, ItemResult]:
        assert isinstance(response, DeleteTopicsResponse)
        out: dict[str, ItemResult] = {}
        for r in response.responses:
            if r.name is None:
                continue
            name = str(r.name)
            code = int(r.error_code)
            what = f"delete topic {name!r}"
            out[name] = for_code(
                code, what, r.error_message, moved=CONTROLLER_MOVED, retry=False
            ) or Done(None)
        return out


def _metadata_request(topics: Sequence[str] | None, authorized: bool) -> Versioned[Any]:
    def build(version: int) -> MetadataRequest:
        return MetadataRequest(
            topics=None
            if topics is None
            else [MetadataRequest.MetadataRequestTopic(name=t) for t in topics],
            allow_auto_topic_creation=version < _AUTO_CREATE_FLAG_VERSION,
            include_topic_authorized_operations=(
                authorized and version >= _TOPIC_AUTHORIZED_OPERATIONS_VERSION
            ),
        )

    return Versioned(ApiKey.METADATA, build)


#: The one item of a call that asks about the whole cluster.
CLUSTER: Final = "cluster"


class ListTopics(Handler[str]):
    """Every topic name the broker reports (internal ones only when asked)."""

    what = "list topics"

    def __init__(self, internal: bool) -> None:
        self.internal = internal

    def requests(self, target: Target, keys: Sequence[str]) -> list[Call[str]]:
        request = _metadata_request(None, authorized=False)
        return [Call(request, tuple(keys), max_version=METADATA_MAX_VERSION)]

    def on_response(
        self, call: Call[str], target: Target, response: Any
    ) -> Mapping[str, ItemResult]:
        assert isinstance(response, MetadataResponse)
        names = sorted(
            str(t.name)
            for t in response.topics
            if t.name is not None and (self.internal or not t.is_internal)
        )
        return dict.fromkeys(call.keys, Done(names))


class DescribeTopics(Handler[str]):
    what = "describe topics"

    def __init__(self, include_authorized_operations: bool) -> None:
        self.authorized = include_authorized_operations

    def describe(self, key: str) -> str:
        return f"topic {key!r}"

    def requests(self, target: Target, keys: Sequence[str]) -> list[Call[str]]:
        request = _metadata_request(list(keys), self.authorized)
        return [Call(request, tuple(keys), max_version=METADATA_MAX_VERSION)]

    def on_response(
        self, call: Call[str], target: Target, response: Any
    ) -> Mapping[str, ItemResult]:
        assert isinstance(response, MetadataResponse)
        out: dict[str, ItemResult] = {}
        for t in response.topics:
            if t.name is None:
                continue
            name = str(t.name)
            code = int(t.error_code)
            outcome = for_code(code, f"describe topic {name!r}", moved=NOTHING_MOVES)
            out[name] = outcome or Done(_description(t, self.authorized))
        return out


def _description(topic: Any, authorized: bool) -> TopicDescription:
    partitions = tuple(
        TopicPartitionInfo(
            partition=int(p.partition_index),
            leader=_positive(p.leader_id),
            replicas=tuple(int(r) for r in p.replica_nodes),
            isr=tuple(int(r) for r in p.isr_nodes),
            offline_replicas=tuple(int(r) for r in p.offline_replicas),
            leader_epoch=_positive(p.leader_epoch),
        )
        for p in sorted(topic.partitions, key=lambda p: int(p.partition_index))
    )
    operations = authorized_operations(int(topic.topic_authorized_operations))
    return TopicDescription(
        name=str(topic.name),
        topic_id=_topic_id(topic.topic_id),
        internal=bool(topic.is_internal),
        partitions=partitions,
        authorized_operations=operations if authorized else None,
    )


class CreatePartitions(Handler[str]):
    what = "create partitions"

    def __init__(
        self, partitions: Mapping[str, NewPartitions], validate_only: bool, timeout_ms: int
    ) -> None:
        self.partitions = partitions
        self.validate_only = validate_only
        self.timeout_ms = timeout_ms

    def describe(self, key: str) -> str:
        return f"topic {key!r}"

    def requests(self, target: Target, keys: Sequence[str]) -> list[Call[str]]:
        topics = []
        for name in keys:
            new = self.partitions[name]
            assignments = (
                None
                if new.assignments is None
                else [
                    CreatePartitionsAssignment(broker_ids=[int(b) for b in brokers])
                    for brokers in new.assignments
                ]
            )
            topics.append(
                CreatePartitionsTopic(name=name, count=new.total_count, assignments=assignments)
            )
        request = CreatePartitionsRequest(
            topics=topics, timeout_ms=self.timeout_ms, validate_only=self.validate_only
        )
        return [Call(request, tuple(keys))]

    def on_response(
        self, call: Call[str], target: Target, response: Any
    ) -> Mapping[str, ItemResult]:
        assert isinstance(response, CreatePartitionsResponse)
        out: dict[str, ItemResult] = {}
        for r in response.results:
            name = str(r.name)
            code = int(r.error_code)
            what = f"create partitions for topic {name!r}"
            out[name] = for_code(
                code, what, r.error_message, moved=CONTROLLER_MOVED, retry=False
            ) or Done(None)
        return out


__all__ = [
    "CLUSTER",
    "CreatePartitions",
    "CreateTopics",
    "CreatedTopic",
    "DeleteTopics",
    "DescribeTopics",
    "ListTopics",
    "NewPartitions",
    "NewTopic",
    "TopicDescription",
    "TopicPartitionInfo",
]
