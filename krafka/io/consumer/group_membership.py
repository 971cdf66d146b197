"""Membership of a consumer group on a `MachineDriver`: the sans-IO classic `GroupMember`
(`group_protocol="classic"`) or the KIP-848 `ConsumerMember` (`group_protocol="consumer"`),
which share one driver API and one set of listener steps.

The member's listener steps run in this membership's own task, in order, one at a time
(commit the positions -> revoke -> assign, Java's order), each answered before the member moves
on; the rebalance listener's methods may be plain or async. Partitions follow the group only
through the consumer's `SubscriptionState`: assigned ones start INITIALIZING (committed offset,
then `initial_offsets`, then the reset policy), retained ones keep position and pause flag.
A fatal group error is raised by the next poll.
"""

from __future__ import annotations

import inspect
import logging
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import anyio
import anyio.abc

from krafka.errors import KrafkaError, error_for_code
from krafka.io.client import KafkaClient
from krafka.io.consumer.membership import DrivenOffsets
from krafka.io.driver import MachineDriver
from krafka.protocol.error_codes import ErrorCode
from krafka.sansio.actions import RefreshMetadata
from krafka.sansio.backoff import Backoff, BackoffPolicy
from krafka.sansio.consumer.subscription import SubscriptionState
from krafka.sansio.group import (
    AssignPartitions,
    AutoCommitDone,
    CommitPositions,
    GroupConfig,
    GroupFailed,
    GroupMember,
    LeaveReason,
    LosePartitions,
    RevokePartitions,
)
from krafka.sansio.group.events import PendingRevocation
from krafka.sansio.group.kip848.member import ConsumerMember
from krafka.structs import ConsumerGroupMetadata, OffsetAndMetadata, TopicPartition

log = logging.getLogger(__name__)

Offsets = Mapping[TopicPartition, OffsetAndMetadata]


