"""The multi-step work of a KIP-848 or share-group member: reconciling a target assignment and
releasing the partitions it owns (fenced, stale, fatal, leaving).

Reconciliation is Java's `maybeReconcile`: resolve the target's topic ids into names (unknown
ones wait for metadata), then in order (auto-)commit -> revoke the partitions no longer
assigned -> assign the new ones, then acknowledge (ACKNOWLEDGING: the next heartbeat, sent at
once, carries the new assignment). A release is: [commit, on close] -> revoke (a leave while the
member still has an epoch) or lose (fenced, stale, fatal, or a leave without an epoch) -> clear
the assignment and go on (rejoin, wait for the poll, stay failed, send the leave heartbeat).

Each step is the member's to issue (`Steps`): a consumer member hands it to its driver and waits
for `step_done`; a share member has no rebalance listener and is done at once. One step is
outstanding at a time; a reconciliation that became pointless (the member was fenced, left or
rejoined meanwhile) is dropped when its outstanding step is answered.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, Protocol

from krafka.sansio.group.events import CommitReason
from krafka.sansio.group.membership.assignment import (
    NO_ASSIGNMENT,
    IdPartitions,
    LocalAssignment,
    Resolved,
)
from krafka.sansio.group.membership.state import MembershipState
from krafka.structs import TopicPartition

if TYPE_CHECKING:
    from krafka.sansio.group.membership.member import Membership

S = MembershipState
Partitions = frozenset[TopicPartition]
_MAX_ROUNDS = 32


class ReleaseKind(Enum):
    FENCED = "the member was fenced by the group coordinator"
    STALE = "the application did not poll within max_poll_interval"
    FATAL = "the member failed"
    LEAVE = "the member is leaving the group"


class Steps(Protocol):
    """What a member does at each step; True: wait for `Flows.step_done`."""

    def issue_commit(self, reason: CommitReason) -> bool: ...

    def issue_revoke(self, partitions: Partitions) -> bool: ...

    def issue_assign(
        self, added: Partitions, assignment: Partitions, resolved: Resolved
    ) -> bool: ...

    def issue_lose(self, partitions: Partitions, reason: str) -> bool: ...

    def pending_revocation(self, partitions: Partitions) -> None: ...

    def poll_needed(self) -> None: ...

    def left(self) -> None: ...

    @property
    def auto_commit_enabled(self) -> bool: ...


class _Phase(Enum):
    START = "start"
    COMMIT = "commit"
    REVOKE = "revoke"
    ASSIGN = "assign"


@dataclass(slots=True, eq=False)
class _Reconciliation:
    incarnation: int
    target: LocalAssignment
    resolved: Resolved
    revoked: Partitions
    phase: _Phase = _Phase.START


@dataclass(slots=True, eq=False)
class _Release:
    kind: ReleaseKind
    close: bool = False
    phase: _Phase = _Phase.START


class Flows:
    """Reconciliations and releases of one member, and the partitions it owns."""

    def __init__(self, member: Membership) -> None:
        self._m = member
        self.owned: Partitions = frozenset()
        self.waiting = False
        self._failed = False
        self._reconciliation: _Reconciliation | None = None
        self._releases: deque[_Release] = deque()
        self._incarnation = 0
        self._blocked_until_poll = False
        self._stale_released = True
        self._rejoin_stale = False

    @property
    def busy(self) -> bool:
        return self.waiting or self._reconciliation is not None or bool(self._releases)

    @property
    def in_flight(self) -> IdPartitions:
        """The partitions the member may be taking: those of the reconciliation under way and
        of a target still waiting to be reconciled (behind it, or behind a poll). Heartbeats
        report them as owned, so the coordinator gives none of them to another member before
        this one has released them, even when an answer moving them elsewhere is lost."""
        r, m = self._reconciliation, self._m
        taking = r.resolved.partitions if r is not None else frozenset()
        if not m.target.is_none and m.target != m.current:
            taking = taking | m.target.partitions
        return taking

    # -- what the member tells -----------------------------------------------------------------

    def rejoined(self) -> None:
        """The member (re)joins: a reconciliation under way belongs to the old membership."""
        self._incarnation += 1
        self._blocked_until_poll = False

    def release(self, kind: ReleaseKind, *, close: bool = False) -> None:
        if kind is ReleaseKind.STALE:
            self._stale_released = False
        self._releases.append(_Release(kind, close))

    def rejoin_when_released(self) -> None:
        """Java's maybeRejoinStaleMember: a stale member rejoins once its partitions are lost."""
        if self._m.state is not S.STALE:
            return
        if self._stale_released:
            self._m.to_joining()
        else:
            self._rejoin_stale = True

    def polled(self) -> None:
        self._blocked_until_poll = False

    def step_done(self, *, failed: bool = False) -> None:
        """The outstanding step was carried out (`failed`: the application's listener raised)."""
        self.waiting = False
        self._failed = failed

    # -- driving ---------------------------------------------------------------------------------

    def advance(self, steps: Steps, *, can_commit: bool) -> None:
        for _ in range(_MAX_ROUNDS):
            if self.waiting or not self._advance_once(steps, can_commit):
                return

    def _advance_once(self, steps: Steps, can_commit: bool) -> bool:
        reconciliation = self._reconciliation
        if reconciliation is not None:
            if (
                self._m.state is not S.RECONCILING
                or reconciliation.incarnation != self._incarnation
            ):
                self._reconciliation = None
                return True
            return self._reconcile(steps, reconciliation)
        if self._releases:
            return self._release(steps, self._releases[0])
        return self._maybe_reconcile(steps, can_commit)

    def _maybe_reconcile(self, steps: Steps, can_commit: bool) -> bool:
        m = self._m
        if m.state is not S.RECONCILING or m.target == m.current or self._blocked_until_poll:
            return False
        resolved = m.names.resolve(m.target.partitions)
        if resolved.unresolved:
            m.need_metadata()
        if not m.current.is_none and resolved.partitions == m.current.partitions:
            if m.current.local_epoch == m.target.local_epoch:
                return False
            m.current = LocalAssignment(m.target.local_epoch, resolved.partitions)
            m.move(S.ACKNOWLEDGING)
            return True
        if steps.auto_commit_enabled and not can_commit:
            steps.poll_needed()
            return False
        revoked = self.owned - resolved.topic_partitions
        self._reconciliation = _Reconciliation(self._incarnation, m.target, resolved, revoked)
        if revoked:
            steps.pending_revocation(revoked)
        return True

    def _reconcile(self, steps: Steps, r: _Reconciliation) -> bool:
        if r.phase is _Phase.START:
            r.phase = _Phase.COMMIT
            if steps.auto_commit_enabled and self.owned:
                self.waiting = steps.issue_commit(CommitReason.REBALANCE)
            return True
        if r.phase is _Phase.COMMIT:
            r.phase = _Phase.REVOKE
            revoked = r.revoked & self.owned
            if revoked:
                self.waiting = steps.issue_revoke(revoked)
            return True
        if r.phase is _Phase.REVOKE:
            if self._take_failure():
                return self._abandon()
            self.owned = self.owned - r.revoked
            r.phase = _Phase.ASSIGN
            assignment = r.resolved.topic_partitions
            self.waiting = steps.issue_assign(assignment - self.owned, assignment, r.resolved)
            return True
        self.owned = r.resolved.topic_partitions
        if self._take_failure():
            return self._abandon()
        m = self._m
        self._reconciliation = None
        m.current = LocalAssignment(r.target.local_epoch, r.resolved.partitions)
        m.names.keep_only(topic_id for topic_id, _ in r.resolved.partitions)
        m.move(S.ACKNOWLEDGING)
        return True

    def _abandon(self) -> bool:
        """A listener raised: no acknowledgement (the coordinator fences the member after the
        rebalance timeout unless a later attempt succeeds); retried after the next poll."""
        self._reconciliation = None
        self._blocked_until_poll = True
        return True

    def _release(self, steps: Steps, r: _Release) -> bool:
        m = self._m
        if r.phase is _Phase.START:
            r.phase = _Phase.COMMIT
            if r.close and steps.auto_commit_enabled and self.owned and m.member_epoch > 0:
                self.waiting = steps.issue_commit(CommitReason.LEAVE)
            return True
        if r.phase is _Phase.COMMIT:
            r.phase = _Phase.REVOKE
            if self.owned:
                if r.kind is ReleaseKind.LEAVE and m.member_epoch > 0:
                    steps.pending_revocation(self.owned)
                    self.waiting = steps.issue_revoke(self.owned)
                else:
                    self.waiting = steps.issue_lose(self.owned, r.kind.value)
            return True
        self._take_failure()
        self._releases.popleft()
        self.owned = frozenset()
        m.clear_assignment()
        self._after_release(steps, r.kind)
        return True

    def _after_release(self, steps: Steps, kind: ReleaseKind) -> None:
        m = self._m
        if kind is ReleaseKind.FENCED and m.state is S.FENCED:
            m.to_joining()
        elif kind is ReleaseKind.STALE:
            self._stale_released = True
            if self._rejoin_stale and m.state is S.STALE:
                self._rejoin_stale = False
                m.to_joining()
        elif kind is ReleaseKind.LEAVE:
            steps.left()
            if m.state is S.PREPARE_LEAVING:
                m.to_sending_leave(stale=False)

    def _take_failure(self) -> bool:
        failed, self._failed = self._failed, False
        return failed

    def forget(self) -> None:
        """The member is finished (closed): nothing is owned any more."""
        self.owned = frozenset()
        self._reconciliation = None
        self._releases.clear()
        self.waiting = False
        self._m.current = NO_ASSIGNMENT


__all__ = ["Flows", "ReleaseKind", "Steps"]
