"""The whole consumer as one sans-IO machine (`krafka.sansio.actions.Machine`).

`ConsumerEngine` owns what a consumer decides: the subscription and assignment
(`SubscriptionState`), the fetcher (`Fetcher`: one Fetch per broker, fetch sessions, the
prefetched data), positions and resets (`Positions`: committed offset -> `initial_offsets` ->
the reset policy, ListOffsets with per-partition backoff), the records handed out of the
fetcher but not yet to the application (`buffer`), auto-commit (one timer, whatever the group),
and one group behind one interface (`krafka.sansio.consumer.group`: none, standalone with
`assign`, classic or KIP-848 member with `subscribe`). Closing is requests too: the final
auto-commit, leaving the group, closing the fetch sessions.

Inputs, each with `now`: the application's calls (`assign`, `subscribe`, `unsubscribe`,
`poll`, `poll_batches`, `commit`, `committed`, `seek`, `seek_to`, `position`, `pause`,
`resume`, `close`), `rebalance_done` once the application's listener ran, `metadata_updated`
after a `RefreshMetadata` was carried out, and the answers to its requests. Outputs
(`next_actions`): `SendRequest`s (group requests to `Coordinator(group_id)`, Fetch and
ListOffsets to brokers), one merged `RefreshMetadata`, `CoordinatorMoved`, outcomes
(`Completed` / `Failed`) of `commit`, `committed`, `unsubscribe` and `close`, and events
(`krafka.sansio.consumer.events`): `PollReady`, the listener events, `OffsetsCommitted`.
Errors the application must see (a fetch's, a reset's, the group's) are raised by `poll`.
"""

from __future__ import annotations

import logging
import random
import re
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from krafka.errors import (
    IllegalStateError,
    InvalidStateError,
    KrafkaError,
    error_class,
    error_for_code,
)
from krafka.protocol.error_codes import ErrorCode
from krafka.protocol.messages import ApiKey
from krafka.sansio.actions import (
    Completed,
    CoordinatorMoved,
    Failed,
    RefreshMetadata,
    SendRequest,
    next_op,
)
from krafka.sansio.backoff import Backoff
from krafka.sansio.consumer.config import ConsumerConfig, GroupProtocol
from krafka.sansio.consumer.events import (
    AutoCommitFailed,
    OffsetsCommitted,
    PartitionsAssigned,
    PartitionsLost,
    PartitionsRevoked,
    PollReady,
    RebalanceEvent,
)
from krafka.sansio.consumer.fetcher import FetchCompleted, Fetcher
from krafka.sansio.consumer.group import ConsumerGroup, MemberGroup, NoGroup, StandaloneGroup
from krafka.sansio.consumer.positions import Positions
from krafka.sansio.consumer.record import ConsumerRecord, FetchedBatch
from krafka.sansio.consumer.subscription import ResetStrategy, SubscriptionState, SubscriptionType
from krafka.sansio.consumer.view import MetadataView
from krafka.sansio.group.classic.member import GroupMember
from krafka.sansio.group.events import (
    AssignPartitions,
    AutoCommitDone,
    CommitPositions,
    GroupFailed,
    GroupMembershipOperation,
    LosePartitions,
    PendingRevocation,
    PollNeeded,
    RevokePartitions,
)
from krafka.sansio.group.kip848.member import ConsumerMember
from krafka.sansio.group.offsets.standalone import StandaloneOffsets
from krafka.sansio.isolation import IsolationLevel
from krafka.sansio.topic_name import check_topic
from krafka.structs import ConsumerGroupMetadata, OffsetAndMetadata, TopicPartition

log = logging.getLogger(__name__)

_SUBSCRIBED = (SubscriptionType.AUTO_TOPICS, SubscriptionType.AUTO_PATTERN)


class AfterPoll(Enum):
    """What a driver does with the engine after a `poll` / `poll_batches` (`after_poll()`)."""

    #: The poll used a fetch up (or dropped a stale one): step now, so the next Fetch is
    #: planned before the records are handed out.
    STEP = "step"
    #: The poll gave the engine work (records taken, a group step or an auto-commit due):
    #: step soon.
    WAKE = "wake"
    #: Nothing new (an empty poll while a Fetch is under way): no step is needed for it.
    NOTHING = "nothing"


_Outcome = Completed | Failed


