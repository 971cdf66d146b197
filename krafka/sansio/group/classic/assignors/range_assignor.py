"""The range assignor (Java's `RangeAssignor`, the default of Java and librdkafka).

Per topic: the subscribers in member order (static members by instance id first) take
consecutive partitions, the first `count % members` of them one extra. So partition `p` of
topics with equal partition counts and subscribers lands on the same member (co-partitioning).

With racks (KIP-881, Java 3.5+): when some member's rack holds replicas and partitions sit on
different racks, partitions are first matched to members on a replica's rack within the same
per-topic quotas (co-partitioned topics together, partition by partition), then the rest are
ranged as usual. Balance per topic is never traded for rack locality.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Final

from krafka.sansio.group.classic.assignors._java import hash_map_order
from krafka.sansio.group.classic.assignors._racks import use_rack_aware_assignment
from krafka.sansio.group.classic.assignors.assignor import (
    Cluster,
    EagerAssignor,
    Subscription,
    member_sort_key,
    partitions_per_topic,
    rack_of,
)
from krafka.structs import TopicPartition

MayAssign = Callable[[str, TopicPartition], bool]


class _TopicState:
    """One topic's partitions still to place and its members' quotas (Java's
    `TopicAssignmentState`)."""

    __slots__ = (
        "consumers",
        "extra",
        "needs_rack_aware",
        "num_assigned",
        "partition_racks",
        "per_consumer",
        "topic",
        "unassigned",
    )

    def __init__(
        self,
        topic: str,
        count: int,
        consumers: dict[str, str | None],
        cluster: Cluster,
    ) -> None:
        self.topic = topic
        self.consumers = consumers
        self.unassigned = [TopicPartition(topic, p) for p in range(count)]
        self.num_assigned = dict.fromkeys(consumers, 0)
        self.per_consumer = count // len(consumers) if consumers else 0
        self.extra = count % len(consumers) if consumers else 0
        consumer_racks = {r for r in consumers.values() if r is not None}
        self.partition_racks: dict[TopicPartition, frozenset[str]] = {}
        if consumer_racks:
            self.partition_racks = {tp: cluster.replica_racks(tp) for tp in self.unassigned}
        all_partition_racks = {r for racks in self.partition_racks.values() for r in racks}
        self.needs_rack_aware = use_rack_aware_assignment(
            consumer_racks, all_partition_racks, self.partition_racks
        )

    def racks_match(self, consumer: str, tp: TopicPartition) -> bool:
        rack = self.consumers[consumer]
        return rack is None or rack in self.partition_racks.get(tp, frozenset())

    def max_assignable(self, consumer: str) -> int:
        quota = self.per_consumer + (1 if self.extra > 0 else 0)
        return max(0, quota - self.num_assigned[consumer])

    def on_assigned(self, consumer: str, partitions: Sequence[TopicPartition]) -> None:
        self.num_assigned[consumer] += len(partitions)
        if self.num_assigned[consumer] > self.per_consumer:
            self.extra -= 1
        taken = set(partitions)
        self.unassigned = [tp for tp in self.unassigned if tp not in taken]


def _place(
    consumer: str,
    partitions: Sequence[TopicPartition],
    state: _TopicState,
    out: dict[str, list[TopicPartition]],
) -> None:
    out[consumer].extend(partitions)
    state.on_assigned(consumer, partitions)


def _assign_ranges(
    state: _TopicState, may_assign: MayAssign, out: dict[str, list[TopicPartition]]
) -> None:
    for consumer in state.consumers:
        if not state.unassigned:
            break
        limit = state.max_assignable(consumer)
        assignable = [tp for tp in state.unassigned if may_assign(consumer, tp)][:limit]
        if assignable:
            _place(consumer, assignable, state, out)


def _assign_co_partitioned(
    consumers: Collection[str],
    count: int,
    states: Sequence[_TopicState],
    out: dict[str, list[TopicPartition]],
) -> None:
    remaining = list(consumers)
    for p in range(count):
        match = next(
            (
                c
                for c in remaining
                if all(
                    s.racks_match(c, TopicPartition(s.topic, p)) and s.max_assignable(c) > 0
                    for s in states
                )
            ),
            None,
        )
        if match is None:
            continue
        for s in states:
            _place(match, [TopicPartition(s.topic, p)], s, out)
        if not any(s.max_assignable(match) > 0 for s in states):
            remaining.remove(match)
            if not remaining:
                break


def _assign_with_rack_matching(
    states: Sequence[_TopicState], out: dict[str, list[TopicPartition]]
) -> None:
    groups: dict[tuple[tuple[str, str | None], ...], dict[int, list[_TopicState]]] = {}
    for state in states:
        by_consumers = groups.setdefault(tuple(state.consumers.items()), {})
        by_consumers.setdefault(len(state.partition_racks), []).append(state)
    for by_count in groups.values():
        for count, co_partitioned in by_count.items():
            if len(co_partitioned) > 1:
                _assign_co_partitioned(co_partitioned[0].consumers, count, co_partitioned, out)
            elif co_partitioned[0].needs_rack_aware:
                only = co_partitioned[0]
                _assign_ranges(only, only.racks_match, out)


def _always(consumer: str, tp: TopicPartition) -> bool:
    return True


def range_assign(
    cluster: Cluster, subscriptions: Mapping[str, Subscription]
) -> dict[str, list[TopicPartition]]:
    """Java's `RangeAssignor.assignPartitions`; each member's partitions sorted."""
    subscribers: dict[str, list[str]] = {}
    for member in hash_map_order(subscriptions):
        for topic in subscriptions[member].topics:
            subscribers.setdefault(topic, []).append(member)
    states = []
    for topic, count in partitions_per_topic(cluster, subscriptions).items():
        members = sorted(
            dict.fromkeys(subscribers.get(topic, ())),
            key=lambda m: member_sort_key(m, subscriptions[m].group_instance_id),
        )
        consumers = {m: rack_of(subscriptions[m]) for m in members}
        states.append(_TopicState(topic, count, consumers, cluster))
    out: dict[str, list[TopicPartition]] = {member: [] for member in subscriptions}
    if any(s.needs_rack_aware for s in states):
        _assign_with_rack_matching(states, out)
    for state in states:
        _assign_ranges(state, _always, out)
    return {member: sorted(partitions) for member, partitions in out.items()}


class RangeAssignor(EagerAssignor):
    """`range`: per-topic ranges in member order; EAGER only."""

    name: Final = "range"

    def assign_partitions(
        self, cluster: Cluster, subscriptions: Mapping[str, Subscription]
    ) -> dict[str, list[TopicPartition]]:
        return range_assign(cluster, subscriptions)


__all__ = ["RangeAssignor", "range_assign"]
