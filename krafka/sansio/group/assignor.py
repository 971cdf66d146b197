"""What a group member needs of a partition assignor, and the consumer protocol it speaks.

A member announces, per assignor it supports, a ConsumerProtocolSubscription (topics,
assignor user data, owned partitions, generation, rack: v0-v3, prefixed with an int16
version); the leader's chosen assignor turns every member's subscription into a
ConsumerProtocolAssignment each. Both layouts are Java's, so krafka, Java, librdkafka and
kafka-python members share a group. Newer versions than ours are read with our layout (fields
are only ever appended).

An assignor is pure: `assign` sees the cluster (partition counts, replica racks) and the
subscriptions, nothing else. The member's rebalance protocol is the highest one every
configured assignor supports (Java's rule): COOPERATIVE only when all of them can.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Final, Protocol

from krafka.errors import ConfigError, RemoteProtocolError
from krafka.protocol.messages.consumer_protocol_assignment import ConsumerProtocolAssignment
from krafka.protocol.messages.consumer_protocol_subscription import ConsumerProtocolSubscription
from krafka.structs import TopicPartition

_VERSION_PREFIX: Final = 2


class RebalanceProtocol(IntEnum):
    """EAGER: every member gives up everything before each rebalance. COOPERATIVE (KIP-429):
    members keep what they own and only give up what moves, in a second round."""

    EAGER = 0
    COOPERATIVE = 1


@dataclass(frozen=True, slots=True)
class Subscription:
    """One member's ConsumerProtocolSubscription; `group_instance_id` comes from JoinGroup."""

    topics: tuple[str, ...]
    user_data: bytes | None = None
    owned_partitions: tuple[TopicPartition, ...] = ()
    generation_id: int = -1
    rack_id: str | None = None
    group_instance_id: str | None = None


@dataclass(frozen=True, slots=True)
class Assignment:
    """One member's ConsumerProtocolAssignment."""

    partitions: tuple[TopicPartition, ...]
    user_data: bytes | None = None


@dataclass(frozen=True, slots=True)
class Cluster:
    """What an assignor may know of the cluster: partitions per topic and replica racks."""

    partitions: Mapping[str, int]
    racks: Mapping[TopicPartition, frozenset[str]] = field(default_factory=dict)

    def partitions_for(self, topic: str) -> list[TopicPartition]:
        return [TopicPartition(topic, p) for p in range(self.partitions.get(topic, 0))]


class PartitionAssignor(Protocol):
    """A pluggable assignment strategy (Java's ConsumerPartitionAssignor)."""

    @property
    def name(self) -> str: ...

    def supported_protocols(self) -> Sequence[RebalanceProtocol]: ...

    def subscription_user_data(
        self, topics: Collection[str], owned: Sequence[TopicPartition], generation: int
    ) -> bytes | None:
        """The bytes sent with the subscription, given the member's last assignment and its
        generation (-1 if none): sticky assignors carry it for stickiness."""
        ...

    def assign(
        self, cluster: Cluster, subscriptions: Mapping[str, Subscription]
    ) -> Mapping[str, Assignment]: ...

    def on_assignment(self, assignment: Assignment, generation: int) -> None: ...


def rebalance_protocol(assignors: Sequence[PartitionAssignor]) -> RebalanceProtocol:
    """The highest protocol all `assignors` support (Java's ConsumerCoordinator rule)."""
    if not assignors:
        raise ConfigError("a group member needs at least one partition assignor")
    common = set(RebalanceProtocol)
    for assignor in assignors:
        common &= set(assignor.supported_protocols())
    if not common:
        names = [a.name for a in assignors]
        raise ConfigError(f"assignors {names} have no rebalance protocol in common")
    return max(common)


def _grouped(partitions: Iterable[TopicPartition]) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for topic, partition in sorted(set(partitions)):
        out.setdefault(topic, []).append(partition)
    return out


def _flatten(topics: Iterable[tuple[str, Iterable[int]]]) -> tuple[TopicPartition, ...]:
    return tuple(TopicPartition(t, int(p)) for t, ps in topics for p in ps)


def encode_subscription(subscription: Subscription, version: int = 3) -> bytes:
    owned = ConsumerProtocolSubscription.TopicPartition
    body = ConsumerProtocolSubscription(
        topics=list(subscription.topics),
        user_data=subscription.user_data,
        owned_partitions=[
            owned(topic=t, partitions=ps)
            for t, ps in _grouped(subscription.owned_partitions).items()
        ],
        generation_id=subscription.generation_id,
        rack_id=subscription.rack_id,
    )
    return version.to_bytes(_VERSION_PREFIX, "big", signed=True) + body.encode(version)


def decode_subscription(data: bytes, group_instance_id: str | None = None) -> Subscription:
    version = _version(data, "subscription")
    body, _ = ConsumerProtocolSubscription.decode_prefix(
        data, min(version, ConsumerProtocolSubscription.MAX_VERSION), _VERSION_PREFIX
    )
    return Subscription(
        topics=tuple(body.topics),
        user_data=body.user_data,
        owned_partitions=_flatten((t.topic, t.partitions) for t in body.owned_partitions),
        generation_id=body.generation_id,
        rack_id=body.rack_id,
        group_instance_id=group_instance_id,
    )


def encode_assignment(assignment: Assignment, version: int = 3) -> bytes:
    topic = ConsumerProtocolAssignment.TopicPartition
    body = ConsumerProtocolAssignment(
        assigned_partitions=[
            topic(topic=t, partitions=ps) for t, ps in _grouped(assignment.partitions).items()
        ],
        user_data=assignment.user_data,
    )
    return version.to_bytes(_VERSION_PREFIX, "big", signed=True) + body.encode(version)


def decode_assignment(data: bytes) -> Assignment:
    version = _version(data, "assignment")
    body, _ = ConsumerProtocolAssignment.decode_prefix(
        data, min(version, ConsumerProtocolAssignment.MAX_VERSION), _VERSION_PREFIX
    )
    return Assignment(
        partitions=_flatten((t.topic, t.partitions) for t in body.assigned_partitions),
        user_data=body.user_data,
    )


def _version(data: bytes, what: str) -> int:
    if len(data) < _VERSION_PREFIX:
        raise RemoteProtocolError(f"consumer protocol {what} of {len(data)} bytes has no version")
    version = int.from_bytes(data[:_VERSION_PREFIX], "big", signed=True)
    if version < 0:
        raise RemoteProtocolError(f"consumer protocol {what} has version {version}")
    return version


__all__ = [
    "Assignment",
    "Cluster",
    "PartitionAssignor",
    "RebalanceProtocol",
    "Subscription",
    "decode_assignment",
    "decode_subscription",
    "encode_assignment",
    "encode_subscription",
    "rebalance_protocol",
]