class GroupMembership(DrivenOffsets):
    """A subscribing consumer's membership of group `config.group_id`, through `member`."""

    def __init__(
        self,
        client: KafkaClient,
        config: GroupConfig,
        member: GroupMember | ConsumerMember,
        subscription: SubscriptionState,
        *,
        listener: Any,
        positions: Callable[[], dict[TopicPartition, OffsetAndMetadata]],
        on_change: Callable[[], None],
        metadata_max_age: float = 30.0,
    ) -> None:
        self.group_id: str | None = config.group_id
        self._client = client
        self._subscription = subscription
        self._listener = listener
        self._positions = positions
        self._on_change = on_change
        self.member = self._machine = member
        self._events: list[Any] = []
        self._new_event = anyio.Event()
        self._driver = MachineDriver(
            client, self.member, on_event=self._queue, name=f"krafka group {config.group_id}"
        )
        self._failure: KrafkaError | None = None
        self._task_group: anyio.abc.TaskGroup | None = None
        #: How often the subscription's topics (every topic, for a pattern) are looked up
        #: again: the consumer's metadata_max_age, at most 30 s apart.
        self._metadata_age = min(30.0, metadata_max_age)
        self._missing_backoff = BackoffPolicy(
            initial=config.retry_backoff,
            maximum=max(config.retry_backoff, config.retry_backoff_max),
            max_retries=None,
        )

    # -- Membership ---------------------------------------------------------------------------

    async def start(self, task_group: anyio.abc.TaskGroup) -> None:
        self._task_group = task_group
        await task_group.start(self._driver.run)
        task_group.start_soon(self._event_loop, name="krafka group listener")
        task_group.start_soon(self._metadata_loop, name="krafka group metadata")

    async def subscribe(self, topics: Iterable[str] | re.Pattern[str]) -> None:
        if isinstance(topics, re.Pattern):
            self._subscription.subscribe_pattern(topics)
        else:
            self._subscription.subscribe(topics)
        await self._refresh_metadata()
        self.member.subscribe(topics, anyio.current_time())
        self._driver.wake()

    async def unsubscribe(self, timeout: float) -> None:
        op = self.member.leave(anyio.current_time(), reason=LeaveReason.UNSUBSCRIBE)
        with anyio.move_on_after(timeout):
            try:
                await self._driver.outcome(op, timeout)
            except KrafkaError as exc:
                log.info("krafka consumer: leaving %s: %s", self.group_id, exc)
        self._subscription.unsubscribe()

    async def on_poll(self, now: float) -> None:
        self.raise_failure()
        self.member.poll(now)
        self._driver.wake()

    def raise_failure(self) -> None:
        if self._failure is not None:
            failure, self._failure = self._failure, None
            raise failure

    def group_metadata(self) -> ConsumerGroupMetadata:
        return self.member.group_metadata()

    async def close(self, timeout: float, *, autocommit: Offsets | None) -> None:
        """Leave the group (the member auto-commits first when enabled); within `timeout`."""
        if isinstance(self.member, GroupMember):
            op = self.member.leave(anyio.current_time(), reason=LeaveReason.CLOSE, timeout=timeout)
        else:
            op = self.member.leave(anyio.current_time(), reason=LeaveReason.CLOSE)
        with anyio.move_on_after(timeout):
            try:
                await self._driver.outcome(op, timeout)
            except KrafkaError as exc:
                log.info("krafka consumer: leaving %s: %s", self.group_id, exc)

    # -- the member's events ------------------------------------------------------------------

    def _queue(self, event: Any) -> None:
        self._events.append(event)
        self._new_event.set()

    async def _event_loop(self) -> None:
        while True:
            await self._new_event.wait()
            self._new_event = anyio.Event()
            while self._events:
                await self._handle(self._events.pop(0))
            self._driver.wake()

    async def _handle(self, event: Any) -> None:
        now = anyio.current_time
        subscription = self._subscription
        if isinstance(event, CommitPositions):
            if event.pending_revocation:
                subscription.mark_pending_revocation(event.partitions)
            positions = self._positions()
            offsets = {tp: positions[tp] for tp in event.partitions if tp in positions}
            self.member.listener_done(event.step, now(), offsets)
        elif isinstance(event, RevokePartitions | LosePartitions):
            method = (
                "on_partitions_revoked"
                if isinstance(event, RevokePartitions)
                else "on_partitions_lost"
            )
            await self._call_listener(method, event.partitions)
            kept = subscription.assigned_partitions() - set(event.partitions)
            subscription.assign_from_subscribed(sorted(kept))
            self.member.listener_done(event.step, now())
            self._on_change()
        elif isinstance(event, AssignPartitions):
            subscription.assign_from_subscribed(sorted(event.assignment))
            self._on_change()
            await self._call_listener("on_partitions_assigned", event.added)
            self.member.listener_done(event.step, now())
        elif isinstance(event, PendingRevocation):
            subscription.mark_pending_revocation(event.partitions)
        elif isinstance(event, GroupFailed):
            self._failure = event.error
            self._on_change()
        elif isinstance(event, RefreshMetadata):
            await self._refresh_metadata()
        elif isinstance(event, AutoCommitDone) and event.error is not None:
            log.warning("krafka consumer: auto-commit to %s failed: %s", self.group_id, event.error)

    async def _call_listener(self, method: str, partitions: Iterable[TopicPartition]) -> None:
        hook = getattr(self._listener, method, None)
        if hook is None:
            return
        try:
            result = hook(set(partitions))
            if inspect.isawaitable(result):
                await result
        except Exception:
            log.exception("krafka consumer: rebalance listener %s raised", method)

    async def _metadata_loop(self) -> None:
        """Every `_metadata_age` s (a pattern then matches new topics); while a subscribed topic
        is unknown to the cluster (not created yet, or being auto-created) at the retry backoff
        instead, as Java's consumer refreshes metadata for it, so the group assigns it soon
        after it appears."""
        backoff = Backoff(self._missing_backoff)
        while True:
            now = anyio.current_time()
            if self._missing_topics():
                delay = backoff.failed(now) - now
            else:
                backoff.succeeded()
                delay = self._metadata_age
            await anyio.sleep(delay)
            try:
                await self._refresh_metadata()
            except KrafkaError as exc:
                log.info("krafka consumer: metadata refresh failed: %s", exc)

    def _missing_topics(self) -> set[str]:
        if self._subscription.pattern is not None:
            return set()
        known = self._client.metadata.partition_counts
        return {t for t in self._subscription.subscription() if t not in known}

    async def _refresh_metadata(self) -> None:
        """Tell the member every subscribed topic's partition count (all topics for a
        pattern), so leaders assign what exists and patterns follow new topics."""
        pattern = self._subscription.pattern
        topics = None if pattern is not None else sorted(self._subscription.subscription())
        if topics == []:
            return
        meta = await self._client.refresh_metadata(topics, all_topics=pattern is not None)
        if topics is not None:
            self._refuse_unauthorized(topics)
        counts = dict(self._client.metadata.partition_counts)
        if pattern is not None:
            self._subscription.match_pattern(counts)
        wanted = self._subscription.subscription()
        now = anyio.current_time()
        if isinstance(self.member, ConsumerMember):  # assignments name topics by id
            ids = {t: i for t in counts if (i := self._client.metadata.topic_id(t)) is not None}
            self.member.update_topic_ids(ids, now)
        else:
            self.member.update_metadata({t: n for t, n in counts.items() if t in wanted}, now)
        del meta

    def _refuse_unauthorized(self, topics: list[str]) -> None:
        """Subscribed topics the principal may not describe fail the next poll (Java's
        TopicAuthorizationException), instead of leaving the member waiting for them."""
        errors = self._client.metadata.topic_errors
        denied = [t for t in topics if errors.get(t) == ErrorCode.TOPIC_AUTHORIZATION_FAILED]
        if denied and self._failure is None:
            self._failure = error_for_code(
                ErrorCode.TOPIC_AUTHORIZATION_FAILED,
                f"not authorized to describe subscribed topics: {', '.join(denied)}",
            )
            self._on_change()


__all__ = ["GroupMembership"]
