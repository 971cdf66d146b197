"""A classic group member's states, the explicit table of what moves between them, and its
generation.

Java's `AbstractCoordinator.MemberState`. A member is UNJOINED until it sends JoinGroup
(PREPARING_REBALANCE), COMPLETING_REBALANCE once JoinGroup answered and SyncGroup is due, and
STABLE once SyncGroup delivered its assignment. A failed JoinGroup or SyncGroup leaves the state
where it is (the rebalance is still under way, so commits fail with RebalanceInProgressError);
the next JoinGroup moves it to PREPARING_REBALANCE again. Anything that costs the member its
generation (an error, a leave, the poll interval running out) takes it back to UNJOINED.

Where the coordinator is (unknown / looking up / known) is a separate sub-state, kept by the
member's `CoordinatorLink`.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Final


class MemberState(Enum):
    UNJOINED = "unjoined"
    PREPARING_REBALANCE = "preparing-rebalance"
    COMPLETING_REBALANCE = "completing-rebalance"
    STABLE = "stable"

    @property
    def rebalancing(self) -> bool:
        return self in (MemberState.PREPARING_REBALANCE, MemberState.COMPLETING_REBALANCE)

    @property
    def heartbeating(self) -> bool:
        """Heartbeats go out once JoinGroup answered (Java's `!hasNotJoinedGroup()`)."""
        return self in (MemberState.COMPLETING_REBALANCE, MemberState.STABLE)


class MemberEvent(Enum):
    JOIN_SENT = "join-sent"
    JOINED = "joined"
    SYNCED = "synced"
    RESET = "reset"


_S, _E = MemberState, MemberEvent
TRANSITIONS: Final[dict[tuple[MemberState, MemberEvent], MemberState]] = {
    (_S.UNJOINED, _E.JOIN_SENT): _S.PREPARING_REBALANCE,
    (_S.PREPARING_REBALANCE, _E.JOIN_SENT): _S.PREPARING_REBALANCE,  # a retried JoinGroup
    (_S.COMPLETING_REBALANCE, _E.JOIN_SENT): _S.PREPARING_REBALANCE,  # SyncGroup failed
    (_S.STABLE, _E.JOIN_SENT): _S.PREPARING_REBALANCE,  # a rebalance of a stable member
    (_S.PREPARING_REBALANCE, _E.JOINED): _S.COMPLETING_REBALANCE,
    (_S.COMPLETING_REBALANCE, _E.SYNCED): _S.STABLE,
    **{(state, _E.RESET): _S.UNJOINED for state in _S},
}
del _S, _E


@dataclass(frozen=True, slots=True)
class Generation:
    """The generation a member joined: its id, the member id, the protocol (assignor) chosen."""

    generation_id: int = -1
    member_id: str = ""
    protocol_name: str | None = None

    @property
    def is_reset(self) -> bool:
        """No generation at all (Java's `hasGenerationReset`; the member id may be kept)."""
        return self.generation_id == NO_GENERATION_ID and self.protocol_name is None

    @property
    def lost(self) -> bool:
        """Partitions owned under this generation may belong to another member now."""
        return self.generation_id == NO_GENERATION_ID or not self.member_id


NO_GENERATION_ID: Final = -1
NO_GENERATION: Final = Generation()


__all__ = ["NO_GENERATION", "TRANSITIONS", "Generation", "MemberEvent", "MemberState"]
