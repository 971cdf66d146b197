"""What a group member subscribes to, and the metadata its decisions rest on.

A subscription is a set of topics or a pattern; a pattern is matched (in full, internal topics
excluded) against every topic the latest metadata names. The member remembers the topic set it
joined with: when the subscription no longer equals it, the member must rejoin. A leader also
remembers the metadata (partition counts and racks of every topic any member subscribes to) it
assigned with: when that changes, it must rejoin so the group is reassigned (Java's
`assignmentSnapshot` vs `metadataSnapshot`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Final

from krafka.sansio.group.classic.assignors import Cluster
from krafka.structs import TopicPartition

#: Never matched by a pattern (Java's exclude.internal.topics).
INTERNAL_TOPICS: Final = frozenset(
    {"__consumer_offsets", "__transaction_state", "__share_group_state"}
)

_Snapshot = tuple[tuple[str, int, tuple[tuple[int, tuple[str, ...]], ...]], ...]


class GroupSubscription:
    def __init__(self) -> None:
        self.topics: frozenset[str] = frozenset()
        self.pattern: re.Pattern[str] | None = None
        self.joined: frozenset[str] | None = None
        self.group_topics: frozenset[str] = frozenset()
        self.partitions: dict[str, int] = {}
        self.racks: dict[TopicPartition, frozenset[str]] = {}
        self.metadata_version = 0
        self._pattern_version = 0
        self._matched: frozenset[str] = frozenset()
        self._assigned_with: _Snapshot | None = None

    # -- the application's choice ---------------------------------------------------------------

    @property
    def active(self) -> bool:
        return bool(self.topics) or self.pattern is not None

    def subscribe(self, topics: Iterable[str] | re.Pattern[str]) -> None:
        if isinstance(topics, re.Pattern):
            self.topics, self.pattern = frozenset(), topics
            self._pattern_version = self.metadata_version
            self._match()
        else:
            names = frozenset(topics)
            if any(not isinstance(t, str) or not t for t in names):
                raise ValueError(f"topic names must be non-empty strings: {sorted(names)!r}")
            self.topics, self.pattern = names, None

    def unsubscribe(self) -> None:
        self.topics, self.pattern = frozenset(), None
        self._matched = frozenset()
        self.joined = None
        self.forget_assignment()

    def subscribed(self) -> frozenset[str]:
        """The topics subscribed now (a pattern's current matches)."""
        return self._matched if self.pattern is not None else self.topics

    def matches(self, topic: str) -> bool:
        """May this member be assigned partitions of `topic`?"""
        if self.pattern is not None:
            return topic not in INTERNAL_TOPICS and self.pattern.fullmatch(topic) is not None
        return topic in self.topics

    @property
    def ready_to_join(self) -> bool:
        """A pattern is joined only once metadata newer than the subscription was matched."""
        return self.pattern is None or self.metadata_version > self._pattern_version

    # -- joins ----------------------------------------------------------------------------------

    def joining(self) -> frozenset[str]:
        """Record and return the topic set a JoinGroup announces."""
        self.joined = self.subscribed()
        return self.joined

    def changed_since_join(self) -> bool:
        return self.joined is not None and self.joined != self.subscribed()

    def assigned_topics(self, topics: Iterable[str]) -> None:
        """A leader may assign topics a pattern matches but our metadata did not show yet."""
        extra = frozenset(topics) - (self.joined or frozenset())
        if extra and self.pattern is not None and self.joined is not None:
            self.joined |= extra
            self._matched |= extra

    # -- metadata -------------------------------------------------------------------------------

    def update(
        self, partitions: Mapping[str, int], racks: Mapping[TopicPartition, frozenset[str]]
    ) -> None:
        self.partitions = dict(partitions)
        self.racks = dict(racks)
        self.metadata_version += 1
        self._match()

    def missing(self, topics: Iterable[str]) -> frozenset[str]:
        """Of `topics`, those the latest metadata does not name."""
        return frozenset(t for t in topics if t not in self.partitions)

    def cluster(self, topics: Iterable[str]) -> Cluster:
        wanted = {t: self.partitions[t] for t in topics if t in self.partitions}
        racks = {tp: r for tp, r in self.racks.items() if tp.topic in wanted}
        return Cluster(wanted, racks)

    def assigned_with_current(self, group_topics: Iterable[str]) -> None:
        """The leader assigned with the metadata it has now."""
        self.group_topics = frozenset(group_topics)
        self._assigned_with = self._snapshot(self.group_topics)

    def forget_assignment(self) -> None:
        """Not the leader (any more): metadata changes are the leader's to act on."""
        self._assigned_with = None
        self.group_topics = frozenset()

    def metadata_changed_since_assignment(self) -> bool:
        return self._assigned_with is not None and self._assigned_with != self._snapshot(
            self.group_topics
        )

    def _snapshot(self, topics: Iterable[str]) -> _Snapshot:
        out = []
        for topic in sorted(topics):
            count = self.partitions.get(topic, -1)
            racks = tuple(
                (p, tuple(sorted(self.racks.get(TopicPartition(topic, p), ()))))
                for p in range(max(count, 0))
            )
            out.append((topic, count, racks))
        return tuple(out)

    def _match(self) -> None:
        if self.pattern is not None:
            self._matched = frozenset(t for t in self.partitions if self.matches(t))


__all__ = ["INTERNAL_TOPICS", "GroupSubscription"]
