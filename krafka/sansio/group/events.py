"""What a group member asks of its driver, and what it tells it.

**Steps** carry a `step` id and hold the member until the driver answers
`member.listener_done(step, now, ...)`: the driver runs the application's rebalance listener
(in the application's task, never inside the member or a lock the application holds) and
changes its own view of the assignment, then answers. One step is outstanding at a time, in
Java's order:

    [CommitPositions (auto-commit)] -> RevokePartitions / LosePartitions -> AssignPartitions

**Notices** need no answer.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from krafka.errors import KrafkaError
from krafka.sansio.actions import RefreshMetadata
from krafka.structs import OffsetAndMetadata, TopicPartition

Partitions = frozenset[TopicPartition]


class LeaveReason(Enum):
    """Why a member leaves: on CLOSE it auto-commits first and is finished afterwards; on
    UNSUBSCRIBE it does not commit and may subscribe again."""

    CLOSE = "close"
    UNSUBSCRIBE = "unsubscribe"


class GroupMembershipOperation(Enum):
    """What closing does to the membership (KIP-1092, Java's
    `CloseOptions.GroupMembershipOperation`): DEFAULT leaves for a dynamic member and stays for
    a static one (classic: no LeaveGroup; KIP-848: a heartbeat with epoch -2, the assignment
    kept for the session timeout); LEAVE_GROUP leaves either way (classic: LeaveGroup naming
    the group instance id; KIP-848: epoch -1); REMAIN_IN_GROUP sends no LeaveGroup (classic)
    and epoch -2 for a static KIP-848 member: the session timeout decides. A dynamic KIP-848
    member leaves whatever it is told (epoch -1), as Java's: the coordinator keeps no dynamic
    member that left."""

    DEFAULT = "default"
    LEAVE_GROUP = "leave_group"
    REMAIN_IN_GROUP = "remain_in_group"

    @classmethod
    def parse(cls, value: GroupMembershipOperation | str) -> GroupMembershipOperation:
        if isinstance(value, cls):
            return value
        try:
            return cls(str(value).lower())
        except ValueError:
            names = ", ".join(repr(o.value) for o in cls)
            raise ValueError(f"group_membership_operation must be one of {names}") from None


class CommitReason(Enum):
    INTERVAL = "interval"  # auto_commit_interval elapsed (the consumer's own timer)
    REBALANCE = "rebalance"  # before the member rejoins (Java's onJoinPrepare)
    LEAVE = "leave"  # before the member leaves on close


@dataclass(frozen=True, slots=True)
class CommitPositions:
    """Step: auto-commit. Answer with the consumed positions of `partitions`
    (`listener_done(step, now, offsets={tp: OffsetAndMetadata(position, "", epoch)})`; an
    empty mapping commits nothing).

    `pending_revocation`: an eager rebalance is starting, so the driver must stop handing out
    records of `partitions` from now on (their positions must not move past the commit).
    """

    step: int
    partitions: Partitions
    reason: CommitReason
    pending_revocation: bool = False


@dataclass(frozen=True, slots=True)
class RevokePartitions:
    """Step: the member gives `partitions` up in order (call `on_partitions_revoked`; commits
    of them still work until the answer). After the answer they are no longer owned: drop
    their positions, buffered records and pause flags."""

    step: int
    partitions: Partitions
    generation: int


@dataclass(frozen=True, slots=True)
class LosePartitions:
    """Step: `partitions` may already belong to another member (fencing, an expired session or
    poll interval, a leave while rebalancing): call `on_partitions_lost`, drop them, answer.
    Commits of them can no longer succeed."""

    step: int
    partitions: Partitions
    reason: str


@dataclass(frozen=True, slots=True)
class AssignPartitions:
    """Step: a rebalance completed. The member now owns exactly `assignment`; `added` are new
    (they need positions: committed offsets via `fetch_committed`, else the reset policy).
    Call `on_partitions_assigned(added)` (once per rebalance, even when empty), then answer.

    Partitions in `retained` keep their positions, buffers and pause flags.
    """

    step: int
    added: Partitions
    assignment: Partitions
    generation: int

    @property
    def retained(self) -> Partitions:
        return self.assignment - self.added


Step = CommitPositions | RevokePartitions | LosePartitions | AssignPartitions


@dataclass(frozen=True, slots=True)
class PendingRevocation:
    """Notice (KIP-848): `partitions` are about to be revoked (an auto-commit and
    `RevokePartitions` follow). Stop handing out their records now, so their positions cannot
    move past the commit (Java's markPendingRevocationToPauseFetching)."""

    partitions: Partitions


@dataclass(frozen=True, slots=True)
class PollNeeded:
    """Notice (KIP-848): a reconciliation waits for the application's next poll (with
    auto-commit on it commits the positions first, which only a poll may start, as in Java).
    A poll already waiting looks again at once, as Java's poll loop does."""


@dataclass(frozen=True, slots=True)
class GroupFailed:
    """Notice: the member hit an error retrying cannot fix (authorization, a fenced static
    instance id, an inconsistent protocol ...). Raise it to the application at its next poll;
    the member stays out of the group until it polls again."""

    error: KrafkaError


@dataclass(frozen=True, slots=True)
class AutoCommitDone:
    """Notice: an automatic commit finished (`error` None: committed), for interceptors,
    logs and its span (`sent`: the `now` it was sent at)."""

    offsets: dict[TopicPartition, OffsetAndMetadata]
    error: KrafkaError | None
    sent: float


Notice = GroupFailed | RefreshMetadata | AutoCommitDone | PendingRevocation | PollNeeded


__all__ = [
    "AssignPartitions",
    "AutoCommitDone",
    "CommitPositions",
    "CommitReason",
    "GroupFailed",
    "GroupMembershipOperation",
    "LeaveReason",
    "LosePartitions",
    "Notice",
    "Partitions",
    "PendingRevocation",
    "PollNeeded",
    "RevokePartitions",
    "Step",
]
