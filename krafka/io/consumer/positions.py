"""Giving every assigned partition a position (Java's updateFetchPositions), in the background.

A partition without a position first asks the group for its committed offset; without one it
takes `initial_offsets`, else the reset policy, resolved by ListOffsets at the leaders (one
request per leader, through the admin machinery) with per-partition exponential backoff
(100 ms doubling to 30 s). A partition whose leader is unknown is not looked up (its metadata
is refreshed and it retries after its backoff), so it never holds up the others' lookups.
With `auto_offset_reset="none"` the partition's error waits for the next poll. A position set
by the application meanwhile always wins over a lookup in flight.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Awaitable, Callable, Iterable, Sequence

import anyio

from krafka.errors import (
    AuthenticationError,
    AuthorizationError,
    KrafkaError,
    NoOffsetForPartitionError,
)
from krafka.io.admin import AdminClient
from krafka.io.consumer.membership import Membership
from krafka.sansio.admin.offsets import IsolationLevel as ListIsolation
from krafka.sansio.admin.offsets import ListedOffset, OffsetSpec
from krafka.sansio.consumer.subscription import FetchState, ResetStrategy, SubscriptionState
from krafka.sansio.metadata import ClusterMetadata
from krafka.structs import TopicPartition

log = logging.getLogger(__name__)

_SPECS = {ResetStrategy.EARLIEST: OffsetSpec.EARLIEST, ResetStrategy.LATEST: OffsetSpec.LATEST}


class PositionUpdater:
    """Resolves missing positions whenever woken, until cancelled."""

    def __init__(
        self,
        subscription: SubscriptionState,
        membership: Membership,
        admin: AdminClient,
        read_committed: bool,
        on_change: Callable[[], None],
        metadata: ClusterMetadata,
        refresh: Callable[[Sequence[str]], Awaitable[object]],
        on_stale: Callable[[Iterable[str]], None],
    ) -> None:
        self.subscription = subscription
        self._on_change = on_change
        self._metadata = metadata
        self._refresh = refresh
        self._on_stale = on_stale
        self.membership = membership
        self.admin = admin
        self.isolation = (
            ListIsolation.READ_COMMITTED if read_committed else ListIsolation.READ_UNCOMMITTED
        )
        self.errors: list[KrafkaError] = []
        self._wake = anyio.Event()
        self.resolved = anyio.Event()

    def wake(self) -> None:
        self._wake.set()

    async def run(self) -> None:
        while True:
            self._wake = anyio.Event()
            try:
                await self.update()
            except KrafkaError as exc:  # a lookup that failed as a whole: retried soon
                if _refusal(exc):
                    self.errors.append(exc)
                else:
                    log.warning("krafka consumer: offset lookup failed: %s", exc)
                for tp in self.subscription.resets_due(anyio.current_time()):
                    self.subscription.reset_failed(tp, anyio.current_time())
            self._on_change()
            self.resolved.set()
            self.resolved = anyio.Event()
            due = self.subscription.next_reset_at()
            delay = math.inf if due is None else max(0.0, due - anyio.current_time())
            if self.subscription.initializing_partitions() and delay > 0:
                delay = 0.1
            if self.errors:
                delay = math.inf  # until the application has seen them (a poll wakes this)
            with anyio.move_on_after(delay):
                await self._wake.wait()

    async def update(self) -> None:
        await self._committed()
        await self._resets()

    async def _committed(self) -> None:
        waiting = self.subscription.initializing_partitions()
        if not waiting:
            return
        found = await self.membership.committed(waiting)
        self.subscription.resolve_initializing(
            {tp: (om.offset if om is not None else None) for tp, om in found.items()}
        )

    async def _resets(self) -> None:
        now = anyio.current_time()
        due = self.subscription.resets_due(now)
        refused = [tp for tp, strategy in due.items() if strategy is ResetStrategy.NONE]
        if refused:
            for tp in refused:
                self.subscription.reset_failed(tp, now)
            names = ", ".join(f"{tp.topic}-{tp.partition}" for tp in refused)
            self.errors.append(
                NoOffsetForPartitionError(
                    f"no committed or initial offset for {names} and auto_offset_reset is "
                    "none: seek to a position or commit one",
                    tuple(refused),
                )
            )
        specs = {tp: _SPECS[s] for tp, s in due.items() if s is not ResetStrategy.NONE}
        unknown = sorted({tp.topic for tp in specs} - set(self._metadata.topics))
        if unknown:
            await self._refresh(unknown)
        leaderless = [tp for tp in specs if self._leaderless(tp)]
        if leaderless:
            for tp in leaderless:
                del specs[tp]
                self.subscription.reset_failed(tp, now)
            self._on_stale({tp.topic for tp in leaderless})
        if not specs:
            return
        epochs = {tp: self.subscription.state_of(tp).epoch for tp in specs}
        results = await self.admin.list_offsets(specs, isolation_level=self.isolation)
        now = anyio.current_time()
        denied: list[KrafkaError] = []
        for tp, value in results.items():
            if not self._still_waiting(tp, epochs[tp]):
                continue
            if isinstance(value, ListedOffset):
                self.subscription.resolve(tp, value.offset, value.leader_epoch)
            else:
                if isinstance(value, KrafkaError):
                    log.info("krafka consumer: resetting %s failed: %s", tp, value)
                    if _refusal(value):
                        denied.append(value)
                self.subscription.reset_failed(tp, now)
        self.errors += denied[:1]

    def _leaderless(self, tp: TopicPartition) -> bool:
        """Known to have no leader now (an unknown topic is for the lookup to find)."""
        info = self._metadata.partition(tp.topic, tp.partition)
        return info is not None and info.leader < 0

    def _still_waiting(self, tp: TopicPartition, epoch: int) -> bool:
        if not self.subscription.is_assigned(tp):
            return False
        state = self.subscription.state_of(tp)
        return state.state is FetchState.AWAIT_RESET and state.epoch == epoch


def _refusal(error: KrafkaError) -> bool:
    """An error retrying will not fix that the application must see (Java's poll raises it):
    the principal may not read the topic or use the group."""
    return isinstance(error, AuthorizationError | AuthenticationError)


__all__ = ["PositionUpdater"]
