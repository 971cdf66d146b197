"""What a KIP-848 consumer-group member and a KIP-932 share-group member share (Java's
AbstractMembershipManager and AbstractHeartbeatRequestManager), as one sans-IO base.

The member makes its own id (KIP-1082: a random UUID, kept across rejoins) and heartbeats to
the group coordinator (`Coordinator(group_id)`): at once while JOINING, ACKNOWLEDGING or LEAVING,
else at the coordinator's interval. An answer moves the member epoch and may carry a target
assignment (topic ids), which the member reconciles (`membership_flows`) and acknowledges with
its next heartbeat. Fencing releases the partitions as *lost* and rejoins at epoch 0; an error
retrying cannot fix makes the member FATAL (terminal); `leave` releases the partitions and
sends a heartbeat with the leave epoch; not polling for `max_poll_interval` sends that leave at
once and makes the member STALE until the application polls again.

Subclasses build the heartbeat (`_heartbeat_body`), forget what was sent (`_reset_sent_fields`)
and handle their protocol's own error codes (`_specific_error`); the listener steps of a
reconciliation are theirs too (`membership_flows.Flows`).
"""

from __future__ import annotations

import base64
import logging
import random
import uuid
from collections.abc import Callable, Mapping
from typing import Any, Final

from krafka.errors import KrafkaError, error_for_code
from krafka.protocol.error_codes import ErrorCode
from krafka.sansio.actions import Completed, RefreshMetadata, SendRequest
from krafka.sansio.backoff import BackoffPolicy
from krafka.sansio.codes import code_name
from krafka.sansio.connection import Priority
from krafka.sansio.group.coordinator import GroupCoordinator
from krafka.sansio.group.events import GroupFailed, GroupMembershipOperation
from krafka.sansio.group.membership.assignment import (
    NO_ASSIGNMENT,
    IdPartitions,
    LocalAssignment,
    TopicNames,
    from_response,
)
from krafka.sansio.group.membership.flows import Flows, ReleaseKind
from krafka.sansio.group.membership.heartbeat_timer import HeartbeatTimer
from krafka.sansio.group.membership.state import MembershipState, check_move
from krafka.sansio.transitions import transition

log = logging.getLogger("krafka.group")
S = MembershipState
JOIN_EPOCH: Final = 0
LEAVE_EPOCH: Final = -1
STATIC_LEAVE_EPOCH: Final = -2


def new_member_id() -> str:
    """A member id as KIP-1082 asks, made by the client as Java's `Uuid.randomUuid()`: a random
    (v4) UUID in base64url without padding, never one starting with "-" (a command-line
    option to Kafka's tools)."""
    while True:
        encoded = base64.urlsafe_b64encode(uuid.uuid4().bytes).rstrip(b"=").decode()
        if not encoded.startswith("-"):
            return encoded


