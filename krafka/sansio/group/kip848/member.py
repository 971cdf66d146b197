"""A KIP-848 consumer-group member (`group_protocol="consumer"`) as one sans-IO machine.

Java's ConsumerMembershipManager + ConsumerHeartbeatRequestManager, with the driver API of the
classic `GroupMember`, so one io consumer drives either: the application's calls (`subscribe`,
`poll`, `update_topic_ids`, `commit`, `fetch_committed`, `leave`, `listener_done`) each with
`now`; out come heartbeats, commits, listener steps (`events.CommitPositions`,
`RevokePartitions`, `AssignPartitions`, `LosePartitions`), notices (`GroupFailed`,
`RefreshMetadata`, `AutoCommitDone`, `PendingRevocation`) and operation
outcomes. The coordinator assigns; the member reconciles (`membership_flows`) and acknowledges.

Heartbeat errors, beyond the shared table (`membership`): STALE_MEMBER_EPOCH takes the epoch
the answer carries and retries (rejoins when it carries none); UNRELEASED_INSTANCE_ID is a race
with the member's own previous incarnation for up to three rejoins (franz-go), then fatal;
REBALANCE_IN_PROGRESS is retried; UNSUPPORTED_ASSIGNOR, INVALID_REGULAR_EXPRESSION,
GROUP_AUTHORIZATION_FAILED, FENCED_INSTANCE_ID and anything unknown are fatal (Java).

Offsets are committed through `OffsetClient` with OffsetCommit carrying the member id and the
member epoch (v9 for KIP-848 groups; the epoch goes in GenerationIdOrMemberEpoch).
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from typing import Any, Final

from krafka.errors import (
    CommitFailedError,
    FencedInstanceIdError,
    InvalidStateError,
    KrafkaError,
    error_for_code,
)
from krafka.protocol import ApiKey
from krafka.protocol.error_codes import ErrorCode
from krafka.protocol.messages import ConsumerGroupHeartbeatRequest
from krafka.sansio.actions import Completed, Failed, SendRequest, Versioned, next_op
from krafka.sansio.backoff import BackoffPolicy
from krafka.sansio.codes import code_name
from krafka.sansio.group.config import GroupConfig
from krafka.sansio.group.events import (
    AssignPartitions,
    AutoCommitDone,
    CommitPositions,
    CommitReason,
    GroupMembershipOperation,
    LeaveReason,
    LosePartitions,
    Partitions,
    PendingRevocation,
    PollNeeded,
    RevokePartitions,
    Step,
)
from krafka.sansio.group.kip848.heartbeat import MemberFields, SentFields, min_version
from krafka.sansio.group.membership.assignment import Resolved
from krafka.sansio.group.membership.flows import ReleaseKind
from krafka.sansio.group.membership.member import Membership, new_member_id
from krafka.sansio.group.membership.state import MembershipState
from krafka.sansio.group.offsets.client import OffsetClient
from krafka.sansio.group.offsets.wire import CommitIdentity
from krafka.structs import ConsumerGroupMetadata, OffsetAndMetadata, TopicPartition

S = MembershipState
#: UNRELEASED_INSTANCE_ID right after a static member's own fencing is a race it wins by
#: rejoining; past this many in a row another process holds the instance id.
MAX_UNRELEASED_INSTANCE_RETRIES: Final = 3
_INT32_MAX: Final = 2**31 - 1


class ConsumerMember(Membership):
    """One member of a KIP-848 consumer group."""

    def __init__(
        self,
        config: GroupConfig,
        *,
        server_assignor: str | None = None,
        member_id: str | None = None,
        rand: Callable[[], float] = random.random,
        new_id: Callable[[], str] = new_member_id,
    ) -> None:
        policy = BackoffPolicy(
            initial=config.retry_backoff, maximum=config.retry_backoff_max, max_retries=None
        )
        super().__init__(
            config.group_id,
            max_poll_interval=config.max_poll_interval,
            backoff=policy,
            static=config.group_instance_id is not None,
            member_id=member_id,
            rand=rand,
            new_id=new_id,
        )
        self.config = config
        self.server_assignor = server_assignor
        self._topics: frozenset[str] = frozenset()
        self._pattern: str | None = None
        self._sent = SentFields()
        self._offsets = OffsetClient(
            config.group_id,
            self.coordinator,
            self,
            backoff=policy,
            require_stable=config.require_stable,
            rand=rand,
        )
        self._step: Step | None = None
        self._step_in_flow = False
        self._commits: dict[int, tuple[dict[TopicPartition, OffsetAndMetadata], bool, float]] = {}
        self._close_when_left = False
        self._unreleased = 0
        self._poll_announced = False

    # -- what the driver may read ---------------------------------------------------------------

    @property
    def subscribed(self) -> bool:
        return bool(self._topics) or self._pattern is not None

    @property
    def auto_commit_enabled(self) -> bool:
        return self.config.enable_auto_commit

    def assignment(self) -> Partitions:
        """The partitions this member owns now (until a revoke or lose step is answered)."""
        return self.flows.owned

    def subscription(self) -> frozenset[str]:
        return self._topics

    def group_metadata(self) -> ConsumerGroupMetadata:
        """For `Producer.send_offsets_to_transaction` (the member epoch is the generation)."""
        epoch = self.member_epoch if self.member_epoch > 0 else -1
        return ConsumerGroupMetadata(
            self.group_id, epoch, self.member_id, self.config.group_instance_id
        )

    # -- the application's calls ----------------------------------------------------------------

    def subscribe(self, topics: Iterable[str] | re.Pattern[str], now: float) -> None:
        """Replace the subscription: topic names, or a pattern the coordinator resolves
        (SubscribedTopicRegex, v1, RE2/J syntax). The member joins at the next poll; a member in
        the group sends the change with its next heartbeat."""
        self._require_open()
        if isinstance(topics, re.Pattern):
            names, pattern = frozenset[str](), topics.pattern
        else:
            names, pattern = frozenset(topics), None
            if not names:
                raise ValueError("subscribe to at least one topic (or use leave to unsubscribe)")
        if (names, pattern) != (self._topics, self._pattern):
            self._topics, self._pattern = names, pattern
            self.subscription_updated = True

    def poll(self, now: float) -> bool:
        """The application polled: the poll interval restarts, joining starts after a
        subscribe, a stale member rejoins, a reconciliation may start (it commits positions
        first when auto-commit is on). False when a stable member with nothing under way or
        announced has nothing to start (its driver need not step now)."""
        self._require_open()
        stirred = (
            self.state is not S.STABLE
            or self._poll_announced
            or self.poll_expired
            or self.subscription_updated
            or self._step is not None
            or self.flows.busy
        )
        self.polled(now)
        self._poll_announced = False
        if self._step is None:
            self.flows.advance(self, can_commit=True)
        return stirred or self.state is not S.STABLE

    def auto_commit(
        self, offsets: Mapping[TopicPartition, OffsetAndMetadata], now: float
    ) -> int | None:
        """Commit the consumed positions `offsets` as an automatic commit (its driver decides
        when one is due), if the member may now: STABLE, owning partitions, no reconciliation
        or step under way. Its outcome comes as an `AutoCommitDone`; None: not now."""
        if self.state is not S.STABLE or self._step is not None or self.flows.busy:
            return None
        wanted = {tp: om for tp, om in offsets.items() if tp in self.flows.owned}
        if not wanted:
            return None
        op = self._offsets.commit(wanted, now, self._commit_timeout(CommitReason.INTERVAL))
        self._commits[op] = (wanted, False, now)
        return op

    def commit(
        self,
        offsets: Mapping[TopicPartition, OffsetAndMetadata],
        now: float,
        timeout: float | None = None,
    ) -> int:
        """Commit `offsets` of owned partitions (others are left out); completes with what was
        committed."""
        if self.closed:
            return self._failed(InvalidStateError("the group member is closed"))
        owned = {tp: om for tp, om in offsets.items() if tp in self.flows.owned}
        return self._offsets.commit(owned, now, self._timeout(timeout))

    def fetch_committed(
        self, partitions: Iterable[TopicPartition], now: float, timeout: float | None = None
    ) -> int:
        """The group's committed offsets of `partitions` ({tp: OffsetAndMetadata | None})."""
        return self._offsets.fetch(partitions, now, self._timeout(timeout))

    def leave(
        self,
        now: float,
        *,
        reason: LeaveReason = LeaveReason.CLOSE,
        operation: GroupMembershipOperation = GroupMembershipOperation.DEFAULT,
    ) -> int:
        """Leave: [auto-commit, on close] -> revoke (or lose, without an epoch) -> a heartbeat
        with epoch -1 (-2 for a static member unless a close's `operation` is LEAVE_GROUP).
        Completes once that heartbeat is answered (or could not be sent: no coordinator)."""
        op = next_op()
        close = reason is LeaveReason.CLOSE
        self.leave_operation = operation if close else GroupMembershipOperation.DEFAULT
        if self.closed:
            self.events.append(Completed(op))
            return op
        self._close_when_left |= close
        if self.state.leaving:
            self.leave_ops.append(op)
            return op
        if not self.state.in_group:
            if self.state is S.FENCED:
                self.clear_assignment()
                self.move(S.UNSUBSCRIBED)
            self.left()
            self.events.append(Completed(op))
            self.closed = self.closed or close
            return op
        self.leave_ops.append(op)
        self.move(S.PREPARE_LEAVING)
        self.flows.release(ReleaseKind.LEAVE, close=close)
        return op

    def listener_done(
        self,
        step: int,
        now: float,
        offsets: Mapping[TopicPartition, OffsetAndMetadata] | None = None,
        error: BaseException | None = None,
    ) -> None:
        """The driver carried out step `step`: for `CommitPositions` with the positions to
        commit; `error` is what the application's listener raised (no acknowledgement then:
        the reconciliation is tried again after the next poll)."""
        current = self._step
        if current is None or current.step != step:
            raise InvalidStateError(f"step {step} is not the outstanding listener step")
        self._step = None
        in_flow, self._step_in_flow = self._step_in_flow, False
        if not isinstance(current, CommitPositions):
            self.flows.step_done(failed=error is not None)
            self.flows.advance(self, can_commit=not self.auto_commit_enabled)
            return
        wanted = {tp: om for tp, om in (offsets or {}).items() if tp in self.flows.owned}
        if not wanted:
            if in_flow:
                self.flows.step_done()
            return
        op = self._offsets.commit(wanted, now, self._commit_timeout(current.reason))
        self._commits[op] = (wanted, in_flow, now)

    # -- the contract ---------------------------------------------------------------------------

    def next_actions(self, now: float) -> list[Any]:
        actions: list[Any] = []
        for item in self._offsets.next_actions(now):
            if isinstance(item, Completed | Failed) and item.op in self._commits:
                self._commit_finished(item)
            else:
                actions.append(item)
        if self._step is None:
            self.flows.advance(self, can_commit=not self.auto_commit_enabled)
        actions += self.heartbeat_actions(now)
        self._maybe_closed()
        actions[:0], self.events = self.events, []
        return actions

    def next_deadline(self) -> float | None:
        times = [self.heartbeat_deadline(), self._offsets.next_deadline()]
        return min((t for t in times if t is not None), default=None)

    def on_response(self, sent: SendRequest[Any], response: Any, now: float) -> None:
        if self._offsets.owns(sent):
            self._offsets.on_response(sent, response, now)
        elif self.owns_heartbeat(sent):
            self.heartbeat_response(sent, response, now)

    def on_failure(self, sent: SendRequest[Any], error: KrafkaError, now: float) -> None:
        if self._offsets.owns(sent):
            self._offsets.on_failure(sent, error, now)
        elif self.owns_heartbeat(sent):
            self.heartbeat_failure(sent, error, now)

    # -- CommitPolicy (for the offset client) ---------------------------------------------------

    def commit_identity(self) -> CommitIdentity:
        """Commits carry the member id and epoch (none before the member has an epoch)."""
        if self.member_epoch > 0:
            return CommitIdentity(self.member_epoch, self.member_id, self.config.group_instance_id)
        return CommitIdentity(group_instance_id=self.config.group_instance_id)

    def commit_refused(self, code: int, sent: CommitIdentity) -> KrafkaError:
        if code == ErrorCode.FENCED_INSTANCE_ID:
            return FencedInstanceIdError(
                f"the group instance id {self.config.group_instance_id!r} was fenced by "
                "another consumer with the same group_instance_id"
            )
        if code in (ErrorCode.UNKNOWN_MEMBER_ID, ErrorCode.ILLEGAL_GENERATION):
            return CommitFailedError(
                f"Offset commit failed with {code_name(code)}: member {sent.member_id!r} "
                f"(epoch {sent.generation_id}) is not part of the group; its partitions may "
                "already belong to another member"
            )
        return error_for_code(code)

    # -- Steps (for membership_flows) -----------------------------------------------------------

    def issue_commit(self, reason: CommitReason) -> bool:
        self._issue(CommitPositions(self._step_id(), self.flows.owned, reason), in_flow=True)
        return True

    def issue_revoke(self, partitions: Partitions) -> bool:
        self._issue(RevokePartitions(self._step_id(), partitions, self.member_epoch), True)
        return True

    def issue_assign(self, added: Partitions, assignment: Partitions, resolved: Resolved) -> bool:
        step = AssignPartitions(self._step_id(), added, assignment, self.member_epoch)
        self._issue(step, in_flow=True)
        return True

    def issue_lose(self, partitions: Partitions, reason: str) -> bool:
        self._issue(LosePartitions(self._step_id(), partitions, reason), in_flow=True)
        return True

    def pending_revocation(self, partitions: Partitions) -> None:
        self.events.append(PendingRevocation(partitions))

    def poll_needed(self) -> None:
        """Announced once until the next poll: a waiting poll runs the reconciliation."""
        if not self._poll_announced:
            self._poll_announced = True
            self.events.append(PollNeeded())

    def left(self) -> None:
        """The leave released the partitions: the subscription ends (Java's unsubscribe)."""
        self._topics, self._pattern = frozenset(), None
        self.subscription_updated = False

    # -- Membership hooks -----------------------------------------------------------------------

    def _heartbeat_body(self, now: float) -> tuple[Any, int | None]:
        fields = MemberFields(
            group_id=self.group_id,
            member_id=self.member_id,
            member_epoch=self.member_epoch,
            instance_id=self.config.group_instance_id,
            rack_id=self.config.client_rack,
            rebalance_timeout_ms=min(int(self.config.rebalance_timeout_s * 1000), _INT32_MAX),
            topics=self._topics,
            pattern=self._pattern,
            server_assignor=self.server_assignor,
            assignment=self.current,
            reported=self.current.partitions | self.flows.in_flight,
        )
        request = self._sent.build(fields, full=self.state is S.JOINING)
        wanted = min_version(self._sent, fields)
        if request.subscribed_topic_regex != "" or wanted is not None:
            return request, wanted

        def build(version: int) -> ConsumerGroupHeartbeatRequest:
            # v0 has no regex field: an empty one ("no pattern") is left out there
            return request if version >= 1 else replace(request, subscribed_topic_regex=None)

        return Versioned(ApiKey.CONSUMER_GROUP_HEARTBEAT, build), wanted

    def _reset_sent_fields(self) -> None:
        self._sent.reset()

    def _answered(self, response: Any, now: float) -> None:
        self._unreleased = 0

    def _specific_error(self, code: int, response: Any, now: float) -> bool:
        if code == ErrorCode.STALE_MEMBER_EPOCH:
            epoch = int(response.member_epoch)
            if epoch > 0 and self.state.in_group and not self.state.leaving:
                self.member_epoch = epoch
            else:
                self.to_fenced()
            return True
        if code == ErrorCode.UNRELEASED_INSTANCE_ID:
            self._unreleased += 1
            if self._unreleased > MAX_UNRELEASED_INSTANCE_RETRIES:
                return False
            self.to_fenced()
            return True
        return code == ErrorCode.REBALANCE_IN_PROGRESS

    def _fatal_message(self, code: int, message: str | None) -> str:
        if code == ErrorCode.UNSUPPORTED_VERSION:
            return (
                "The cluster does not support the consumer group protocol (KIP-848); use "
                'group_protocol="classic" until it is upgraded'
            )
        return super()._fatal_message(code, message)

    # -- internals ------------------------------------------------------------------------------

    def _issue(self, step: Step, in_flow: bool) -> None:
        assert self._step is None, f"step {self._step} is still outstanding"
        self._step, self._step_in_flow = step, in_flow
        self.events.append(step)

    def _step_id(self) -> int:
        return next_op()

    def _commit_finished(self, result: Completed | Failed) -> None:
        offsets, in_flow, sent = self._commits.pop(result.op)
        error = result.error if isinstance(result, Failed) else None
        self.events.append(AutoCommitDone(offsets, error, sent))
        if isinstance(error, FencedInstanceIdError):
            self.to_fatal(error)
        if in_flow:
            self.flows.step_done()

    def _commit_timeout(self, reason: CommitReason) -> float:
        config = self.config
        if reason is CommitReason.REBALANCE:
            return config.rebalance_timeout_s
        if reason is CommitReason.LEAVE:
            return config.default_api_timeout
        return min(config.auto_commit_interval, config.default_api_timeout)

    def _maybe_closed(self) -> None:
        """A close is over once its leave finished, however it finished."""
        busy = self.leave_ops or self.state.leaving or self.flows.busy
        if self._close_when_left and not busy:
            self.closed = True
            self._close_when_left = False

    def _timeout(self, timeout: float | None) -> float:
        return self.config.default_api_timeout if timeout is None else timeout

    def _failed(self, error: KrafkaError) -> int:
        op = next_op()
        self.events.append(Failed(op, error))
        return op

    def _require_open(self) -> None:
        if self.closed:
            raise InvalidStateError("the group member is closed")


__all__ = ["MAX_UNRELEASED_INSTANCE_RETRIES", "ConsumerMember"]
