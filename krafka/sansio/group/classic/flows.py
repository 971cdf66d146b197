"""The member's multi-step procedures around listener steps: preparing a rebalance, applying
an assignment, leaving.

Each flow issues at most one step at a time (`MemberCore.step`) and moves on when the driver
answers it (`step_done`) or when a commit it made finishes (`commit_done`).

* `PrepareFlow` (Java's onJoinPrepare): auto-commit the owned partitions (eager: they are
  pending revocation meanwhile), bounded by the rebalance timeout; then revoke — eager: all
  (even none), cooperative: only partitions of topics no longer subscribed.
* `CompleteFlow` (Java's onJoinComplete): check the assignment against the subscription;
  cooperative: revoke what is no longer assigned and ask for a second round; then assign
  (`added` once per rebalance, even when empty).
* `LeaveFlow` (close, unsubscribe): auto-commit (on close), revoke — or lose, when the
  generation is gone or a rebalance is under way — then LeaveGroup (dynamic members only).
"""

from __future__ import annotations

from enum import Enum
from typing import Any

from krafka.errors import InvalidStateError, KrafkaError, error_for_code
from krafka.protocol.error_codes import ErrorCode
from krafka.sansio.actions import Completed, Failed, SendRequest
from krafka.sansio.codes import code_name
from krafka.sansio.group.classic.assignors import Assignment, RebalanceProtocol
from krafka.sansio.group.classic.commits import MemberCommits
from krafka.sansio.group.classic.consumer_protocol import decode_assignment
from krafka.sansio.group.classic.core import MemberCore, log
from krafka.sansio.group.classic.liveness import leave_request
from krafka.sansio.group.classic.rebalance import Rebalance, Synced
from krafka.sansio.group.classic.state import NO_GENERATION, MemberEvent, MemberState
from krafka.sansio.group.classic.wire import leave_group_code
from krafka.sansio.group.events import (
    AssignPartitions,
    CommitPositions,
    CommitReason,
    GroupMembershipOperation,
    LosePartitions,
    RevokePartitions,
    Step,
)
from krafka.structs import OffsetAndMetadata, TopicPartition

Offsets = dict[TopicPartition, OffsetAndMetadata]


class Phase(Enum):
    START = "start"
    COMMIT_ASKED = "commit-asked"
    COMMITTING = "committing"
    REVOKE = "revoke"
    REVOKING = "revoking"
    ASSIGN = "assign"
    ASSIGNING = "assigning"
    LEAVE = "leave"
    LEAVING = "leaving"
    DONE = "done"


class _Flow:
    phase = Phase.START
    commit_op: int | None = None

    def __init__(self, core: MemberCore, commits: MemberCommits, deadline: float) -> None:
        self.core = core
        self.commits = commits
        self.deadline = deadline

    @property
    def done(self) -> bool:
        return self.phase is Phase.DONE

    def _ask_commit(self, reason: CommitReason) -> bool:
        """Issue the auto-commit step if it makes sense now."""
        core = self.core
        if not (
            core.config.enable_auto_commit
            and core.state is MemberState.STABLE
            and core.owned
            and not core.generation.lost
        ):
            return False
        core.commit_step(reason)
        self.phase = Phase.COMMIT_ASKED
        return True

    def _commit(self, offsets: Offsets | None, now: float, after: Phase) -> None:
        op = self.commits.auto(offsets or {}, now, self.deadline - now, self)
        self.phase = after if op is None else Phase.COMMITTING

    def commit_done(self, result: Completed | Failed) -> None:
        raise NotImplementedError

    def step_done(self, step: Step, offsets: Offsets | None, now: float) -> None:
        raise NotImplementedError


class PrepareFlow(_Flow):
    def advance(self, now: float) -> None:
        core = self.core
        if self.phase is Phase.START and not self._ask_commit(CommitReason.REBALANCE):
            self.phase = Phase.REVOKE
        if self.phase is not Phase.REVOKE:
            return
        if core.generation.lost:
            self.phase = Phase.DONE  # lost partitions were (or will be) given up as lost
        elif core.protocol is RebalanceProtocol.EAGER:
            core.revoke_step(core.owned)
            self.phase = Phase.REVOKING
        else:
            subscribed = core.subscription.subscribed()
            gone = frozenset(tp for tp in core.owned if tp.topic not in subscribed)
            if gone:
                core.revoke_step(gone)
                self.phase = Phase.REVOKING
            else:
                self.phase = Phase.DONE
        if self.phase is Phase.DONE:
            self._finish()

    def step_done(self, step: Step, offsets: Offsets | None, now: float) -> None:
        if isinstance(step, CommitPositions):
            self._commit(offsets, now, after=Phase.REVOKE)
        elif isinstance(step, RevokePartitions):
            self.core.drop(step.partitions)
            self.phase = Phase.DONE
            self._finish()

    def commit_done(self, result: Completed | Failed) -> None:
        if isinstance(result, Failed):
            log.warning(
                "group %r: auto-commit before rebalance failed, rejoining anyway: %s",
                self.core.config.group_id,
                result.error,
            )
        self.phase = Phase.REVOKE

    def _finish(self) -> None:
        self.core.needs_prepare = False


