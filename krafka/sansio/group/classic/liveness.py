"""Staying in the group: heartbeats, the session timeout and the poll interval.

Once JoinGroup answered (COMPLETING_REBALANCE and STABLE), the member heartbeats every
`heartbeat_interval` on the control lane (`Priority.HIGH`, so a long fetch on the same
connection never delays it), one at a time, backing off after a failure. Answers are read with
Java's table (`error_tables.HEARTBEAT`); an error about an older generation than the current one
is ignored.

* No heartbeat answer for `session_timeout`: the coordinator has expired the member by now.
  It forgets the coordinator, drops its generation (keeping its member id) and its partitions
  are lost; it rejoins when the application polls.
* No poll for `max_poll_interval` (Java's `pollTimeoutExpired`): a dynamic member sends
  LeaveGroup so the group rebalances at once (a static member does not: its session timeout
  decides), drops its generation and member id, loses its partitions and rejoins at the next
  poll.
"""

from __future__ import annotations

from typing import Any

from krafka.errors import FencedInstanceIdError, KrafkaError, error_for_code
from krafka.protocol.error_codes import ErrorCode
from krafka.protocol.messages import HeartbeatResponse
from krafka.sansio.actions import SendRequest
from krafka.sansio.codes import code_name
from krafka.sansio.connection import Priority
from krafka.sansio.group.classic import wire
from krafka.sansio.group.classic.core import MemberCore, log
from krafka.sansio.group.classic.error_tables import HEARTBEAT, Action, action
from krafka.sansio.group.classic.state import Generation, MemberState

SESSION_EXPIRED = "session timed out without a heartbeat answer"
POLL_EXPIRED = "max_poll_interval exceeded: the application did not poll in time"


class Liveness:
    def __init__(self, core: MemberCore) -> None:
        self.core = core
        self.sent: SendRequest[HeartbeatResponse] | None = None
        self.sent_generation: Generation | None = None
        self.lost_reason = ""
        self._leaves: list[SendRequest[Any]] = []

    def check(self, now: float) -> list[SendRequest[Any]]:
        """Expiries first, then a heartbeat if one is due."""
        core = self.core
        if not core.state.heartbeating:
            return []
        if core.clock.session_expired(now):
            self._session_expired()
            return []
        if core.clock.poll_expired(now):
            return self._poll_expired()
        if not core.clock.due(now):
            return []
        core.clock.sent(now)
        self.sent_generation = core.generation
        self.sent = SendRequest(
            core.coordinator.target,
            wire.heartbeat_request(core.config, core.generation),
            priority=Priority.HIGH,
            min_version=wire.static_min_version(core.config, wire.HEARTBEAT_STATIC_MIN_VERSION),
        )
        return [self.sent]

    def next_deadline(self) -> float | None:
        core = self.core
        if not core.state.heartbeating:
            return None
        clock = core.clock
        times = [clock.session_deadline, clock.poll_deadline]
        if not clock.in_flight:
            times.append(clock.next_heartbeat)
        return min(times)

    def owns(self, sent: SendRequest[Any]) -> bool:
        return sent is self.sent or sent in self._leaves

    def on_response(self, sent: SendRequest[Any], response: Any, now: float) -> None:
        if sent in self._leaves:
            self._leaves.remove(sent)
            return
        self.sent = None
        code = int(response.error_code)
        if code == ErrorCode.NONE:
            self.core.clock.received(now)
            return
        error = error_for_code(code, f"Heartbeat of group {self.core.config.group_id!r} failed")
        self._on_error(code, error, now)

    def on_failure(self, sent: SendRequest[Any], error: KrafkaError, now: float) -> None:
        if sent in self._leaves:
            self._leaves.remove(sent)
            return
        self.sent = None
        self.core.clock.failed(now)

    def stop(self) -> None:
        """Forget the heartbeat in flight (its answer no longer matters)."""
        self.sent = None
        self.core.clock.in_flight = False

    # -- internals ------------------------------------------------------------------------------

    def _on_error(self, code: int, error: KrafkaError, now: float) -> None:
        core, clock = self.core, self.core.clock
        current = self.sent_generation == core.generation
        todo = action(HEARTBEAT, code, error.retriable)
        if todo is Action.COORDINATOR_MOVED:
            core.coordinator.moved()
            clock.failed(now)
        elif todo is Action.REBALANCING:
            # Java keeps the session alive: heartbeating on during a rebalance is the point.
            clock.received(now)
            if core.state is MemberState.STABLE:
                core.request_rejoin("group is already rebalancing")
        elif todo in (Action.RESET_MEMBER, Action.RESET_GENERATION):
            if not current:
                clock.received(now)  # about a generation the member already left
                return
            self.lost_reason = f"{code_name(code)} from Heartbeat"
            core.reset(self.lost_reason, reset_member_id=todo is Action.RESET_MEMBER)
            clock.failed(now)
        elif code == ErrorCode.FENCED_INSTANCE_ID:
            if not current:
                clock.received(now)
                return
            self.lost_reason = "FENCED_INSTANCE_ID from Heartbeat"
            core.reset(self.lost_reason, reset_member_id=True)
            clock.failed(now)
            core.fail(_fenced(core.config.group_instance_id))
        elif todo is Action.FATAL:
            clock.failed(now)
            core.fail(error)
        else:
            clock.failed(now)

    def _session_expired(self) -> None:
        core = self.core
        log.warning("group %r: %s", core.config.group_id, SESSION_EXPIRED)
        self.stop()
        core.coordinator.moved()
        self.lost_reason = SESSION_EXPIRED
        core.reset(SESSION_EXPIRED, reset_member_id=False)

    def _poll_expired(self) -> list[SendRequest[Any]]:
        core = self.core
        log.warning(
            "group %r: %s (max_poll_interval=%ss); leaving the group, rejoining at the next poll",
            core.config.group_id,
            POLL_EXPIRED,
            core.config.max_poll_interval,
        )
        leave = self.maybe_leave("consumer poll timeout has expired")
        self.lost_reason = POLL_EXPIRED
        core.reset(POLL_EXPIRED, reset_member_id=True)
        core.cycle = False
        core.polled = False
        return [leave] if leave is not None else []

    def maybe_leave(self, reason: str) -> SendRequest[Any] | None:
        """A LeaveGroup nobody waits for (the poll interval ran out)."""
        self.stop()
        sent = leave_request(self.core, reason)
        if sent is not None:
            self._leaves.append(sent)
        return sent


def leave_request(
    core: MemberCore, reason: str, *, static_too: bool = False
) -> SendRequest[Any] | None:
    """Java's maybeLeaveGroup: a dynamic member in the group tells the coordinator it goes (one
    attempt, never retried); a static member does only when told to (`static_too`: KIP-1092's
    LEAVE_GROUP), else its session timeout decides. It takes
    the control lane: brokers answer one request per connection at a time, and a LeaveGroup
    queued behind the member's own pending JoinGroup would wait out the rebalance delay and be
    lost when the consumer closes, leaving a ghost (possibly the leader) in the group."""
    static = core.config.is_static and not static_too
    if static or core.state is MemberState.UNJOINED or not core.generation.member_id:
        return None
    return SendRequest(
        core.coordinator.target,
        wire.leave_group_request(core.config, core.generation.member_id, reason),
        priority=Priority.HIGH,
    )


def _fenced(instance_id: str | None) -> KrafkaError:
    return FencedInstanceIdError(
        f"the group instance id {instance_id!r} was fenced: another consumer joined the group "
        "with the same group_instance_id"
    )


__all__ = ["POLL_EXPIRED", "SESSION_EXPIRED", "Liveness", "leave_request"]
