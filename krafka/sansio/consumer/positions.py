"""Giving every assigned partition a position (Java's updateFetchPositions), sans-IO.

A partition without a position first asks the group for its committed offset; without one it
takes `initial_offsets`, else the reset policy (`SubscriptionState.resolve_initializing`). A
reset is looked up with ListOffsets at the partition's leader (one request per leader), with
per-partition exponential backoff (100 ms doubling to 30 s, `RESET_BACKOFF`). A partition whose
leader is unknown asks for metadata and retries when it arrives, so it never holds up the
others. With `auto_offset_reset="none"` the partition's error waits for the application. A
position the application set meanwhile always wins over a lookup in flight (the partition's
epoch moved).

`Positions` is a part of the consumer engine: the engine asks the group for committed offsets
when `committed_wanted` says so, and routes the ListOffsets answers here.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from krafka.errors import (
    AuthenticationError,
    AuthorizationError,
    KrafkaError,
    NoOffsetForPartitionError,
    error_for_code,
)
from krafka.protocol.error_codes import ErrorCode
from krafka.protocol.messages import ListOffsetsResponse
from krafka.sansio.actions import Broker, SendRequest
from krafka.sansio.backoff import Backoff
from krafka.sansio.codes import STALE_METADATA_CODES, code_name
from krafka.sansio.consumer.list_offsets import list_offsets_request, listed, min_version
from krafka.sansio.consumer.subscription import (
    RESET_BACKOFF,
    FetchState,
    ResetStrategy,
    SubscriptionState,
)
from krafka.sansio.isolation import IsolationLevel
from krafka.sansio.metadata import PartitionInfo
from krafka.structs import OffsetAndMetadata, TopicPartition

log = logging.getLogger(__name__)

_SPECS = {ResetStrategy.EARLIEST: -2, ResetStrategy.LATEST: -1}


class LeaderView(Protocol):
    """What resets read of the cluster metadata."""

    def partition(self, topic: str, partition: int) -> PartitionInfo | None: ...


@dataclass(slots=True, eq=False)
class _Lookup:
    node: int
    #: partition -> its epoch when asked (an answer for an older epoch is dropped)
    epochs: dict[TopicPartition, int] = field(default_factory=dict)


def is_refusal(error: KrafkaError) -> bool:
    """An error retrying will not fix that the application must see (Java's poll raises it):
    the principal may not read the topic or use the group."""
    return isinstance(error, AuthorizationError | AuthenticationError)


class Positions:
    """Committed offsets, initial offsets and resets for the partitions that need them."""

    def __init__(
        self,
        subscription: SubscriptionState,
        metadata: LeaderView,
        isolation: IsolationLevel,
        rand: Callable[[], float] = random.random,
    ) -> None:
        self.subscription = subscription
        self.metadata = metadata
        self.isolation = isolation
        self._rand = rand
        #: Errors the application must see (raised by its next poll), oldest first.
        self.errors: list[KrafkaError] = []
        self._asked: frozenset[TopicPartition] = frozenset()
        self._committed_backoff = Backoff(RESET_BACKOFF)
        self._lookups: dict[SendRequest[Any], _Lookup] = {}
        self._looking_up: set[TopicPartition] = set()
        self._leaderless: set[TopicPartition] = set()
        self._stale: set[str] = set()
        self._changed = False

    # -- committed offsets (through the group) ------------------------------------------------

    def committed_wanted(self, now: float) -> list[TopicPartition]:
        """Partitions to ask the group's committed offsets of now ([] while a fetch is out or
        backing off)."""
        if self._asked or self._committed_backoff.wait_time(now) > 0:
            return []
        return self.subscription.initializing_partitions()

    def committed_asked(self, partitions: Iterable[TopicPartition]) -> None:
        self._asked = frozenset(partitions)

    def committed_found(self, found: Mapping[TopicPartition, OffsetAndMetadata | None]) -> None:
        """The group answered: committed offsets, else `initial_offsets`, else a reset."""
        self._asked = frozenset()
        self._committed_backoff.succeeded()
        self.subscription.resolve_initializing(
            {tp: (om.offset if om is not None else None) for tp, om in found.items()}
        )
        self._changed = True

    def committed_failed(self, error: KrafkaError, now: float) -> None:
        """The fetch failed: asked again after a backoff; a refusal goes to the application."""
        self._asked = frozenset()
        self._committed_backoff.failed(now, self._rand)
        if is_refusal(error):
            self._report(error)
        else:
            log.warning("krafka consumer: fetching committed offsets failed: %s", error)

    # -- resets (ListOffsets at the leaders) --------------------------------------------------

    def actions(self, now: float) -> list[SendRequest[Any]]:
        """The ListOffsets due now, one per leader; partitions without a known leader ask for
        metadata (`stale_topics`)."""
        subscription = self.subscription
        due = subscription.resets_due(now)
        by_node: dict[int, dict[TopicPartition, int]] = {}
        refused: list[TopicPartition] = []
        for tp, strategy in due.items():
            if tp in self._looking_up or tp in self._leaderless:
                continue
            if strategy is ResetStrategy.NONE:
                refused.append(tp)
                continue
            info = self.metadata.partition(tp.topic, tp.partition)
            if info is None or info.leader < 0:
                self._leaderless.add(tp)
                self._stale.add(tp.topic)
                continue
            by_node.setdefault(info.leader, {})[tp] = _SPECS[strategy]
        if refused:
            self._refuse(refused, now)
        actions: list[SendRequest[Any]] = []
        for node, specs in sorted(by_node.items()):
            sent = SendRequest(
                Broker(node),
                list_offsets_request(specs, self.isolation),
                min_version=min_version(self.isolation),
            )
            lookup = _Lookup(node, {tp: subscription.state_of(tp).epoch for tp in specs})
            self._lookups[sent] = lookup
            self._looking_up.update(specs)
            actions.append(sent)
        return actions

    def stale_topics(self) -> set[str]:
        """Topics whose leaders a reset waits for (drained)."""
        stale, self._stale = self._stale, set()
        return stale

    def metadata_updated(self) -> None:
        """New metadata: partitions waiting for a leader are looked up again at once."""
        self._leaderless.clear()

    def changed(self) -> bool:
        """Some position was resolved since the last call (drained)."""
        changed, self._changed = self._changed, False
        return changed

    def next_deadline(self, *, committed: bool = True) -> float | None:
        """When a backed-off reset or (if `committed` may be asked for now) committed-offsets
        fetch may go (None: waiting for an answer, metadata, or nothing to do)."""
        times = [
            s.reset_backoff.retry_at
            for tp, s in self.subscription.states().items()
            if s.state is FetchState.AWAIT_RESET
            and tp not in self._looking_up
            and tp not in self._leaderless
            and not (s.reset is ResetStrategy.NONE and self.errors)
        ]
        if (
            committed
            and not self._asked
            and self._committed_backoff.failures
            and self.subscription.initializing_partitions()
        ):
            times.append(self._committed_backoff.retry_at)
        return min(times, default=None)

    def owns(self, sent: SendRequest[Any]) -> bool:
        return sent in self._lookups

    def on_response(self, sent: SendRequest[Any], response: Any, now: float) -> None:
        lookup = self._lookups.pop(sent, None)
        if lookup is None:
            return
        self._looking_up.difference_update(lookup.epochs)
        assert isinstance(response, ListOffsetsResponse)
        answered: set[TopicPartition] = set()
        for part in listed(response):
            tp = part.partition
            epoch = lookup.epochs.get(tp)
            if epoch is None or not self._still_waiting(tp, epoch):
                continue
            answered.add(tp)
            if part.error_code == ErrorCode.NONE and part.offset >= 0:
                self.subscription.resolve(tp, part.offset, part.leader_epoch)
                self._changed = True
            else:
                self._reset_failed(tp, part.error_code, now)
        for tp, epoch in lookup.epochs.items():
            if tp not in answered and self._still_waiting(tp, epoch):
                self.subscription.reset_failed(tp, now)

    def on_failure(self, sent: SendRequest[Any], error: KrafkaError, now: float) -> None:
        lookup = self._lookups.pop(sent, None)
        if lookup is None:
            return
        self._looking_up.difference_update(lookup.epochs)
        log.info("krafka consumer: resetting offsets at broker %s failed: %s", lookup.node, error)
        if is_refusal(error):
            self._report(error)
        for tp, epoch in lookup.epochs.items():
            if self._still_waiting(tp, epoch):
                self.subscription.reset_failed(tp, now)
                self._stale.add(tp.topic)

    # -- internals ------------------------------------------------------------------------------

    def _reset_failed(self, tp: TopicPartition, code: int, now: float) -> None:
        self.subscription.reset_failed(tp, now)
        if code in STALE_METADATA_CODES:
            self._stale.add(tp.topic)
            return
        error = error_for_code(code, f"resetting {tp.topic}-{tp.partition}: {code_name(code)}")
        log.info("krafka consumer: %s", error)
        if is_refusal(error):
            self._report(error)

    def _refuse(self, partitions: list[TopicPartition], now: float) -> None:
        """`auto_offset_reset="none"`: the application learns, once per backoff."""
        for tp in partitions:
            self.subscription.reset_failed(tp, now)
        if any(isinstance(e, NoOffsetForPartitionError) for e in self.errors):
            return
        names = ", ".join(f"{tp.topic}-{tp.partition}" for tp in sorted(partitions))
        self._report(
            NoOffsetForPartitionError(
                f"no committed or initial offset for {names} and auto_offset_reset is none: "
                "seek to a position or commit one",
                tuple(sorted(partitions)),
            )
        )

    def _report(self, error: KrafkaError) -> None:
        if not any(type(e) is type(error) and str(e) == str(error) for e in self.errors):
            self.errors.append(error)
        self._changed = True

    def _still_waiting(self, tp: TopicPartition, epoch: int) -> bool:
        subscription = self.subscription
        if not subscription.is_assigned(tp):
            return False
        state = subscription.state_of(tp)
        return state.state is FetchState.AWAIT_RESET and state.epoch == epoch


__all__ = ["LeaderView", "Positions", "is_refusal"]
