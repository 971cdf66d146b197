"""The sticky assignment for members with different subscriptions (Java's
`GeneralAssignmentBuilder`).

1. Keep every valid owned partition (with racks: only those on the member's rack).
2. Give each unassigned partition to the least-loaded subscriber (with racks: first one on a
   rack holding a replica, then anyone).
3. Move partitions from members with two or more partitions more than another subscriber of the
   topic until balanced, preferring to hand a partition back to its owner of an older
   generation; keep the result only if it is better balanced than before (unless this is the
   first assignment).
Members are kept ordered by (partition count, member id), as Java's `TreeSet` does.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from krafka.sansio.group.classic.assignors._java import java_key
from krafka.sansio.group.classic.assignors._movements import PartitionMovements
from krafka.sansio.group.classic.assignors._sticky_common import (
    MemberDataReader,
    RackInfo,
    java_member_order,
)
from krafka.sansio.group.classic.assignors.assignor import NO_GENERATION, Subscription
from krafka.structs import TopicPartition


@dataclass(frozen=True, slots=True)
class _PreviousOwner:
    member: str
    generation: int


class _ByLoad:
    """Members ordered by (partition count, member id); remove before a count changes."""

    __slots__ = ("_assignment", "_keys")

    def __init__(self, assignment: Mapping[str, list[TopicPartition]]) -> None:
        self._assignment = assignment
        self._keys: list[tuple[int, bytes, str]] = []

    def _key(self, member: str) -> tuple[int, bytes, str]:
        return len(self._assignment[member]), java_key(member), member

    def add(self, member: str) -> None:
        key = self._key(member)
        index = bisect.bisect_left(self._keys, key)
        if index == len(self._keys) or self._keys[index] != key:
            self._keys.insert(index, key)

    def remove(self, member: str) -> None:
        key = self._key(member)
        index = bisect.bisect_left(self._keys, key)
        if index < len(self._keys) and self._keys[index] == key:
            del self._keys[index]

    def first(self) -> str:
        return self._keys[0][2]

    def last(self) -> str:
        return self._keys[-1][2]

    def __iter__(self) -> Iterator[str]:
        return (key[2] for key in self._keys)


class GeneralBuilder:
    def __init__(
        self,
        partitions_per_topic: Mapping[str, int],
        racks: RackInfo,
        owned: dict[str, list[TopicPartition]],
        subscriptions: Mapping[str, Subscription],
        member_data: MemberDataReader,
        max_generation: int,
    ) -> None:
        self.counts = partitions_per_topic
        self.total = sum(partitions_per_topic.values())
        self.racks = racks
        self.subscriptions = subscriptions
        self.member_data = member_data
        self.max_generation = max_generation
        self.topic_members: dict[str, list[str]] = {t: [] for t in partitions_per_topic}
        self.member_topics: dict[str, list[str]] = {}
        self.member_topic_set: dict[str, frozenset[str]] = {}
        for member in java_member_order(subscriptions):
            topics = [t for t in subscriptions[member].topics if t in partitions_per_topic]
            self.member_topics[member] = topics
            self.member_topic_set[member] = frozenset(topics)
            for topic in topics:
                self.topic_members[topic].append(member)
            owned.setdefault(member, [])
        self.assignment = owned
        self.owner: dict[TopicPartition, str] = {
            tp: member for member, tps in owned.items() for tp in tps
        }
        ordered_topics = sorted(
            partitions_per_topic, key=lambda t: (len(self.topic_members[t]), java_key(t))
        )
        self.sorted_partitions = [
            TopicPartition(t, p) for t in ordered_topics for p in range(partitions_per_topic[t])
        ]
        self.by_load = _ByLoad(self.assignment)
        self.movements = PartitionMovements()
        self.revocation_required = False

    def build(self) -> dict[str, list[TopicPartition]]:
        previous = self._previous_owners()
        assigned = self._assign_owned()
        unassigned = [tp for tp in self.sorted_partitions if tp not in assigned]
        for member in self.assignment:
            self.by_load.add(member)
        self._balance(previous, unassigned)
        return self.assignment

    def _previous_owners(self) -> dict[TopicPartition, _PreviousOwner]:
        """Claims of members behind the newest generation, the newest claim per partition."""
        previous: dict[TopicPartition, _PreviousOwner] = {}
        for member in java_member_order(self.subscriptions):
            data = self.member_data(self.subscriptions[member])
            if data.generation is not None and data.generation < self.max_generation:
                generation = data.generation
            elif data.generation is None and self.max_generation > NO_GENERATION:
                generation = NO_GENERATION
            else:
                continue
            for tp in data.partitions:
                known = previous.get(tp)
                if known is None or generation > known.generation:
                    previous[tp] = _PreviousOwner(member, generation)
        return previous

    def _assign_owned(self) -> set[TopicPartition]:
        assigned: set[TopicPartition] = set()
        for member, partitions in self.assignment.items():
            topics = set(self.subscriptions[member].topics)
            kept = []
            for tp in partitions:
                if tp.topic not in topics or self.racks.mismatch(member, tp):
                    self.revocation_required = True
                else:
                    kept.append(tp)
                    assigned.add(tp)
            partitions[:] = kept
        return assigned

    def _max_size(self, member: str) -> int:
        topics = self.member_topics[member]
        if len(topics) == len(self.counts):
            return self.total
        return sum(self.counts[t] for t in topics)

    def _is_balanced(self) -> bool:
        size = {m: len(ps) for m, ps in self.assignment.items()}
        if size[self.by_load.first()] >= size[self.by_load.last()] - 1:
            return True
        holder = {tp: m for m, ps in self.assignment.items() for tp in ps}
        for member in self.by_load:
            count = size[member]
            if count == self._max_size(member):
                continue
            mine = set(self.assignment[member])
            for topic in self.member_topics[member]:
                for p in range(self.counts[topic]):
                    tp = TopicPartition(topic, p)
                    other = holder.get(tp)
                    if tp not in mine and other is not None and count + 1 < size[other]:
                        return False
        return True

    def _balance_score(self, assignment: Mapping[str, list[TopicPartition]]) -> int:
        sizes = [len(ps) for ps in assignment.values()]
        return sum(abs(a - b) for i, a in enumerate(sizes) for b in sizes[i + 1 :])

    def _maybe_assign_partition(self, tp: TopicPartition, use_racks: bool) -> bool:
        for member in self.by_load:
            if tp.topic in self.member_topic_set[member] and not (
                use_racks and self.racks.mismatch(member, tp)
            ):
                self.by_load.remove(member)
                self.assignment[member].append(tp)
                self.owner[tp] = member
                self.by_load.add(member)
                return True
        return False

    def _maybe_assign(
        self, partitions: list[TopicPartition], use_racks: bool
    ) -> list[TopicPartition]:
        left = []
        for tp in partitions:
            if not self.topic_members[tp.topic] or not self._maybe_assign_partition(tp, use_racks):
                left.append(tp)
        return left

    def _can_topic_move(self, topic: str) -> bool:
        return len(self.topic_members[topic]) >= 2

    def _can_member_move(self, member: str) -> bool:
        partitions = self.assignment[member]
        if len(partitions) < self._max_size(member):
            return True
        return any(self._can_topic_move(tp.topic) for tp in partitions)

    def _balance(
        self, previous: Mapping[TopicPartition, _PreviousOwner], unassigned: list[TopicPartition]
    ) -> None:
        initializing = not self.assignment[self.by_load.last()]
        to_assign = unassigned
        if self.racks.consumer_racks:
            to_assign = self._maybe_assign(list(unassigned), use_racks=True)
        self._maybe_assign(to_assign, use_racks=False)
        fixed_topics = {t for t in self.topic_members if not self._can_topic_move(t)}
        self.sorted_partitions = [
            tp for tp in self.sorted_partitions if tp.topic not in fixed_topics
        ]
        unassigned = [tp for tp in unassigned if tp.topic not in fixed_topics]
        fixed: dict[str, list[TopicPartition]] = {}
        for member in self.member_topics:
            if not self._can_member_move(member):
                self.by_load.remove(member)
                fixed[member] = self.assignment.pop(member)
        before = {m: list(ps) for m, ps in self.assignment.items()}
        owner_before = dict(self.owner)
        if not self.revocation_required:
            self._reassign(unassigned, previous)
        moved = self._reassign(self.sorted_partitions, previous)
        if (
            not initializing
            and moved
            and self._balance_score(self.assignment) >= self._balance_score(before)
        ):
            self.assignment.clear()
            self.assignment.update(before)
            self.owner = owner_before
        for member, partitions in fixed.items():
            self.assignment[member] = partitions
            self.by_load.add(member)

    def _better_member_exists(self, tp: TopicPartition, member: str) -> bool:
        """Whether a subscriber of `tp`'s topic has two or more partitions fewer than `member`.

        Java first looks among subscribers on `tp`'s racks, then among all; both searches
        lead to the same move (to the least-loaded subscriber), so one search suffices."""
        load = len(self.assignment[member])
        return any(
            other in self.assignment and load > len(self.assignment[other]) + 1
            for other in self.topic_members[tp.topic]
        )

    def _reassign(
        self, partitions: list[TopicPartition], previous: Mapping[TopicPartition, _PreviousOwner]
    ) -> bool:
        performed = False
        modified = True
        while modified:
            modified = False
            for tp in partitions:
                if self._is_balanced():
                    break
                member = self.owner.get(tp)
                if member is None or member not in self.assignment:
                    continue
                earlier = previous.get(tp)
                if (
                    earlier is not None
                    and earlier.member in self.assignment
                    and tp.topic in self.member_topic_set[earlier.member]
                    and len(self.assignment[member]) > len(self.assignment[earlier.member]) + 1
                ):
                    self._move(tp, earlier.member)
                    performed = modified = True
                    continue
                if self._better_member_exists(tp, member):
                    self._move(tp, self._least_loaded_subscriber(tp.topic))
                    performed = modified = True
        return performed

    def _least_loaded_subscriber(self, topic: str) -> str:
        return next(m for m in self.by_load if topic in self.member_topic_set[m])

    def _move(self, tp: TopicPartition, new: str) -> None:
        to_move = self.movements.partition_to_move(tp, self.owner[tp], new)
        old = self.owner[to_move]
        self.by_load.remove(old)
        self.by_load.remove(new)
        self.movements.move(to_move, old, new)
        self.assignment[old].remove(to_move)
        self.assignment[new].append(to_move)
        self.owner[to_move] = new
        self.by_load.add(new)
        self.by_load.add(old)


__all__ = ["GeneralBuilder"]
