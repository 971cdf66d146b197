"""What both sticky builders share: who owned what before (Java's `allSubscriptionsEqual`)
and the racks (Java's `AbstractStickyAssignor.RackInfo`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from krafka.sansio.group.classic.assignors._java import hash_map_order
from krafka.sansio.group.classic.assignors._racks import use_rack_aware_assignment
from krafka.sansio.group.classic.assignors.assignor import (
    NO_GENERATION,
    Cluster,
    Subscription,
    rack_of,
)
from krafka.structs import TopicPartition


@dataclass(frozen=True, slots=True)
class MemberData:
    """A member's claimed partitions and their generation (None if it sent none)."""

    partitions: tuple[TopicPartition, ...]
    generation: int | None


MemberDataReader = Callable[[Subscription], MemberData]


@dataclass(slots=True)
class Ownership:
    """Each member's still-valid claims, after conflicts are settled by generation."""

    all_subscriptions_equal: bool
    owned: dict[str, list[TopicPartition]]
    multiply_owned: set[TopicPartition] = field(default_factory=set)
    max_generation: int = NO_GENERATION


def java_member_order(subscriptions: Mapping[str, Subscription]) -> list[str]:
    """The members in the order Java's leader iterates its subscription `HashMap`."""
    return hash_map_order(subscriptions)


def _remove(items: list[TopicPartition], tp: TopicPartition) -> None:
    if tp in items:
        items.remove(tp)


def _same_topics(subscription: Subscription, reference: set[str]) -> bool:
    return len(subscription.topics) == len(reference) and reference.issuperset(subscription.topics)


def resolve_ownership(
    partitions_per_topic: Mapping[str, int],
    subscriptions: Mapping[str, Subscription],
    member_data: MemberDataReader,
) -> Ownership:
    """A claim goes to the claimant of the highest generation; two claims in one generation
    invalidate the partition for both. Claims on unknown topics or partitions are dropped."""
    result = Ownership(True, {})
    reference: set[str] = set()
    previous_owner: dict[TopicPartition, str] = {}
    for member in java_member_order(subscriptions):
        subscription = subscriptions[member]
        if not reference:
            reference = set(subscription.topics)
        elif result.all_subscriptions_equal and not _same_topics(subscription, reference):
            result.all_subscriptions_equal = False
        data = member_data(subscription)
        generation = NO_GENERATION if data.generation is None else data.generation
        result.max_generation = max(result.max_generation, generation)
        owned: list[TopicPartition] = []
        result.owned[member] = owned
        for tp in data.partitions:
            if not 0 <= tp.partition < partitions_per_topic.get(tp.topic, 0):
                continue
            other = previous_owner.get(tp)
            if other is None:
                owned.append(tp)
                previous_owner[tp] = member
                continue
            other_generation = max(subscriptions[other].generation_id, NO_GENERATION)
            if generation == other_generation:
                result.multiply_owned.add(tp)
                _remove(result.owned[other], tp)
                previous_owner[tp] = member
            elif generation > other_generation:
                owned.append(tp)
                _remove(result.owned[other], tp)
                previous_owner[tp] = member
    return result


class RackInfo:
    """Members' racks and partitions' replica racks, kept only when rack-aware assignment
    applies; `num_consumers_by_partition` is kept whenever members have racks (Java orders
    unassigned partitions by it even then)."""

    __slots__ = ("consumer_racks", "num_consumers_by_partition", "partition_racks")

    def __init__(
        self,
        cluster: Cluster,
        partitions_per_topic: Mapping[str, int],
        subscriptions: Mapping[str, Subscription],
    ) -> None:
        by_rack: dict[str, int] = {}
        member_racks: dict[str, str] = {}
        for member, subscription in subscriptions.items():
            rack = rack_of(subscription)
            if rack is not None:
                by_rack[rack] = by_rack.get(rack, 0) + 1
                member_racks[member] = rack
        partition_racks: dict[TopicPartition, frozenset[str]] = {}
        if by_rack:
            for topic, count in partitions_per_topic.items():
                for p in range(count):
                    tp = TopicPartition(topic, p)
                    partition_racks[tp] = cluster.replica_racks(tp)
        all_racks = {r for racks in partition_racks.values() for r in racks}
        if use_rack_aware_assignment(by_rack.keys(), all_racks, partition_racks):
            self.consumer_racks = member_racks
            self.partition_racks = partition_racks
        else:
            self.consumer_racks = {}
            self.partition_racks = {}
        self.num_consumers_by_partition = {
            tp: sum(by_rack.get(r, 0) for r in racks) for tp, racks in partition_racks.items()
        }

    def mismatch(self, consumer: str, tp: TopicPartition) -> bool:
        rack = self.consumer_racks.get(consumer)
        if rack is None:
            return False
        racks = self.partition_racks.get(tp)
        return racks is None or rack not in racks

    def sort_by_rack_consumers(self, partitions: list[TopicPartition]) -> list[TopicPartition]:
        if not self.num_consumers_by_partition:
            return partitions
        counts = self.num_consumers_by_partition
        return sorted(partitions, key=lambda tp: counts.get(tp, 0))

    def next_rack_consumer(self, tp: TopicPartition, consumers: Sequence[str], first: int) -> int:
        """The index of the first member from `first` (wrapping) on a rack holding `tp`."""
        racks = self.partition_racks.get(tp)
        if not racks:
            return -1
        for i in range(len(consumers)):
            index = (first + i) % len(consumers)
            if self.consumer_racks.get(consumers[index]) in racks:
                return index
        return -1


__all__ = [
    "MemberData",
    "MemberDataReader",
    "Ownership",
    "RackInfo",
    "java_member_order",
    "resolve_ownership",
]
