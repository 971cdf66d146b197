"""A classic consumer-group member as one sans-IO machine (Java's ConsumerCoordinator).

It speaks the contract of `krafka.sansio.actions`; its driver (the consumer engine,
`krafka.sansio.consumer.engine`) feeds it:

* the application's calls, each with `now`: `subscribe`, `poll` (the application polled: the
  poll interval restarts and a rebalance may start, as in Java), `update_metadata`, `commit`,
  `fetch_committed`, `leave` (close or unsubscribe), and `listener_done` answering a step;
* the answers to the requests it asked for, and the passing of time (`next_actions(now)`).

Out come `SendRequest`s to `Coordinator(group_id)` (heartbeats at HIGH priority), operation
outcomes (`Completed`/`Failed`), listener steps to run and answer (`events.Step`), notices
(`GroupFailed`, `RefreshMetadata`, `AutoCommitDone`; see `krafka.sansio.group.events`) and
`CoordinatorMoved` when an answer says the coordinator moved.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from krafka.errors import InvalidStateError, KrafkaError
from krafka.sansio.actions import Completed, RefreshMetadata, SendRequest, next_op
from krafka.sansio.group.classic.assignors import PartitionAssignor, RebalanceProtocol
from krafka.sansio.group.classic.commits import MemberCommits
from krafka.sansio.group.classic.core import MemberCore
from krafka.sansio.group.classic.flows import CompleteFlow, LeaveFlow, PrepareFlow
from krafka.sansio.group.classic.liveness import Liveness
from krafka.sansio.group.classic.rebalance import Rebalance
from krafka.sansio.group.classic.state import Generation, MemberState
from krafka.sansio.group.config import GroupConfig
from krafka.sansio.group.events import (
    GroupMembershipOperation,
    LeaveReason,
    LosePartitions,
    Partitions,
    Step,
)
from krafka.sansio.group.offsets.client import Committed
from krafka.structs import ConsumerGroupMetadata, OffsetAndMetadata, TopicPartition

Flow = PrepareFlow | CompleteFlow | LeaveFlow


class GroupMember:
    """One member of a classic consumer group (`group_protocol="classic"`)."""

    def __init__(
        self,
        config: GroupConfig,
        assignors: Sequence[PartitionAssignor],
        *,
        rand: Callable[[], float] = random.random,
    ) -> None:
        self.config = config
        self._core = core = MemberCore(config, list(assignors), rand)
        self._liveness = Liveness(core)
        self._rebalance = Rebalance(core)
        self._commits = MemberCommits(core)
        self._prepare: PrepareFlow | None = None
        self._complete: CompleteFlow | None = None
        self._leave: LeaveFlow | None = None
        self._step_owner: Flow | None = None

    # -- what the driver may read ---------------------------------------------------------------

    @property
    def state(self) -> MemberState:
        return self._core.state

    @property
    def generation(self) -> Generation:
        return self._core.generation

    @property
    def rebalance_protocol(self) -> RebalanceProtocol:
        return self._core.protocol

    @property
    def is_leader(self) -> bool:
        return self._rebalance.is_leader and self._core.state is MemberState.STABLE

    @property
    def closed(self) -> bool:
        return self._core.closed

    def assignment(self) -> Partitions:
        """The partitions this member owns now (until a revoke or lose step is answered)."""
        return self._core.owned

    def subscription(self) -> frozenset[str]:
        return self._core.subscription.subscribed()

    def group_metadata(self) -> ConsumerGroupMetadata:
        """For `Producer.send_offsets_to_transaction`: the generation whose assignment was last
        applied (Java's), so the broker refuses the commits of a member fenced since."""
        generation = self._core.applied
        return ConsumerGroupMetadata(
            self.config.group_id,
            generation.generation_id,
            generation.member_id,
            self.config.group_instance_id,
        )

    # -- the application's calls ----------------------------------------------------------------

    def subscribe(self, topics: Iterable[str] | re.Pattern[str], now: float) -> None:
        """Replace the subscription (topic names or a pattern); the group is rejoined at the next
        poll if the topic set changed."""
        core = self._require_open()
        if not isinstance(topics, re.Pattern):
            topics = frozenset(topics)
            if not topics:
                raise ValueError("subscribe to at least one topic (or leave to unsubscribe)")
        was_active = core.subscription.active
        core.subscription.subscribe(topics)
        if isinstance(topics, re.Pattern):
            core.events.append(RefreshMetadata(None))
        if not was_active:
            core.request_rejoin("subscribed")

    def poll(self, now: float) -> bool:
        """The application polled: the poll interval restarts; a due rebalance may start.
        False when a stable member has nothing to start (its driver need not step now)."""
        core = self._core
        core.clock.polled(now)
        core.polled = True
        return core.rejoin_needed or core.state is not MemberState.STABLE

    def auto_commit(
        self, offsets: Mapping[TopicPartition, OffsetAndMetadata], now: float
    ) -> int | None:
        """Commit the consumed positions `offsets` as an automatic commit (its driver decides
        when one is due), if the member may now: STABLE, owning partitions, no rebalance step
        or flow under way. Its outcome comes as an `AutoCommitDone`; None: not now."""
        core = self._core
        flows = (self._prepare, self._complete, self._leave)
        busy = any(f is not None and not f.done for f in flows)
        if core.state is not MemberState.STABLE or core.step is not None or busy:
            return None
        timeout = min(core.config.auto_commit_interval, core.config.default_api_timeout)
        return self._commits.auto(offsets, now, timeout)

    def update_metadata(
        self,
        partitions: Mapping[str, int],
        now: float,
        racks: Mapping[TopicPartition, frozenset[str]] | None = None,
    ) -> None:
        """The driver's whole current view of topics (name -> partition count) and, for
        rack-aware assignors, the racks of each partition's replicas."""
        self._core.subscription.update(partitions, racks or {})

    def commit(
        self,
        offsets: Mapping[TopicPartition, OffsetAndMetadata],
        now: float,
        timeout: float | None = None,
    ) -> int:
        """Commit `offsets` of owned partitions (others are left out); completes with what was
        committed. Fails with RebalanceInProgressError or CommitFailedError as Java does."""
        return self._commits.commit(offsets, now, self._timeout(timeout))

    def fetch_committed(
        self, partitions: Iterable[TopicPartition], now: float, timeout: float | None = None
    ) -> int:
        """The group's committed offsets of `partitions` ({tp: OffsetAndMetadata | None})."""
        return self._commits.fetch(partitions, now, self._timeout(timeout))

    def leave(
        self,
        now: float,
        *,
        reason: LeaveReason = LeaveReason.CLOSE,
        timeout: float | None = None,
        operation: GroupMembershipOperation = GroupMembershipOperation.DEFAULT,
    ) -> int:
        """Leave the group: auto-commit (on close), revoke or lose the partitions, LeaveGroup
        (dynamic members; on close as `operation` says). Completes after the LeaveGroup answer;
        fails with its error (the member has left all the same)."""
        core = self._core
        op = next_op()
        close = reason is LeaveReason.CLOSE
        if self._leave is not None:
            self._leave.ops.append(op)
            self._leave.close |= close
            if close:
                self._leave.operation = operation
            return op
        if core.closed:
            core.events.append(Completed(op))
            return op
        self._leave = LeaveFlow(
            core,
            self._commits,
            op,
            now + self._timeout(timeout),
            close=close,
            reason=f"the consumer is being {'closed' if close else 'unsubscribed'}",
            operation=operation,
        )
        self._rebalance.abandon()
        self._prepare = self._complete = None
        core.cycle = False
        if not close:
            core.subscription.unsubscribe()
        return op

    def listener_done(
        self,
        step: int,
        now: float,
        offsets: Mapping[TopicPartition, OffsetAndMetadata] | None = None,
    ) -> None:
        """The driver carried out step `step` (for `CommitPositions`, with the positions)."""
        core = self._core
        current = core.step
        if current is None or current.step != step:
            raise InvalidStateError(f"step {step} is not the outstanding listener step")
        core.step = None
        owner, self._step_owner = self._step_owner, None
        given = dict(offsets or {})
        if owner is not None:
            owner.step_done(current, given, now)
        elif isinstance(current, LosePartitions):
            core.drop(current.partitions)

    # -- the contract ---------------------------------------------------------------------------

    def next_actions(self, now: float) -> list[Any]:
        core = self._core
        actions: list[Any] = []
        actions += self._liveness.check(now)
        actions += self._commits.next_actions(now)
        self._advance(now, actions)
        actions += core.coordinator.actions()
        actions[:0], core.events = core.events, []
        return actions

    def next_deadline(self) -> float | None:
        times = [
            self._liveness.next_deadline(),
            self._commits.client.next_deadline(),
            self._rebalance.next_deadline() if self._may_rebalance() else None,
        ]
        return min((t for t in times if t is not None), default=None)

    def on_response(self, sent: SendRequest[Any], response: Any, now: float) -> None:
        core = self._core
        if self._liveness.owns(sent):
            self._liveness.on_response(sent, response, now)
        elif self._rebalance.owns(sent):
            self._rebalance.on_response(sent, response, now)
            if self._rebalance.synced is not None:
                self._complete = CompleteFlow(
                    core, self._commits, self._rebalance, self._rebalance.synced
                )
                self._rebalance.synced = None
        elif self._commits.client.owns(sent):
            self._commits.client.on_response(sent, response, now)
        elif self._leave is not None and self._leave.owns(sent):
            self._leave.on_response(response)

    def on_failure(self, sent: SendRequest[Any], error: KrafkaError, now: float) -> None:
        if self._liveness.owns(sent):
            self._liveness.on_failure(sent, error, now)
        elif self._rebalance.owns(sent):
            self._rebalance.on_failure(sent, error, now)
        elif self._commits.client.owns(sent):
            self._commits.client.on_failure(sent, error, now)
        elif self._leave is not None and self._leave.owns(sent):
            self._leave.finish(error)

    # -- internals ------------------------------------------------------------------------------

    @property
    def _flows_busy(self) -> bool:
        return any(f is not None for f in (self._prepare, self._complete, self._leave))

    def _advance(self, now: float, actions: list[Any]) -> None:
        """Move the flows along; start a rebalance cycle when one is due; send JoinGroup or
        SyncGroup when nothing else must happen first."""
        core = self._core
        while core.step is None:
            before = (core.step, core.state, self._prepare, self._complete, self._leave)
            self._advance_once(now, actions)
            if (core.step, core.state, self._prepare, self._complete, self._leave) == before:
                break
        if self._may_rebalance():
            request = self._rebalance.next_request(now)
            if request is not None:
                actions.append(request)

    def _may_rebalance(self) -> bool:
        """JoinGroup or SyncGroup may go when nothing else must happen first."""
        core = self._core
        return core.cycle and core.step is None and not self._flows_busy and not core.needs_prepare

    def _advance_once(self, now: float, actions: list[Any]) -> None:
        core = self._core
        if core.lost_pending:
            core.lose_step(self._liveness.lost_reason or "the member lost its generation")
            self._step_owner = None
            return
        if self._leave is not None:
            actions += self._leave.advance(now)
            self._owner_if_step(self._leave)
            if self._leave.done:
                self._left()
            return
        if self._complete is not None:
            self._complete.advance(now)
            self._owner_if_step(self._complete)
            if self._complete.done:
                self._complete = None
                core.cycle = core.cycle and core.rejoin_needed
            return
        if self._prepare is not None and self._prepare.done:
            self._prepare = None
            return
        self._maybe_start_cycle()
        if core.cycle and core.needs_prepare and not self._rebalance.in_flight:
            if self._prepare is None:
                deadline = now + core.config.rebalance_timeout_s
                self._prepare = PrepareFlow(core, self._commits, deadline)
            self._prepare.advance(now)
            self._owner_if_step(self._prepare)
            if self._prepare.done:
                self._prepare = None

    def _maybe_start_cycle(self) -> None:
        core = self._core
        sub = core.subscription
        if core.closed or not sub.active:
            return
        if sub.changed_since_join():
            core.request_rejoin("the subscription changed")
        if self._rebalance.is_leader and sub.metadata_changed_since_assignment():
            core.request_rejoin("the metadata of the group's topics changed")
            sub.forget_assignment()
        if not core.cycle and core.rejoin_needed and core.polled and sub.ready_to_join:
            core.cycle = True
            core.polled = False

    def _owner_if_step(self, flow: Flow) -> None:
        if self._core.step is not None and self._step_owner is None:
            self._step_owner = flow

    def _left(self) -> None:
        leave, self._leave = self._leave, None
        assert leave is not None
        core = self._core
        core.closed = leave.close
        core.rejoin_needed = not leave.close
        self._rebalance.is_leader = False

    def _timeout(self, timeout: float | None) -> float:
        return self.config.default_api_timeout if timeout is None else timeout

    def _require_open(self) -> MemberCore:
        if self._core.closed:
            raise InvalidStateError("the group member is closed")
        return self._core


__all__ = ["Committed", "GroupMember", "LeaveReason", "Step"]
