"""Commits of a share consumer's acknowledgements: which partitions each `commit` waits for, and
the per-partition results it completes with (Java's `commitSync` map)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from krafka.errors import KrafkaError
from krafka.sansio.actions import Completed
from krafka.structs import TopicPartition


@dataclass(frozen=True, slots=True)
class AcknowledgementsCommitted:
    """Notice for the acknowledgement commit callback: the broker took (error None) or refused
    the settlements of `offsets` (Java's `onComplete(offsets, exception)`)."""

    offsets: Mapping[TopicPartition, frozenset[int]]
    error: KrafkaError | None


@dataclass(slots=True, eq=False)
class _Commit:
    op: int
    waiting: set[TopicPartition]
    results: dict[TopicPartition, KrafkaError | None] = field(default_factory=dict)


class Commits:
    """Commits under way."""

    def __init__(self) -> None:
        self._commits: list[_Commit] = []

    def start(self, op: int, waiting: set[TopicPartition], events: list[Any]) -> None:
        if waiting:
            self._commits.append(_Commit(op, set(waiting)))
        else:
            events.append(Completed(op, {}))

    def wants(self, partitions: Iterable[TopicPartition]) -> bool:
        """A commit waits for some of `partitions` (their settlements go out at once)."""
        wanted = set(partitions)
        return any(commit.waiting & wanted for commit in self._commits)

    def result(
        self, tp: TopicPartition, error: KrafkaError | None, *, pending: bool, events: list[Any]
    ) -> None:
        """Settlements of `tp` were answered; `pending`: more of them are still to be sent."""
        for commit in list(self._commits):
            if tp not in commit.waiting:
                continue
            if commit.results.get(tp) is None:
                commit.results[tp] = error
            if not pending:
                commit.waiting.discard(tp)
            if not commit.waiting:
                self._commits.remove(commit)
                events.append(Completed(commit.op, dict(commit.results)))

    def abandon(
        self, partitions: Iterable[TopicPartition], error: KrafkaError, events: list[Any]
    ) -> None:
        """`partitions` can no longer be settled (the consumer closed)."""
        for tp in partitions:
            self.result(tp, error, pending=False, events=events)


__all__ = ["AcknowledgementsCommitted", "Commits"]