@dataclass(slots=True, eq=False)
class _Closing:
    """A close under way: the group's part (leave, or the final auto-commit), then the fetch
    sessions' closes; every `close` op completes when both are done or at `deadline`."""

    ops: list[int]
    deadline: float
    group_op: int | None = None
    sessions: set[SendRequest[Any]] = field(default_factory=set)
    sessions_sent: bool = False
    done: bool = False


class _Sessions:
    """The owner of the fetch-session closes sent on close (answers ignored)."""


class ConsumerEngine:
    """Everything a consumer decides, for one driver to carry out."""

    def __init__(
        self,
        config: ConsumerConfig,
        metadata: MetadataView,
        *,
        rand: Callable[[], float] = random.random,
    ) -> None:
        self.config = config
        self.metadata = metadata
        self._rand = rand
        self.subscription = SubscriptionState(config.auto_offset_reset, config.initial_offsets)
        self.fetcher = Fetcher(config.fetch, self.subscription, metadata, rand)
        self.metrics = self.fetcher.metrics
        self.positions = Positions(self.subscription, metadata, config.fetch.isolation_level, rand)
        #: Records taken out of the fetcher and not yet handed to the application (what
        #: `recv` and `async for` hand out one by one): their positions are not consumed yet.
        self.buffer: deque[ConsumerRecord] = deque()
        group = config.group
        self._offsets: ConsumerGroup = (
            NoGroup()
            if group is None
            else StandaloneGroup(
                StandaloneOffsets(
                    group.group_id,
                    retry_backoff=group.retry_backoff,
                    retry_backoff_max=group.retry_backoff_max,
                    default_api_timeout=group.default_api_timeout,
                    require_stable=group.require_stable,
                    rand=rand,
                )
            )
        )
        self._member: MemberGroup | None = None
        self._owners: dict[SendRequest[Any], Any] = {}
        self._internal: dict[int, Callable[[_Outcome, float], None]] = {}
        self._events: list[Any] = []
        self._failures: list[KrafkaError] = []
        self._ready = False
        self._after_poll = AfterPoll.WAKE
        self._step: RebalanceEvent | None = None
        self._committed_op: int | None = None
        self._next_auto_commit: float | None = None
        self._refresh_topics: set[str] = set()
        self._refresh_all = False
        self._refresh_wanted = False
        self._next_subscription_refresh: float | None = None
        self._missing = Backoff(config.retry_backoff)
        self._closing: _Closing | None = None
        self._sessions = _Sessions()
        #: OffsetCommit requests out, and when they went (commit-latency).
        self._commits: dict[SendRequest[Any], float] = {}

    # -- the contract ---------------------------------------------------------------------------

    def next_actions(self, now: float) -> list[Any]:
        actions: list[Any] = []
        for group in self._groups():
            self._run_group(group, now, actions)
        self._resolve_positions(now, actions)
        if self._closing is None:
            for action in self.fetcher.next_actions(now):
                self._take(self.fetcher, action, now, actions)
        else:
            self._close_progress(now, actions)
        self._refresh_subscription(now)
        if self._refresh_wanted:
            topics = None if self._refresh_all else frozenset(self._refresh_topics)
            actions.append(RefreshMetadata(topics))
            self._refresh_topics, self._refresh_all, self._refresh_wanted = set(), False, False
        if self.positions.changed():
            self._ready = True
        if self._ready:
            self._ready = False
            actions.append(PollReady())
        actions[:0], self._events = self._events, []
        return actions

    def on_response(self, sent: SendRequest[Any], response: Any, now: float) -> None:
        if sent in self._commits:
            self._commit_answered(sent, now, failed=False)
        owner = self._owners.pop(sent, None)
        if owner is self._sessions:
            self._session_closed(sent)
        elif owner is not None:
            owner.on_response(sent, response, now)

    def on_failure(self, sent: SendRequest[Any], error: KrafkaError, now: float) -> None:
        if sent in self._commits:
            self._commit_answered(sent, now, failed=True)
        owner = self._owners.pop(sent, None)
        if owner is self._sessions:
            self._session_closed(sent)
        elif owner is not None:
            owner.on_failure(sent, error, now)

    def next_deadline(self) -> float | None:
        times = [group.next_deadline() for group in self._groups()]
        times.append(self.positions.next_deadline(committed=self._may_ask_committed()))
        closing = self._closing
        if closing is None:
            times.append(self.fetcher.next_deadline())
        elif not closing.done:
            times.append(closing.deadline)
        times.append(self._next_subscription_refresh)
        return min((t for t in times if t is not None), default=None)

    # -- the application's calls: assignment ---------------------------------------------------

    def assign(self, partitions: Iterable[TopicPartition], now: float) -> None:
        """Read exactly these partitions (no membership; a `group_id` still commits)."""
        wanted = [TopicPartition(*tp) for tp in partitions]
        for tp in wanted:
            check_topic(tp.topic)
            if not isinstance(tp.partition, int) or tp.partition < 0:
                raise ValueError(f"{tp.topic!r}: a partition is an int >= 0, not {tp.partition!r}")
        self.subscription.assign_from_user(wanted)
        self._assignment_changed()
        self._want_refresh(frozenset(tp.topic for tp in wanted))

    def subscribe(self, topics: Iterable[str] | re.Pattern[str], now: float) -> None:
        """Join the group for these topics (or every topic matching a pattern)."""
        subscription = self.subscription
        if subscription.type is SubscriptionType.USER_ASSIGNED:
            raise IllegalStateError(
                "subscribe() and assign() are mutually exclusive: unsubscribe() first"
            )
        if self.config.group is None:
            raise InvalidStateError("subscribe needs a group_id (or use assign())")
        if not isinstance(topics, re.Pattern):
            topics = [check_topic(topic) for topic in topics]
            if not topics:
                raise ValueError("subscribe to at least one topic (or unsubscribe)")
        member = self._member
        if member is None or member.closed:
            member = self._member = MemberGroup(self._new_member())
        if isinstance(topics, re.Pattern):
            subscription.subscribe_pattern(topics)
            self._want_refresh(None)
        else:
            subscription.subscribe(topics)
            self._want_refresh(frozenset(topics))
        member.subscribe(topics, now)

    def unsubscribe(self, now: float) -> int:
        """Leave the group (revoking the partitions) or drop the manual assignment; completes
        once left."""
        op = next_op()
        member = self._member
        if member is not None and not member.closed and self.subscription.type in _SUBSCRIBED:
            timeout = self.config.default_api_timeout
            left = member.leave(now, close=False, timeout=timeout)
            self._internal[left] = lambda result, _: self._unsubscribed(op, result)
        else:
            self._unsubscribed(op, Completed(op))
        return op

    def assignment(self) -> set[TopicPartition]:
        return self.subscription.assigned_partitions()

    def subscribed_topics(self) -> set[str]:
        """The topics subscribed to (by name, or matched by the pattern)."""
        return set(self.subscription.subscription())

    def paused(self) -> set[TopicPartition]:
        return self.subscription.paused_partitions()

    # -- the application's calls: reading -------------------------------------------------------

    def poll(self, now: float, max_records: int | None = None) -> list[ConsumerRecord]:
        """Up to `max_records` records ready now ([] when none); raises what the application
        must see first (a group's, a reset's or a partition's error). Records left behind
        bring a `PollReady`, so an application polling on `PollReady` alone gets them all."""
        quiet = self._polled(now)
        records = self._take_records(max_records or self.config.max_poll_records, now)
        if records and (self.buffer or self.fetcher.has_data()):
            self._ready = True
        self._poll_done(quiet and not records)
        return records

    def _take_records(self, limit: int, now: float) -> list[ConsumerRecord]:
        buffer = self.buffer
        if buffer:
            return [buffer.popleft() for _ in range(min(limit, len(buffer)))]
        self.subscription.mark_polled()
        config = self.config
        records = self.fetcher.fetched_records(
            limit, config.key_deserializer, config.value_deserializer
        )
        if records:
            self.metrics.consumed(records, now)
        return records

    def poll_batches(self, now: float) -> list[FetchedBatch]:
        """Every partition's fetched data undecoded (`FetchedBatch`)."""
        quiet = self._polled(now)
        self.subscription.mark_polled()
        batches = self.fetcher.fetched_batches()
        if batches:
            self.metrics.consumed_batches(batches, now)
        self._poll_done(quiet and not batches)
        return batches

    def after_poll(self) -> AfterPoll:
        """What the last `poll` / `poll_batches` asks of a driver (`WAKE` after one that
        raised): a poll that leaves the engine nothing new to do needs no step."""
        return self._after_poll

    def keep(self, records: Iterable[ConsumerRecord]) -> None:
        """Records `poll` returned that the driver hands out one by one (`recv`, `async for`):
        until then their positions count as not consumed."""
        self.buffer.extend(records)

    def raise_failure(self) -> None:
        """Raise (once) an error the application must see: the group's, or a position's."""
        if self._failures:
            raise self._failures.pop(0)
        if self.positions.errors:
            raise self.positions.errors.pop(0)

    # -- the application's calls: positions -----------------------------------------------------

    def seek(self, tp: TopicPartition, offset: int, leader_epoch: int | None = None) -> None:
        """Read `tp` from `offset` on."""
        tp = TopicPartition(*tp)
        self.subscription.seek(tp, offset, leader_epoch)
        self._drop_buffered({tp})

    def handed_out(self, tp: TopicPartition, offset: int) -> None:
        """A bulk decoder handed out `tp`'s records before `offset` and keeps the rest of what
        it fetched for its next poll: the position moves to `offset` with no epoch bump, so
        fetching goes on after the data it holds."""
        self.subscription.advance(tp, offset, None)

    def partition_epoch(self, tp: TopicPartition) -> int | None:
        """`tp`'s subscription epoch (bumped by every seek, reset or reassignment); None when
        it is not assigned."""
        subscription = self.subscription
        return subscription.state_of(tp).epoch if subscription.is_assigned(tp) else None

    def is_paused(self, tp: TopicPartition) -> bool:
        return self.subscription.is_paused(tp)

    def seek_to(self, partitions: Iterable[TopicPartition], strategy: ResetStrategy) -> None:
        """Reset these partitions (all assigned ones when none are named) by `strategy`."""
        targets = [TopicPartition(*tp) for tp in partitions] or sorted(self.assignment())
        for tp in targets:
            self.subscription.request_offset_reset(tp, strategy)
        self._drop_buffered(set(targets))

    def position(self, tp: TopicPartition) -> int | None:
        """The offset of the next record the application gets from `tp` (None: not resolved
        yet); raises IllegalStateError when `tp` is not assigned."""
        tp = TopicPartition(*tp)
        self.subscription.state_of(tp)
        buffered = [r.offset for r in self.buffer if (r.topic, r.partition) == tp]
        if buffered:
            return min(buffered)
        position = self.subscription.position(tp)
        if position is not None:
            self.subscription.mark_polled((tp,))
        return position

    def pause(self, partitions: Iterable[TopicPartition]) -> None:
        for tp in partitions:
            self.subscription.pause(TopicPartition(*tp))

    def resume(self, partitions: Iterable[TopicPartition]) -> None:
        for tp in partitions:
            self.subscription.resume(TopicPartition(*tp))

    def consumed(self) -> dict[TopicPartition, OffsetAndMetadata]:
        """Positions of the records handed to the application (what a commit commits)."""
        consumed = self.subscription.all_consumed()
        for record in reversed(self.buffer):
            tp = TopicPartition(record.topic, record.partition)
            consumed[tp] = OffsetAndMetadata(record.offset, "", record.leader_epoch)
        return consumed

    def lag(self) -> dict[TopicPartition, int]:
        """Records behind the end of each assigned partition, from the last fetch."""
        consumed = self.consumed()
        out = {}
        for tp in self.subscription.states():
            end = self.cached_end_offset(tp)
            position = consumed.get(tp)
            if end is not None and position is not None:
                out[tp] = max(0, end - position.offset)
        return out

    def cached_beginning_offset(self, tp: TopicPartition) -> int | None:
        """The log start offset of assigned `tp` the last fetch response gave (None: none
        yet, or not assigned)."""
        state = self.subscription.states().get(TopicPartition(*tp))
        return None if state is None else state.log_start_offset

    def cached_end_offset(self, tp: TopicPartition) -> int | None:
        """The end of assigned `tp` the last fetch response gave: the high watermark, the last
        stable offset under read_committed (None: none yet, or not assigned)."""
        state = self.subscription.states().get(TopicPartition(*tp))
        if state is None:
            return None
        if self.config.fetch.isolation_level is IsolationLevel.READ_COMMITTED:
            return state.last_stable_offset
        return state.high_watermark

    # -- the application's calls: commits -------------------------------------------------------

    def commit(
        self,
        offsets: Mapping[TopicPartition, OffsetAndMetadata | int] | None,
        now: float,
        timeout: float | None = None,
    ) -> int:
        """Commit `offsets` (None: the consumed positions); completes with what was
        committed."""
        wanted = self.consumed() if offsets is None else self._checked(offsets)
        return self._group().commit(wanted, now, self._timeout(timeout))

    def committed(
        self, partitions: Iterable[TopicPartition], now: float, timeout: float | None = None
    ) -> int:
        """The group's committed offsets ({tp: OffsetAndMetadata | None})."""
        wanted = [TopicPartition(*tp) for tp in partitions]
        return self._group().fetch_committed(wanted, now, self._timeout(timeout))

    def group_metadata(self) -> ConsumerGroupMetadata:
        return self._group().group_metadata()

    # -- the driver's inputs --------------------------------------------------------------------

    def rebalance_done(
        self, event: RebalanceEvent, now: float, error: BaseException | None = None
    ) -> None:
        """The application's listener ran for `event` (`error`: what it raised)."""
        if self._step is None or self._step.step != event.step:
            raise InvalidStateError(f"{event!r} is not the outstanding rebalance step")
        self._step = None
        if isinstance(event, PartitionsRevoked | PartitionsLost):
            subscription = self.subscription
            if subscription.type in _SUBSCRIBED:
                kept = subscription.assigned_partitions() - set(event.partitions)
                subscription.assign_from_subscribed(sorted(kept))
            self._drop_buffered(set(event.partitions))
        assert self._member is not None
        self._member.listener_done(event.step, now, error=error)

    def metadata_updated(self, now: float) -> None:
        """A `RefreshMetadata` was carried out: the view holds newer metadata."""
        self.positions.metadata_updated()
        subscription = self.subscription
        if subscription.type not in _SUBSCRIBED:
            assigned = self.subscription.assigned_partitions()
            self._refuse_denied((tp.topic for tp in assigned), "assigned")
            self._refuse_missing(assigned)
            return
        counts = self.metadata.partition_counts
        if subscription.pattern is not None:
            subscription.match_pattern(counts)
        wanted = subscription.subscription()
        self._refuse_denied(wanted, "subscribed")
        member = self._member
        if member is not None:
            ids = {t: i for t in counts if (i := self.metadata.topic_id(t)) is not None}
            member.metadata_updated(dict(counts), ids, now)
        missing = subscription.pattern is None and any(t not in counts for t in wanted)
        if missing:
            self._next_subscription_refresh = self._missing.failed(now, self._rand)
        else:
            self._missing.succeeded()
            self._next_subscription_refresh = now + self.config.subscription_refresh

    def close(
        self,
        now: float,
        timeout: float,
        operation: GroupMembershipOperation = GroupMembershipOperation.DEFAULT,
    ) -> int:
        """Stop fetching, auto-commit (when on) and leave the group as `operation` says (KIP-1092),
        close the fetch sessions; completes when done or after `timeout`."""
        op = next_op()
        closing = self._closing
        if closing is not None:
            if closing.done:
                self._events.append(Completed(op))
            else:
                closing.ops.append(op)
            return op
        closing = self._closing = _Closing([op], now + timeout)
        member = self._member
        if member is not None and not member.closed and self.subscription.type in _SUBSCRIBED:
            closing.group_op = member.leave(now, close=True, timeout=timeout, operation=operation)
            self._internal[closing.group_op] = self._group_closed
        elif self.config.auto_commit and (offsets := self.consumed()):
            group_op = self._offsets.commit(offsets, now, timeout)
            closing.group_op = group_op
            self._internal[group_op] = lambda result, _: self._final_commit(offsets, result, now)
        return op

    # -- internals: groups ------------------------------------------------------------------

    def _new_member(self) -> GroupMember | ConsumerMember:
        config = self.config
        assert config.group is not None
        if config.group_protocol is GroupProtocol.CONSUMER:
            return ConsumerMember(
                config.group, server_assignor=config.remote_assignor, rand=self._rand
            )
        return GroupMember(config.group, list(config.assignors), rand=self._rand)

    def _groups(self) -> list[Any]:
        groups: list[Any] = [self._offsets]
        if self._member is not None:
            groups.append(self._member)
        return groups

    def _group(self) -> ConsumerGroup:
        """Where commits and committed offsets go: the member while subscribed, else the group
        without membership (or none)."""
        member = self._member
        if member is not None and self.subscription.type in _SUBSCRIBED:
            return member
        return self._offsets

    def _run_group(self, group: Any, now: float, actions: list[Any]) -> None:
        """The group's actions; steps the engine answers itself (commit positions) are
        answered at once and the group asked again."""
        for _ in range(8):
            answered = False
            for action in group.next_actions(now):
                answered = self._take(group, action, now, actions) or answered
            if not answered:
                return

    def _take(self, owner: Any, action: Any, now: float, actions: list[Any]) -> bool:
        """Route one action of a part; True when it answered a step of the group."""
        if isinstance(action, SendRequest):
            self._owners[action] = owner
            self._timed(action, now)
            actions.append(action)
        elif isinstance(action, Completed | Failed):
            handler = self._internal.pop(action.op, None)
            if handler is None:
                actions.append(action)
            else:
                handler(action, now)
        elif isinstance(action, FetchCompleted):
            self._ready = True
        elif isinstance(action, RefreshMetadata):
            self._want_refresh(action.topics)
        elif isinstance(action, CoordinatorMoved):
            actions.append(action)
        elif isinstance(action, CommitPositions):
            return self._commit_positions(action, now)
        elif isinstance(action, RevokePartitions | LosePartitions | AssignPartitions):
            self._rebalance_step(action, now)
        elif isinstance(action, PendingRevocation):
            self._pending_revocation(action.partitions)
        elif isinstance(action, PollNeeded):
            self._ready = True
        elif isinstance(action, GroupFailed):
            self._failures.append(action.error)
            self._ready = True
        elif isinstance(action, AutoCommitDone):
            self._auto_commit_done(action)
        return False

    def _timed(self, sent: SendRequest[Any], now: float) -> None:
        """Metrics of the group's requests: commits are timed, a JoinGroup opens a rebalance."""
        api = sent.api_key
        if api == ApiKey.OFFSET_COMMIT:
            self._commits[sent] = now
        elif api == ApiKey.JOIN_GROUP:
            self.metrics.rebalance_begun(now)

    def _commit_answered(self, sent: SendRequest[Any], now: float, failed: bool) -> None:
        self.metrics.committed(now - self._commits.pop(sent), failed)

    def _commit_positions(self, step: CommitPositions, now: float) -> bool:
        """The group commits before revoking or leaving: the consumed positions of `step`'s
        partitions (eager: they are pending revocation from now on)."""
        if step.pending_revocation:
            self._pending_revocation(step.partitions)
        consumed = self.consumed()
        offsets = {tp: consumed[tp] for tp in step.partitions if tp in consumed}
        assert self._member is not None
        self._member.listener_done(step.step, now, offsets)
        return True

    def _pending_revocation(self, partitions: Iterable[TopicPartition]) -> None:
        """No more records of `partitions` go out: their positions stay at the commit."""
        self.subscription.mark_pending_revocation(partitions)
        self._drop_buffered(set(partitions))

    def _rebalance_step(
        self, step: RevokePartitions | LosePartitions | AssignPartitions, now: float
    ) -> None:
        event: RebalanceEvent
        if isinstance(step, AssignPartitions):
            self.metrics.rebalance_ended(now)
            if self.subscription.type in _SUBSCRIBED:
                self.subscription.assign_from_subscribed(sorted(step.assignment))
                self._assignment_changed()
            event = PartitionsAssigned(step.step, step.added, step.assignment)
        elif isinstance(step, RevokePartitions):
            self.metrics.rebalance_begun(now)
            event = PartitionsRevoked(step.step, step.partitions)
        else:
            event = PartitionsLost(step.step, step.partitions)
        self._step = event
        self._events.append(event)
        self._ready = True

    def _auto_commit_done(self, done: AutoCommitDone) -> None:
        if done.error is not None:
            group = self._group().group_id
            log.warning("krafka consumer: auto-commit to %s failed: %s", group, done.error)
            self._events.append(AutoCommitFailed(dict(done.offsets), done.error, done.sent))
        elif done.offsets:
            self._events.append(OffsetsCommitted(dict(done.offsets), done.sent))

    def _unsubscribed(self, op: int, result: _Outcome) -> None:
        if isinstance(result, Failed):
            log.info("krafka consumer: leaving the group: %s", result.error)
        self.subscription.unsubscribe()
        self.buffer.clear()
        self._next_subscription_refresh = None
        self._events.append(Completed(op))
        self._ready = True

    # -- internals: positions and polls ---------------------------------------------------------

    def _may_ask_committed(self) -> bool:
        """Committed offsets are asked for once no assignment waits for its listener (which
        may seek), as Java updates positions after onPartitionsAssigned."""
        return self._committed_op is None and not isinstance(self._step, PartitionsAssigned)

    def _resolve_positions(self, now: float, actions: list[Any]) -> None:
        positions = self.positions
        if self._may_ask_committed():
            wanted = positions.committed_wanted(now)
            if wanted:
                group = self._group()
                op = group.fetch_committed(wanted, now, self.config.default_api_timeout)
                self._committed_op = op
                self._internal[op] = self._committed
                positions.committed_asked(wanted)
                self._run_group(group, now, actions)
        for sent in positions.actions(now):
            self._owners[sent] = positions
            actions.append(sent)
        stale = positions.stale_topics()
        if stale:
            self._want_refresh(frozenset(stale))

    def _committed(self, result: _Outcome, now: float) -> None:
        self._committed_op = None
        if isinstance(result, Failed):
            self.positions.committed_failed(result.error, now)
        else:
            self.positions.committed_found(result.value)

    def _polled(self, now: float) -> bool:
        """The application polled: the group learns it; a due auto-commit goes out; what it
        must see is raised. True when that gave the engine nothing new to do (`AfterPoll`);
        until `_poll_done`, `after_poll()` says `WAKE` (what a poll that raises leaves)."""
        self._after_poll = AfterPoll.WAKE
        self.metrics.polled(now)
        if self.subscription.type is SubscriptionType.NONE:
            raise IllegalStateError(
                "Consumer is not subscribed to any topics or assigned any partitions: call "
                "subscribe() or assign() before polling"
            )
        quiet = True
        member = self._member
        if member is not None and not member.closed and self.subscription.type in _SUBSCRIBED:
            quiet = not member.poll(now)
        if self._maybe_auto_commit(now):
            quiet = False
        self.raise_failure()
        return quiet

    def _poll_done(self, quiet: bool) -> None:
        """Settle `after_poll()` for a poll that returned; `quiet`: it took nothing and gave
        the engine nothing new to do."""
        if self.fetcher.drained:
            self._after_poll = AfterPoll.STEP
        else:
            self._after_poll = AfterPoll.NOTHING if quiet else AfterPoll.WAKE

    def _maybe_auto_commit(self, now: float) -> bool:
        """True when the poll was an auto-commit's due time (one may have been queued)."""
        if not self.config.auto_commit or self._closing is not None:
            return False
        due = self._next_auto_commit
        interval = self.config.group.auto_commit_interval if self.config.group else 0.0
        if due is None:
            self._next_auto_commit = now + interval
            return False
        if now < due:
            return False
        offsets = self.consumed()
        if not offsets or self._group().auto_commit(offsets, now) is not None:
            self._next_auto_commit = now + interval
        return True

    # -- internals: assignment and buffer -------------------------------------------------------

    def _assignment_changed(self) -> None:
        if self.buffer:
            assigned = self.subscription.assigned_partitions()
            self._drop_buffered(
                {TopicPartition(r.topic, r.partition) for r in self.buffer} - assigned
            )
        self._ready = True

    def _drop_buffered(self, partitions: set[TopicPartition]) -> None:
        buffer = self.buffer
        if partitions and buffer:
            kept = [r for r in buffer if (r.topic, r.partition) not in partitions]
            buffer.clear()  # in place: iterators hold this deque
            buffer.extend(kept)

    def _checked(
        self, offsets: Mapping[TopicPartition, OffsetAndMetadata | int]
    ) -> dict[TopicPartition, OffsetAndMetadata]:
        out = {}
        for tp, value in offsets.items():
            key = TopicPartition(*tp)
            if not self.subscription.is_assigned(key):
                raise IllegalStateError(f"cannot commit {key}: it is not assigned")
            out[key] = value if isinstance(value, OffsetAndMetadata) else OffsetAndMetadata(value)
        return out

    def _timeout(self, timeout: float | None) -> float:
        return self.config.default_api_timeout if timeout is None else timeout

    # -- internals: metadata --------------------------------------------------------------------

    def _want_refresh(self, topics: frozenset[str] | None) -> None:
        if topics is None:
            self._refresh_all = True
        elif not topics:
            return
        else:
            self._refresh_topics.update(topics)
        self._refresh_wanted = True

    def _refresh_subscription(self, now: float) -> None:
        """Subscribed topics are looked up again every `subscription_refresh` (at the retry
        backoff while one is missing), so patterns follow new topics and the group assigns a
        topic soon after it appears."""
        due = self._next_subscription_refresh
        if due is None or now < due or self.subscription.type not in _SUBSCRIBED:
            return
        self._next_subscription_refresh = None  # until the refresh's metadata arrives
        pattern = self.subscription.pattern
        self._want_refresh(None if pattern is not None else self.subscription.subscription())

    def _refuse_denied(self, topics: Iterable[str], kind: str) -> None:
        """Topics the principal may not describe fail the next poll, and again after each
        metadata refresh that still denies them (Java's TopicAuthorizationException from
        metadata), instead of leaving the consumer waiting for them."""
        errors = self.metadata.topic_errors
        denied = sorted(
            {t for t in topics if errors.get(t) == ErrorCode.TOPIC_AUTHORIZATION_FAILED}
        )
        refused = error_class(ErrorCode.TOPIC_AUTHORIZATION_FAILED)
        if denied and not any(isinstance(e, refused) for e in self._failures):
            self._failures.append(
                error_for_code(
                    ErrorCode.TOPIC_AUTHORIZATION_FAILED,
                    f"not authorized to describe {kind} topics: {', '.join(denied)}",
                )
            )
            self._ready = True

    def _refuse_missing(self, assigned: Iterable[TopicPartition]) -> None:
        """Assigned partitions the metadata says their topic does not have fail the next poll,
        naming the topic's partition count, and again after each refresh that still lacks them
        (they would otherwise wait for a leader for ever)."""
        counts = self.metadata.partition_counts
        missing = sorted(tp for tp in assigned if tp.partition >= counts.get(tp.topic, 1 << 31))
        refused = error_class(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
        if missing and not any(isinstance(e, refused) for e in self._failures):
            described = "; ".join(
                f"{tp} does not exist: {tp.topic!r} has {counts[tp.topic]} partitions "
                f"(0..{counts[tp.topic] - 1})"
                for tp in missing
            )
            self._failures.append(
                error_for_code(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"assigned {described}")
            )
            self._ready = True

    # -- internals: closing ---------------------------------------------------------------------

    def _group_closed(self, result: _Outcome, now: float) -> None:
        if isinstance(result, Failed):
            log.info("krafka consumer: leaving the group on close: %s", result.error)
        assert self._closing is not None
        self._closing.group_op = None

    def _final_commit(
        self, offsets: dict[TopicPartition, OffsetAndMetadata], result: _Outcome, sent: float
    ) -> None:
        if isinstance(result, Failed):
            log.warning("krafka consumer: the final auto-commit failed: %s", result.error)
            self._events.append(AutoCommitFailed(offsets, result.error, sent))
        else:
            self._events.append(OffsetsCommitted(offsets, sent))
        assert self._closing is not None
        self._closing.group_op = None

    def _close_progress(self, now: float, actions: list[Any]) -> None:
        closing = self._closing
        assert closing is not None
        if closing.done:
            return
        if closing.group_op is None and not closing.sessions_sent:
            closing.sessions_sent = True
            for sent in self.fetcher.close_requests():
                self._owners[sent] = self._sessions
                closing.sessions.add(sent)
                actions.append(sent)
        finished = closing.sessions_sent and not closing.sessions
        if finished or now >= closing.deadline:
            closing.done = True
            self._events.extend(Completed(op) for op in closing.ops)
            closing.ops.clear()

    def _session_closed(self, sent: SendRequest[Any]) -> None:
        if self._closing is not None:
            self._closing.sessions.discard(sent)


__all__ = ["AfterPoll", "ConsumerEngine"]
