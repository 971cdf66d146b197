"""Which partitions a consumer reads and where it stands in each (Java's SubscriptionState).

One object is shared by the fetcher and the group membership: membership changes the
assignment only through `assign_from_subscribed`; the application through `assign_from_user`,
`seek`, `pause` and `resume`. Every position change bumps the partition's `epoch`, so data
fetched for an older position is recognised and dropped.
"""

from __future__ import annotations

import itertools
import logging
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import Enum

from krafka.errors import IllegalStateError
from krafka.sansio.backoff import Backoff, BackoffPolicy
from krafka.sansio.transitions import transition
from krafka.structs import OffsetAndMetadata, TopicPartition

_log = logging.getLogger("krafka.consumer")


class ResetStrategy(Enum):
    """`auto_offset_reset`: where to start when there is no valid position."""

    EARLIEST = "earliest"
    LATEST = "latest"
    NONE = "none"

    @classmethod
    def parse(cls, value: ResetStrategy | str) -> ResetStrategy:
        if isinstance(value, ResetStrategy):
            return value
        spelled = value.strip().lower()
        aliases = {"smallest": "earliest", "beginning": "earliest", "largest": "latest"}
        try:
            return cls(aliases.get(spelled, spelled))
        except ValueError:
            raise ValueError(
                f"auto_offset_reset must be earliest, latest or none, not {value!r}"
            ) from None


class SubscriptionType(Enum):
    NONE = "none"
    AUTO_TOPICS = "topics"
    AUTO_PATTERN = "pattern"
    USER_ASSIGNED = "assigned"


class FetchState(Enum):
    """A partition needs its committed offset (INITIALIZING), a reset (AWAIT_RESET), or it has
    a position to fetch from (FETCHING)."""

    INITIALIZING = "initializing"
    AWAIT_RESET = "await_reset"
    FETCHING = "fetching"


#: Java's reset backoff for a partition whose offset lookup failed: 100 ms doubling to 30 s.
RESET_BACKOFF = BackoffPolicy(initial=0.1, maximum=30.0, jitter=0.2, max_retries=None)


@dataclass(slots=True)
class PartitionState:
    """Everything known about one assigned partition."""

    state: FetchState = FetchState.INITIALIZING
    position: int = -1
    leader_epoch: int | None = None
    epoch: int = 0
    paused: bool = False
    pending_revocation: bool = False
    reset: ResetStrategy | None = None
    reset_backoff: Backoff = field(default_factory=lambda: Backoff(RESET_BACKOFF))
    high_watermark: int | None = None
    last_stable_offset: int | None = None
    log_start_offset: int | None = None
    preferred_replica: int | None = None
    preferred_replica_expires: float = 0.0
    #: The application has seen this position (a poll, `position()`, its own seek): only such
    #: positions are committed, as Java commits positions made valid on the polling thread,
    #: never one resolved in the background that the application did not poll yet.
    polled: bool = False


