"""Assignments as KIP-848 and KIP-932 coordinators send them (topic ids, not names), and the
resolution of those ids into names.

`LocalAssignment` is Java's: the partitions by topic id plus a *local epoch* that moves each time
the target changes, so a heartbeat re-sends (acknowledges) an assignment even when a later one
happens to hold the same partitions. `TopicNames` resolves ids through the driver's metadata
(Metadata v10+ gives them) and a local cache of the names of topics assigned before, which
survives a metadata cache that forgot a topic just before its revocation.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from krafka.structs import TopicPartition

IdPartition = tuple[uuid.UUID, int]
IdPartitions = frozenset[IdPartition]

NONE_EPOCH: Final = -1


@dataclass(frozen=True, slots=True)
class LocalAssignment:
    local_epoch: int
    partitions: IdPartitions

    @property
    def is_none(self) -> bool:
        return self.local_epoch == NONE_EPOCH

    def updated_with(self, partitions: IdPartitions) -> LocalAssignment | None:
        """The next target, or None when `partitions` is what this target already holds."""
        if not self.is_none and partitions == self.partitions:
            return None
        return LocalAssignment(self.local_epoch + 1, partitions)

    def by_topic(self) -> dict[uuid.UUID, list[int]]:
        return by_topic(self.partitions)


def by_topic(partitions: IdPartitions) -> dict[uuid.UUID, list[int]]:
    """Partitions grouped by topic id, both sorted (the order heartbeats carry them in)."""
    out: dict[uuid.UUID, list[int]] = {}
    for topic_id, partition in sorted(partitions):
        out.setdefault(topic_id, []).append(partition)
    return out


NO_ASSIGNMENT: Final = LocalAssignment(NONE_EPOCH, frozenset())


def from_response(topics: Iterable[Any]) -> IdPartitions:
    """A response's `[{topic_id, partitions}]`, negative partition numbers dropped (a buggy or
    hostile broker's; duplicates collapse in the set)."""
    out: set[IdPartition] = set()
    for topic in topics:
        topic_id = topic.topic_id
        for partition in topic.partitions:
            if partition >= 0:
                out.add((topic_id, int(partition)))
    return frozenset(out)


@dataclass(frozen=True, slots=True)
class Resolved:
    """The part of a target whose topic names are known, and the topic ids still unknown."""

    partitions: IdPartitions
    names: Mapping[IdPartition, TopicPartition]
    unresolved: frozenset[uuid.UUID]

    @property
    def topic_partitions(self) -> frozenset[TopicPartition]:
        return frozenset(self.names.values())

    def topic_ids(self) -> dict[str, uuid.UUID]:
        return {tp.topic: topic_id for (topic_id, _), tp in self.names.items()}


class TopicNames:
    """Topic id -> name, from the latest metadata and from the topics assigned before."""

    def __init__(self) -> None:
        self._metadata: dict[uuid.UUID, str] = {}
        self._assigned: dict[uuid.UUID, str] = {}

    def update(self, ids: Mapping[str, uuid.UUID]) -> None:
        """The driver's current metadata: topic name -> topic id (Metadata v10+)."""
        self._metadata = {topic_id: name for name, topic_id in ids.items()}

    def name(self, topic_id: uuid.UUID) -> str | None:
        name = self._metadata.get(topic_id)
        if name is not None:
            self._assigned[topic_id] = name
            return name
        return self._assigned.get(topic_id)

    def resolve(self, partitions: IdPartitions) -> Resolved:
        known: dict[IdPartition, TopicPartition] = {}
        unresolved: set[uuid.UUID] = set()
        for topic_id, partition in partitions:
            name = self.name(topic_id)
            if name is None:
                unresolved.add(topic_id)
            else:
                known[(topic_id, partition)] = TopicPartition(name, partition)
        return Resolved(frozenset(known), known, frozenset(unresolved))

    def keep_only(self, topic_ids: Iterable[uuid.UUID]) -> None:
        """Forget cached names of topics no longer assigned."""
        keep = set(topic_ids)
        self._assigned = {i: n for i, n in self._assigned.items() if i in keep}

    def clear(self) -> None:
        self._assigned.clear()


__all__ = [
    "NONE_EPOCH",
    "NO_ASSIGNMENT",
    "IdPartition",
    "IdPartitions",
    "LocalAssignment",
    "Resolved",
    "TopicNames",
    "by_topic",
    "from_response",
]