class Membership:
    """The membership of one group: states, epochs, heartbeats, errors, leaving."""

    def __init__(
        self,
        group_id: str,
        *,
        max_poll_interval: float,
        backoff: BackoffPolicy,
        static: bool = False,
        member_id: str | None = None,
        rand: Callable[[], float] = random.random,
        new_id: Callable[[], str] = new_member_id,
    ) -> None:
        self.group_id = group_id
        self.static = static
        self.member_id = member_id if member_id is not None else new_id()
        self.member_epoch = JOIN_EPOCH
        self.state = S.UNSUBSCRIBED
        self.max_poll_interval = max_poll_interval
        self.coordinator = GroupCoordinator(group_id)
        self.timer = HeartbeatTimer(backoff, rand)
        self.target: LocalAssignment = NO_ASSIGNMENT
        self.current: LocalAssignment = NO_ASSIGNMENT
        self.names = TopicNames()
        self.events: list[Any] = []
        self.flows = Flows(self)
        self.closed = False
        self.subscription_updated = False
        self.poll_deadline = float("inf")
        self.poll_expired = False
        self.leave_ops: list[int] = []
        #: How a close leaves (KIP-1092); an unsubscribe or a poll timeout always leaves.
        self.leave_operation = GroupMembershipOperation.DEFAULT
        self._heartbeat: SendRequest[Any] | None = None
        self._leaves: list[SendRequest[Any]] = []
        self._metadata_asked = False

    # -- hooks for the protocol ---------------------------------------------------------------

    def _heartbeat_body(self, now: float) -> tuple[Any, int | None]:
        """The heartbeat request to send now and the lowest version it needs (or None)."""
        raise NotImplementedError

    def _reset_sent_fields(self) -> None:
        """After any failure the next heartbeat carries every field again."""
        raise NotImplementedError

    def _specific_error(self, code: int, response: Any, now: float) -> bool:
        """Handle a code only this protocol knows; False: the base table decides (fatal)."""
        return False

    def _fatal_message(self, code: int, message: str | None) -> str:
        detail = f": {message}" if message else ""
        return f"heartbeat of group {self.group_id!r} failed with {code_name(code)}{detail}"

    @property
    def subscribed(self) -> bool:
        """The member has a subscription (it may join)."""
        raise NotImplementedError

    @property
    def leave_epoch(self) -> int:
        """The epoch of the leave heartbeat (Java's leaveGroupEpoch): a static member's says it
        comes back (-2) unless told to LEAVE_GROUP; a dynamic member always leaves (-1), even
        told to REMAIN_IN_GROUP: the coordinator has no way for it to stay."""
        if self.static and self.leave_operation is not GroupMembershipOperation.LEAVE_GROUP:
            return STATIC_LEAVE_EPOCH
        return LEAVE_EPOCH

    # -- inputs shared by both protocols -----------------------------------------------------

    def update_topic_ids(self, ids: Mapping[str, uuid.UUID], now: float) -> None:
        """The driver's metadata: topic name -> topic id (Metadata v10+), for resolving the
        topic ids of assignments."""
        self.names.update(ids)
        self._metadata_asked = False

    def polled(self, now: float) -> None:
        """The application polled: the poll interval restarts, a stale member rejoins, a new
        subscription starts joining."""
        self.poll_deadline = now + self.max_poll_interval
        self.flows.polled()
        if self.poll_expired or self.state is S.STALE:
            self.poll_expired = False
            if self.subscribed:
                self.flows.rejoin_when_released()
        if self.subscription_updated and self.state is S.UNSUBSCRIBED:
            self.subscription_updated = False
            self.to_joining()

    # -- the contract -----------------------------------------------------------------------------

    def heartbeat_actions(self, now: float) -> list[Any]:
        """Heartbeats and leave heartbeats due at `now`, and coordinator moves to report."""
        actions: list[Any] = self.coordinator.actions()
        if not self.state.heartbeats:
            return actions
        if now >= self.poll_deadline and not self.state.leaving:
            log.warning(
                "group %r: the application did not poll within max_poll_interval (%ss); "
                "leaving the group",
                self.group_id,
                self.max_poll_interval,
            )
            self.to_sending_leave(stale=True)
            actions.append(self._send_heartbeat(now, leave=True))
            self.timer.reset()
            self._reset_sent_fields()
            return actions
        leaving = self.state is S.LEAVING
        if leaving or self.timer.due(now, now_wanted=self.state.heartbeat_now):
            actions.append(self._send_heartbeat(now, leave=leaving))
        return actions

    def heartbeat_deadline(self) -> float | None:
        times: list[float] = []
        if self.state.heartbeats:
            if self.state is S.LEAVING:
                return 0.0
            deadline = self.timer.next_deadline(now_wanted=self.state.heartbeat_now)
            if deadline is not None:
                times.append(deadline)
            if not self.state.leaving:
                times.append(self.poll_deadline)
        return min(times, default=None)

    def owns_heartbeat(self, sent: SendRequest[Any]) -> bool:
        return sent is self._heartbeat or sent in self._leaves

    def heartbeat_response(self, sent: SendRequest[Any], response: Any, now: float) -> None:
        if sent in self._leaves:
            self._leaves.remove(sent)
            self._leave_answered(int(response.error_code))
        elif sent is self._heartbeat:
            self._heartbeat = None
            code = int(response.error_code)
            if code == ErrorCode.NONE:
                self.timer.succeeded(now, int(response.heartbeat_interval_ms))
                self._succeeded(response, now)
            else:
                self._reset_sent_fields()
                self.timer.failed(now)
                self._error(code, response, now)

    def heartbeat_failure(self, sent: SendRequest[Any], error: KrafkaError, now: float) -> None:
        if sent in self._leaves:
            self._leaves.remove(sent)
            self.finish_leave()
        elif sent is self._heartbeat:
            self._heartbeat = None
            self._reset_sent_fields()
            self.timer.failed(now)
            if self.state is S.UNSUBSCRIBED:
                self.finish_leave()
            if not error.retriable:
                self.to_fatal(error)

    # -- transitions ----------------------------------------------------------------------------

    def move(self, new: MembershipState) -> None:
        if new is not self.state and log.isEnabledFor(logging.DEBUG):
            machine = f"group {self.group_id!r} member {self.member_id}"
            transition(log, machine, self.state, new)
        self.state = check_move(self.state, new)

    def to_joining(self) -> None:
        if self.state is S.FATAL:
            log.warning("group %r: not joining: the member failed", self.group_id)
            return
        self.flows.rejoined()
        self.member_epoch = JOIN_EPOCH
        self.move(S.JOINING)
        self.target = NO_ASSIGNMENT
        self.names.clear()

    def to_fenced(self) -> None:
        """Java's transitionToFenced: lost membership; release as lost and rejoin with the same
        member id (KIP-1082) at epoch 0."""
        self.timer.skip_backoff()
        if self.state is S.PREPARE_LEAVING:
            self.to_sending_leave(stale=False)
            self.move(S.UNSUBSCRIBED)
            self.finish_leave()
            return
        if self.state is S.LEAVING:
            self.move(S.UNSUBSCRIBED)
            self.finish_leave()
            return
        if self.state is S.UNSUBSCRIBED:
            return
        self.move(S.FENCED)
        self.member_epoch = JOIN_EPOCH
        self.flows.release(ReleaseKind.FENCED)

    def to_fatal(self, error: KrafkaError) -> None:
        previous = self.state
        if previous is S.FATAL:
            return
        self.move(S.FATAL)
        log.error("group %r: member %s failed: %s", self.group_id, self.member_id, error)
        self.events.append(GroupFailed(error))
        if previous is S.UNSUBSCRIBED:
            return
        if previous.leaving:
            self.finish_leave()
            return
        self.flows.release(ReleaseKind.FATAL)

    def to_sending_leave(self, *, stale: bool) -> None:
        """Java's transitionToSendingLeaveGroup."""
        if self.state in (S.FATAL, S.UNSUBSCRIBED):
            return
        if stale:
            self.poll_expired = True
            self.move(S.PREPARE_LEAVING)
        self.member_epoch = self.leave_epoch
        self.current = NO_ASSIGNMENT
        self.move(S.LEAVING)

    def finish_leave(self) -> None:
        ops, self.leave_ops = self.leave_ops, []
        self.events.extend(Completed(op) for op in ops)

    def clear_assignment(self) -> None:
        self.current = NO_ASSIGNMENT
        self.target = NO_ASSIGNMENT
        self.names.clear()

    def need_metadata(self) -> None:
        if not self._metadata_asked:
            self._metadata_asked = True
            self.events.append(RefreshMetadata(None))

    # -- answers ------------------------------------------------------------------------------

    def _succeeded(self, response: Any, now: float) -> None:
        state = self.state
        if state is S.LEAVING:
            return
        if state is S.UNSUBSCRIBED:
            self.finish_leave()
            return
        if not state.in_group:
            return
        if int(response.member_epoch) < 0:
            log.warning("group %r: ignoring a heartbeat answer with epoch %s", self.group_id,
                        response.member_epoch)  # fmt: skip
            return
        if response.member_id:
            self.member_id = str(response.member_id)
        self.member_epoch = int(response.member_epoch)
        self._answered(response, now)
        if response.assignment is not None and state.can_handle_new_assignment:
            self.assignment_received(from_response(response.assignment.topic_partitions))

    def _answered(self, response: Any, now: float) -> None:
        """A successful answer was taken (subclasses count consecutive errors down)."""

    def assignment_received(self, partitions: IdPartitions) -> None:
        updated = self.target.updated_with(partitions)
        if updated is not None:
            self.target = updated
        if self.target != self.current:
            self.move(S.RECONCILING)
        elif self.state in (S.RECONCILING, S.JOINING):
            self.move(S.STABLE)

    def _error(self, code: int, response: Any, now: float) -> None:
        if self.state is S.UNSUBSCRIBED:
            self.finish_leave()
        if self.coordinator.answered(code):
            self.timer.skip_backoff()
        elif code == ErrorCode.COORDINATOR_LOAD_IN_PROGRESS:
            pass
        elif code in (ErrorCode.FENCED_MEMBER_EPOCH, ErrorCode.UNKNOWN_MEMBER_ID):
            self.to_fenced()
        elif not self._specific_error(code, response, now):
            message = self._fatal_message(code, response.error_message)
            self.to_fatal(error_for_code(code, message))

    def _leave_answered(self, code: int) -> None:
        self.coordinator.answered(code)
        self.finish_leave()

    # -- sending --------------------------------------------------------------------------------

    def _send_heartbeat(self, now: float, *, leave: bool) -> SendRequest[Any]:
        body, min_version = self._heartbeat_body(now)
        sent: SendRequest[Any] = SendRequest(
            self.coordinator.target, body, priority=Priority.HIGH, min_version=min_version
        )
        if leave:
            self._leaves.append(sent)
        else:
            self._heartbeat = sent
            self.timer.sent(now)
        self._generated()
        return sent

    def _generated(self) -> None:
        """Java's onHeartbeatRequestGenerated: ACKNOWLEDGING and LEAVING end when the heartbeat
        is made, not when it is answered."""
        if self.state is S.ACKNOWLEDGING:
            self.move(S.STABLE if self.target == self.current else S.RECONCILING)
        elif self.state is S.LEAVING:
            if self.poll_expired:
                self.move(S.STALE)
                self.flows.release(ReleaseKind.STALE)
            else:
                self.move(S.UNSUBSCRIBED)


__all__ = ["JOIN_EPOCH", "LEAVE_EPOCH", "STATIC_LEAVE_EPOCH", "Membership", "new_member_id"]
