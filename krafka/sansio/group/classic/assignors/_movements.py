"""Partition moves made while balancing (Java's `AbstractStickyAssignor.PartitionMovements`).

When the general sticky builder wants to move a partition from A to B but an earlier step moved
some partition of the same topic from B to A, it moves that one back instead, so no partition
makes a pointless round trip. Which earlier partition is taken follows Java's `HashSet` order.
"""

from __future__ import annotations

from krafka.sansio.group.classic.assignors._java import JavaHashSet, topic_partition_hash
from krafka.structs import TopicPartition

Pair = tuple[str, str]


class PartitionMovements:
    __slots__ = ("_by_topic", "_moves")

    def __init__(self) -> None:
        self._by_topic: dict[str, dict[Pair, JavaHashSet[TopicPartition]]] = {}
        self._moves: dict[TopicPartition, Pair] = {}

    def _remove_record(self, tp: TopicPartition) -> Pair:
        pair = self._moves.pop(tp)
        for_topic = self._by_topic[tp.topic]
        moved = for_topic[pair]
        moved.discard(tp)
        if not moved:
            del for_topic[pair]
        if not for_topic:
            del self._by_topic[tp.topic]
        return pair

    def _add_record(self, tp: TopicPartition, pair: Pair) -> None:
        self._moves[tp] = pair
        for_topic = self._by_topic.setdefault(tp.topic, {})
        moved = for_topic.get(pair)
        if moved is None:
            moved = for_topic[pair] = JavaHashSet(topic_partition_hash)
        moved.add(tp)

    def move(self, tp: TopicPartition, old: str, new: str) -> None:
        if tp in self._moves:
            source, _ = self._remove_record(tp)
            if source != new:
                self._add_record(tp, (source, new))
        else:
            self._add_record(tp, (old, new))

    def partition_to_move(self, tp: TopicPartition, old: str, new: str) -> TopicPartition:
        """The partition to move from `old` to `new` in place of `tp` (often `tp` itself)."""
        for_topic = self._by_topic.get(tp.topic)
        if for_topic is None:
            return tp
        if tp in self._moves:
            old = self._moves[tp][0]
        reverse = for_topic.get((new, old))
        return tp if reverse is None else reverse.first()


__all__ = ["PartitionMovements"]
