"""What a partition assignor is: the values it reads and returns and the protocol it follows.

A group member announces, for each assignor it is configured with, a `Subscription` (topics,
assignor user data, the partitions it owns and their generation, its rack); the group leader
runs the assignor the coordinator chose over every member's subscription and the `Cluster`,
and hands each member an `Assignment`. Everything here is a value: assignors are pure, and
krafka's built-in ones keep no state between calls (Java's keep the last assignment to build
their user data; here the member passes it to `subscription_user_data`).

Modelled on Java's `ConsumerPartitionAssignor` and franz-go's `GroupBalancer`.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import IntEnum
from typing import ClassVar, Protocol, runtime_checkable

from krafka.sansio.group.classic.assignors._java import hash_map_order, java_key
from krafka.structs import TopicPartition

#: The generation of a member that has none (never assigned, or reset after an error).
NO_GENERATION = -1


class RebalanceProtocol(IntEnum):
    """EAGER: every member gives up all its partitions before each rebalance. COOPERATIVE
    (KIP-429): members keep what they own and give up only what moves, in a second round.
    The values are Java's protocol ids; a higher id is the more advanced protocol."""

    EAGER = 0
    COOPERATIVE = 1


@dataclass(frozen=True, slots=True)
class Subscription:
    """One member's ConsumerProtocolSubscription (v0-v3). `group_instance_id` is not on the
    wire: the leader takes it from JoinGroup's member list (static members sort first)."""

    topics: tuple[str, ...]
    user_data: bytes | None = None
    owned_partitions: tuple[TopicPartition, ...] = ()
    generation_id: int = NO_GENERATION
    rack_id: str | None = None
    group_instance_id: str | None = None


@dataclass(frozen=True, slots=True)
class Assignment:
    """One member's ConsumerProtocolAssignment: its partitions and assignor user data."""

    partitions: tuple[TopicPartition, ...]
    user_data: bytes | None = None


@dataclass(frozen=True, slots=True)
class Cluster:
    """What an assignor may know of the cluster: the partition count of each topic, and the
    racks holding each partition's replicas (all replicas, as Java counts them; a partition
    missing from `racks` has no known rack)."""

    partitions: Mapping[str, int]
    racks: Mapping[TopicPartition, frozenset[str]] = field(default_factory=dict)

    def partitions_for(self, topic: str) -> list[TopicPartition]:
        return [TopicPartition(topic, p) for p in range(self.partitions.get(topic, 0))]

    def replica_racks(self, tp: TopicPartition) -> frozenset[str]:
        return self.racks.get(tp, frozenset())

    @classmethod
    def of(
        cls,
        partitions: Mapping[str, int],
        racks: Mapping[TopicPartition, Iterable[str]] | None = None,
    ) -> Cluster:
        """Build from plain mappings (rack collections of any kind)."""
        frozen = {tp: frozenset(r) for tp, r in (racks or {}).items()}
        return cls(dict(partitions), frozen)


@runtime_checkable
class PartitionAssignor(Protocol):
    """A pluggable assignment strategy (Java's `ConsumerPartitionAssignor`).

    `name` is the protocol name announced in JoinGroup; every member of a group must know the
    chosen one. `supported_protocols` lists the rebalance protocols the assignor's results obey
    (a COOPERATIVE assignor never moves a partition straight from one owner to another).
    `subscription_user_data` returns the bytes a member sends with its subscription, given its
    topics, the partitions of its last assignment and that assignment's generation
    (`NO_GENERATION` if none). `assign` runs on the leader and must return an assignment for
    every member of `subscriptions`, which lists the members in JoinGroup order.
    `on_assignment` tells the assignor what this member was given and in which generation.
    """

    @property
    def name(self) -> str: ...

    def supported_protocols(self) -> Sequence[RebalanceProtocol]: ...

    def subscription_user_data(
        self, topics: Collection[str], owned: Sequence[TopicPartition], generation: int
    ) -> bytes | None: ...

    def assign(
        self, cluster: Cluster, subscriptions: Mapping[str, Subscription]
    ) -> Mapping[str, Assignment]: ...

    def on_assignment(self, assignment: Assignment, generation: int) -> None: ...


class EagerAssignor:
    """An EAGER assignor without user data or state, made of one pure function
    (`assign_partitions`): Java's range and round-robin assignors."""

    name: ClassVar[str]

    def supported_protocols(self) -> Sequence[RebalanceProtocol]:
        return (RebalanceProtocol.EAGER,)

    def subscription_user_data(
        self,
        topics: Collection[str],
        owned: Sequence[TopicPartition] = (),
        generation: int = NO_GENERATION,
    ) -> bytes | None:
        return None

    def assign_partitions(
        self, cluster: Cluster, subscriptions: Mapping[str, Subscription]
    ) -> dict[str, list[TopicPartition]]:
        raise NotImplementedError

    def assign(
        self, cluster: Cluster, subscriptions: Mapping[str, Subscription]
    ) -> dict[str, Assignment]:
        result = self.assign_partitions(cluster, subscriptions)
        return {member: Assignment(tuple(ps)) for member, ps in result.items()}

    def on_assignment(self, assignment: Assignment, generation: int) -> None:
        return None

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


def member_sort_key(member_id: str, group_instance_id: str | None) -> tuple[int, bytes]:
    """Java's `MemberInfo` order: static members by instance id first, then dynamic members
    by member id, so static members keep their partitions across restarts."""
    if group_instance_id is not None:
        return 0, java_key(group_instance_id)
    return 1, java_key(member_id)


def sorted_members(subscriptions: Mapping[str, Subscription]) -> list[str]:
    """Members in `member_sort_key` order; members with equal keys (a duplicated instance id)
    stay in the order Java's leader iterates its subscription map."""
    return sorted(
        hash_map_order(subscriptions),
        key=lambda m: member_sort_key(m, subscriptions[m].group_instance_id),
    )


def partitions_per_topic(
    cluster: Cluster, subscriptions: Mapping[str, Subscription]
) -> dict[str, int]:
    """Partition counts of the subscribed topics the cluster knows (with partitions)."""
    topics = {t for s in subscriptions.values() for t in s.topics}
    ordered = sorted(topics, key=java_key)
    return {t: n for t in ordered if (n := cluster.partitions.get(t, 0)) > 0}


def rack_of(subscription: Subscription) -> str | None:
    """The member's rack; an empty rack id counts as none, as in Java."""
    return subscription.rack_id or None


__all__ = [
    "NO_GENERATION",
    "Assignment",
    "Cluster",
    "EagerAssignor",
    "PartitionAssignor",
    "RebalanceProtocol",
    "Subscription",
    "member_sort_key",
    "partitions_per_topic",
    "rack_of",
    "sorted_members",
]
