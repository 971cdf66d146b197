"""What the consumer engine tells its driver, beside requests and operation outcomes.

The rebalance-listener events carry the step the group waits on: the facade runs the
application's listener *in the application's task* (inside `poll()`, `recv()`, `async for`,
`close()`, `unsubscribe()`), then answers `engine.rebalance_done(event, now, error)`; the
rebalance goes on only then, as Java's callbacks complete before it does.
"""

from __future__ import annotations

from dataclasses import dataclass

from krafka.errors import KrafkaError
from krafka.structs import OffsetAndMetadata, TopicPartition

Partitions = frozenset[TopicPartition]


@dataclass(frozen=True, slots=True)
class PollReady:
    """A waiting poll has something to return or raise now (records, an error, a resolved
    position, a rebalance step to run)."""


@dataclass(frozen=True, slots=True)
class PartitionsRevoked:
    """Run `on_partitions_revoked(partitions)`; their records are still committable until the
    answer, after which they are dropped."""

    step: int
    partitions: Partitions


@dataclass(frozen=True, slots=True)
class PartitionsLost:
    """Run `on_partitions_lost(partitions)`: they may belong to another member already."""

    step: int
    partitions: Partitions


@dataclass(frozen=True, slots=True)
class PartitionsAssigned:
    """The assignment is now `assignment`; run `on_partitions_assigned(partitions)` (the new
    ones; once per rebalance, even when none are new). Positions are resolved after the
    answer, so the listener may seek."""

    step: int
    partitions: Partitions
    assignment: Partitions


RebalanceEvent = PartitionsRevoked | PartitionsLost | PartitionsAssigned


@dataclass(frozen=True, slots=True)
class OffsetsCommitted:
    """An automatic commit succeeded (for the interceptors' `on_commit`, and its span:
    `sent` is the `now` it was sent at)."""

    offsets: dict[TopicPartition, OffsetAndMetadata]
    sent: float


@dataclass(frozen=True, slots=True)
class AutoCommitFailed:
    """An automatic commit failed (logged; for the commit's span, sent at `sent`)."""

    offsets: dict[TopicPartition, OffsetAndMetadata]
    error: KrafkaError
    sent: float


__all__ = [
    "AutoCommitFailed",
    "OffsetsCommitted",
    "PartitionsAssigned",
    "PartitionsLost",
    "PartitionsRevoked",
    "PollReady",
    "RebalanceEvent",
]