class CompleteFlow(_Flow):
    def __init__(
        self, core: MemberCore, commits: MemberCommits, rebalance: Rebalance, synced: Synced
    ) -> None:
        super().__init__(core, commits, deadline=float("inf"))
        self.rebalance = rebalance
        self.synced = synced
        self.assigned: frozenset[TopicPartition] = frozenset()
        self.user_data: bytes | None = None

    def advance(self, now: float) -> None:
        if self.phase is Phase.START:
            self._start()
        if self.phase is Phase.ASSIGN:
            self._assign(now)

    def _start(self) -> None:
        core = self.core
        if not self._still_current():
            core.reset(
                "the generation changed before the assignment was applied", reset_member_id=True
            )
            self._finish()
            return
        try:
            assignment = decode_assignment(self.synced.assignment)
        except KrafkaError as exc:
            core.request_rejoin("unreadable assignment")
            core.fail(exc)
            self._finish()
            return
        self.assigned = frozenset(assignment.partitions)
        self.user_data = assignment.user_data
        foreign = sorted(
            {tp.topic for tp in self.assigned if not core.subscription.matches(tp.topic)}
        )
        if foreign:
            core.request_rejoin(f"assignment of {foreign} does not match the subscription")
            self._finish()
            return
        revoked = core.owned - self.assigned
        if core.protocol is RebalanceProtocol.COOPERATIVE and revoked:
            core.revoke_step(revoked)
            self.phase = Phase.REVOKING
        else:
            self.phase = Phase.ASSIGN

    def _assign(self, now: float) -> None:
        core = self.core
        if not self._still_current():
            self._finish()  # reset meanwhile: what is owned will be given up as lost
            return
        core.subscription.assigned_topics(tp.topic for tp in self.assigned)
        try:
            assignor = self.rebalance.assignor(self.synced.generation.protocol_name)
            assignor.on_assignment(
                Assignment(tuple(sorted(self.assigned)), self.user_data),
                self.synced.generation.generation_id,
            )
        except Exception as exc:  # a custom assignor's bug must not stop the member
            core.fail(InvalidStateError(f"assignor on_assignment failed: {exc!r}"))
        core.applied, core.last_assigned = self.synced.generation, self.assigned
        core.assign_step(self.assigned)
        self.phase = Phase.ASSIGNING

    def step_done(self, step: Step, offsets: Offsets | None, now: float) -> None:
        if isinstance(step, RevokePartitions):
            self.core.drop(step.partitions)
            self.core.request_rejoin("need to revoke partitions and re-join")
            self.phase = Phase.ASSIGN
        elif isinstance(step, AssignPartitions):
            self._finish()

    def commit_done(self, result: Completed | Failed) -> None:
        return None

    def _still_current(self) -> bool:
        core = self.core
        return core.state is MemberState.STABLE and core.generation == self.synced.generation

    def _finish(self) -> None:
        self.core.needs_prepare = True
        self.phase = Phase.DONE


class LeaveFlow(_Flow):
    def __init__(
        self,
        core: MemberCore,
        commits: MemberCommits,
        op: int,
        deadline: float,
        *,
        close: bool,
        reason: str,
        operation: GroupMembershipOperation = GroupMembershipOperation.DEFAULT,
    ) -> None:
        super().__init__(core, commits, deadline)
        self.ops = [op]
        self.close = close
        self.reason = reason
        self.operation = operation
        self.sent: SendRequest[Any] | None = None

    def advance(self, now: float) -> list[SendRequest[Any]]:
        core = self.core
        if self.phase is Phase.START:
            asked = self.close and now < self.deadline and self._ask_commit(CommitReason.LEAVE)
            if not asked:
                self.phase = Phase.REVOKE
        if self.phase is Phase.REVOKE:
            if core.owned:
                if core.generation.lost or core.state.rebalancing:
                    core.lose_step("the member leaves the group while it rebalances")
                else:
                    core.revoke_step(core.owned)
                self.phase = Phase.REVOKING
                return []
            self.phase = Phase.LEAVE
        if self.phase is Phase.LEAVE:
            return self._leave()
        return []

    def _leave(self) -> list[SendRequest[Any]]:
        core = self.core
        sent = None
        if self._sends_leave():
            forced = self.operation is GroupMembershipOperation.LEAVE_GROUP
            sent = leave_request(core, self.reason, static_too=forced)
        core.generation = NO_GENERATION
        if core.state is not MemberState.UNJOINED:
            core.move(MemberEvent.RESET)
        core.needs_prepare = True
        core.cycle = False
        if sent is None:
            self.finish(None)
            return []
        self.sent = sent
        self.phase = Phase.LEAVING
        return [sent]

    def _sends_leave(self) -> bool:
        """An unsubscribe leaves; a close as its `operation` says (DEFAULT: as configured)."""
        if not self.close:
            return True
        if self.operation is GroupMembershipOperation.DEFAULT:
            return self.core.config.leave_group_on_close
        return self.operation is GroupMembershipOperation.LEAVE_GROUP

    def step_done(self, step: Step, offsets: Offsets | None, now: float) -> None:
        if isinstance(step, CommitPositions):
            self._commit(offsets, now, after=Phase.REVOKE)
        elif isinstance(step, RevokePartitions | LosePartitions):
            self.core.drop(step.partitions)
            self.phase = Phase.LEAVE

    def commit_done(self, result: Completed | Failed) -> None:
        self.phase = Phase.REVOKE

    def owns(self, sent: SendRequest[Any]) -> bool:
        return sent is self.sent

    def on_response(self, response: Any) -> None:
        code = leave_group_code(response)
        error = None
        if code != ErrorCode.NONE:
            error = error_for_code(code, f"LeaveGroup failed: {code_name(code)}")
        self.finish(error)

    def finish(self, error: KrafkaError | None) -> None:
        self.sent = None
        self.phase = Phase.DONE
        for op in self.ops:
            self.core.events.append(Completed(op) if error is None else Failed(op, error))
        self.ops = []


__all__ = ["CompleteFlow", "LeaveFlow", "Phase", "PrepareFlow"]