class SubscriptionState:
    """Assigned partitions, their positions and flags; the subscription they came from."""

    def __init__(
        self,
        default_reset: ResetStrategy | str = ResetStrategy.LATEST,
        initial_offsets: Mapping[TopicPartition, int] | None = None,
    ) -> None:
        self.default_reset = ResetStrategy.parse(default_reset)
        self.initial_offsets = dict(initial_offsets or {})
        self.type = SubscriptionType.NONE
        self._topics: frozenset[str] = frozenset()
        self._pattern: re.Pattern[str] | None = None
        self._assignment: dict[TopicPartition, PartitionState] = {}
        #: Epochs are unique across every partition state this subscription ever made: a
        #: partition unassigned and assigned again never meets data (or a fetch offset) of
        #: its earlier assignment under the same epoch.
        self._epochs = itertools.count(1)

    # -- subscription -------------------------------------------------------------------------

    def _set_type(self, kind: SubscriptionType) -> None:
        if self.type not in (SubscriptionType.NONE, kind):
            raise IllegalStateError(
                "subscribe() and assign() are mutually exclusive: unsubscribe() first"
            )
        transition(_log, "consumer subscription", self.type, kind)
        self.type = kind

    def subscribe(self, topics: Iterable[str]) -> bool:
        """Subscribe to `topics` (replacing the subscription); True if it changed."""
        wanted = frozenset(topics)
        if not wanted:
            self.unsubscribe()
            return True
        self._set_type(SubscriptionType.AUTO_TOPICS)
        changed = wanted != self._topics or self._pattern is not None
        self._topics, self._pattern = wanted, None
        return changed

    def subscribe_pattern(self, pattern: re.Pattern[str]) -> bool:
        self._set_type(SubscriptionType.AUTO_PATTERN)
        changed = self._pattern is None or self._pattern.pattern != pattern.pattern
        self._pattern = pattern
        return changed

    def match_pattern(self, topics: Iterable[str]) -> bool:
        """With a pattern subscription, subscribe to the matching `topics` (from metadata)."""
        if self._pattern is None:
            return False
        matched = frozenset(t for t in topics if self._pattern.fullmatch(t))
        changed = matched != self._topics
        self._topics = matched
        return changed

    def subscription(self) -> frozenset[str]:
        return self._topics

    @property
    def pattern(self) -> re.Pattern[str] | None:
        return self._pattern

    def unsubscribe(self) -> None:
        transition(_log, "consumer subscription", self.type, SubscriptionType.NONE)
        self.type = SubscriptionType.NONE
        self._topics, self._pattern = frozenset(), None
        self._assignment.clear()

    # -- assignment ---------------------------------------------------------------------------

    def assign_from_user(self, partitions: Iterable[TopicPartition]) -> None:
        """Manual assignment: keeps the state of partitions kept, drops the others."""
        wanted = list(dict.fromkeys(partitions))
        if not wanted:
            self.unsubscribe()
            return
        self._set_type(SubscriptionType.USER_ASSIGNED)
        self._topics = frozenset(tp.topic for tp in wanted)
        self._replace(wanted)

    def assign_from_subscribed(self, partitions: Iterable[TopicPartition]) -> None:
        """The group's assignment; partitions retained keep position and pause flag."""
        if self.type not in (SubscriptionType.AUTO_TOPICS, SubscriptionType.AUTO_PATTERN):
            raise IllegalStateError("assign_from_subscribed without a subscription")
        self._replace(list(dict.fromkeys(partitions)))

    def _replace(self, partitions: list[TopicPartition]) -> None:
        old = self._assignment
        self._assignment = {
            tp: old.get(tp) or PartitionState(epoch=next(self._epochs)) for tp in partitions
        }

    def assigned_partitions(self) -> set[TopicPartition]:
        return set(self._assignment)

    def is_assigned(self, tp: TopicPartition) -> bool:
        return tp in self._assignment

    def state_of(self, tp: TopicPartition) -> PartitionState:
        state = self._assignment.get(tp)
        if state is None:
            raise IllegalStateError(f"partition {tp.topic}-{tp.partition} is not assigned")
        return state

    def states(self) -> Mapping[TopicPartition, PartitionState]:
        return self._assignment

    # -- positions ----------------------------------------------------------------------------

    def seek(self, tp: TopicPartition, offset: int, leader_epoch: int | None = None) -> None:
        """The application's seek: the position counts as consumed (is committed) at once."""
        self._set_position(tp, offset, leader_epoch)
        self.state_of(tp).polled = True

    def resolve(self, tp: TopicPartition, offset: int, leader_epoch: int | None = None) -> None:
        """A position found for the application (its committed offset, the reset policy):
        committed only once the application polled it."""
        self._set_position(tp, offset, leader_epoch)

    def _set_position(self, tp: TopicPartition, offset: int, leader_epoch: int | None) -> None:
        if offset < 0:
            raise ValueError(f"offset must be >= 0, got {offset}")
        state = self.state_of(tp)
        state.position, state.leader_epoch = offset, leader_epoch
        if _log.isEnabledFor(logging.DEBUG):
            transition(
                _log, f"partition {tp}", state.state, FetchState.FETCHING, f"offset {offset}"
            )
        state.state, state.reset = FetchState.FETCHING, None
        state.reset_backoff.succeeded()
        state.epoch = next(self._epochs)
        state.polled = False

    def mark_polled(self, partitions: Iterable[TopicPartition] | None = None) -> None:
        """The application polled (or asked for the position of `partitions`): every valid
        position there counts as consumed from now on."""
        states = self._assignment
        chosen = states.values() if partitions is None else (states[tp] for tp in partitions)
        for state in chosen:
            if state.state is FetchState.FETCHING:
                state.polled = True

    def advance(self, tp: TopicPartition, offset: int, leader_epoch: int | None) -> None:
        """The application consumed up to `offset` (exclusive): no epoch bump."""
        state = self._assignment[tp]
        state.position = offset
        if leader_epoch is not None:
            state.leader_epoch = leader_epoch

    def position(self, tp: TopicPartition) -> int | None:
        state = self.state_of(tp)
        return state.position if state.state is FetchState.FETCHING else None

    def request_offset_reset(
        self, tp: TopicPartition, strategy: ResetStrategy | None = None
    ) -> None:
        state = self.state_of(tp)
        if _log.isEnabledFor(logging.DEBUG):
            transition(_log, f"partition {tp}", state.state, FetchState.AWAIT_RESET)
        state.state, state.reset = FetchState.AWAIT_RESET, strategy or self.default_reset
        state.epoch = next(self._epochs)
        state.polled = False

    def initializing_partitions(self) -> list[TopicPartition]:
        """Partitions that need their committed offset (or an initial / reset offset)."""
        return [tp for tp, s in self._assignment.items() if s.state is FetchState.INITIALIZING]

    def resolve_initializing(self, committed: Mapping[TopicPartition, int | None]) -> None:
        """Apply committed offsets; without one, `initial_offsets`, else the reset policy."""
        for tp, offset in committed.items():
            state = self._assignment.get(tp)
            if state is None or state.state is not FetchState.INITIALIZING:
                continue
            if offset is None:
                offset = self.initial_offsets.get(tp)
            if offset is not None and offset >= 0:
                self.resolve(tp, offset)
            else:
                self.request_offset_reset(tp)

    def resets_due(self, now: float) -> dict[TopicPartition, ResetStrategy]:
        return {
            tp: s.reset
            for tp, s in self._assignment.items()
            if s.state is FetchState.AWAIT_RESET
            and s.reset is not None
            and s.reset_backoff.retry_at <= now
        }

    def reset_failed(self, tp: TopicPartition, now: float) -> None:
        state = self._assignment.get(tp)
        if state is not None:
            state.reset_backoff.failed(now)

    def next_reset_at(self) -> float | None:
        times = [
            s.reset_backoff.retry_at
            for s in self._assignment.values()
            if s.state is FetchState.AWAIT_RESET
        ]
        return min(times) if times else None

    def all_consumed(self) -> dict[TopicPartition, OffsetAndMetadata]:
        """Positions to commit: every assigned partition with a valid position the application
        has polled (Java's allConsumed)."""
        return {
            tp: OffsetAndMetadata(s.position, "", s.leader_epoch)
            for tp, s in self._assignment.items()
            if s.state is FetchState.FETCHING and s.polled
        }

    # -- flags --------------------------------------------------------------------------------

    def pause(self, tp: TopicPartition) -> None:
        self.state_of(tp).paused = True

    def resume(self, tp: TopicPartition) -> None:
        self.state_of(tp).paused = False

    def is_paused(self, tp: TopicPartition) -> bool:
        return self.state_of(tp).paused

    def paused_partitions(self) -> set[TopicPartition]:
        return {tp for tp, s in self._assignment.items() if s.paused}

    def mark_pending_revocation(self, partitions: Iterable[TopicPartition]) -> None:
        for tp in partitions:
            state = self._assignment.get(tp)
            if state is not None:
                state.pending_revocation = True

    def is_fetchable(self, tp: TopicPartition) -> bool:
        state = self._assignment.get(tp)
        return (
            state is not None
            and state.state is FetchState.FETCHING
            and not state.paused
            and not state.pending_revocation
        )

    def fetchable_partitions(self) -> list[TopicPartition]:
        return [tp for tp in self._assignment if self.is_fetchable(tp)]

    # -- cached log offsets -------------------------------------------------------------------

    def update_watermarks(
        self,
        tp: TopicPartition,
        high_watermark: int,
        last_stable_offset: int,
        log_start_offset: int,
    ) -> None:
        state = self._assignment.get(tp)
        if state is None:
            return
        if high_watermark >= 0:
            state.high_watermark = high_watermark
        if last_stable_offset >= 0:
            state.last_stable_offset = last_stable_offset
        if log_start_offset >= 0:
            state.log_start_offset = log_start_offset

    def set_preferred_replica(self, tp: TopicPartition, node_id: int, expires: float) -> None:
        state = self._assignment.get(tp)
        if state is not None:
            state.preferred_replica, state.preferred_replica_expires = node_id, expires

    def preferred_replica(self, tp: TopicPartition, now: float) -> int | None:
        state = self._assignment.get(tp)
        if state is None or state.preferred_replica is None:
            return None
        if now >= state.preferred_replica_expires:
            state.preferred_replica = None
            return None
        return state.preferred_replica

    def clear_preferred_replica(self, tp: TopicPartition) -> None:
        state = self._assignment.get(tp)
        if state is not None:
            state.preferred_replica = None


__all__ = [
    "RESET_BACKOFF",
    "FetchState",
    "PartitionState",
    "ResetStrategy",
    "SubscriptionState",
    "SubscriptionType",
]
