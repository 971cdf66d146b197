"""The states of a KIP-848 consumer-group member or a KIP-932 share-group member, and the
explicit table of which state may follow which.

Java's `MemberState`, with its `previousValidStates` table as data: a move to a state is legal
only from one of that state's valid previous states (or to the same state). The classic
protocol's member has its own, different states (`krafka.sansio.group.classic.state`).
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import Enum
from typing import Final

from krafka.errors import InvalidStateError


class MembershipState(Enum):
    UNSUBSCRIBED = "unsubscribed"  # a group id but no subscription: no heartbeats
    JOINING = "joining"  # heartbeating at epoch 0, waiting for an epoch > 0
    RECONCILING = "reconciling"  # a target assignment differs from the current one
    ACKNOWLEDGING = "acknowledging"  # reconciled: the next heartbeat (sent at once) acks it
    STABLE = "stable"  # every assignment received is reconciled
    FENCED = "fenced"  # lost membership: releases its partitions (lost), then rejoins
    PREPARE_LEAVING = "prepare-leaving"  # releasing its partitions before the leave heartbeat
    LEAVING = "leaving"  # the leave heartbeat (epoch -1, or -2 for a static member) is due
    STALE = "stale"  # left after max_poll_interval ran out; rejoins at the next poll
    FATAL = "fatal"  # an error retrying cannot fix: terminal

    @property
    def can_handle_new_assignment(self) -> bool:
        """A target assignment may be taken (Java: the valid previous states of RECONCILING)."""
        return self in PREVIOUS_VALID[MembershipState.RECONCILING]

    @property
    def in_group(self) -> bool:
        return self not in _NOT_IN_GROUP

    @property
    def heartbeats(self) -> bool:
        """The member sends heartbeats in this state."""
        return self not in _NOT_IN_GROUP

    @property
    def heartbeat_now(self) -> bool:
        """The next heartbeat goes without waiting for the interval."""
        return self in _HEARTBEAT_NOW

    @property
    def leaving(self) -> bool:
        return self in (MembershipState.PREPARE_LEAVING, MembershipState.LEAVING)


_M = MembershipState
#: Java's `previousValidStates`, state by state.
PREVIOUS_VALID: Final[Mapping[MembershipState, frozenset[MembershipState]]] = {
    _M.STABLE: frozenset({_M.JOINING, _M.ACKNOWLEDGING, _M.RECONCILING}),
    _M.RECONCILING: frozenset({_M.STABLE, _M.JOINING, _M.ACKNOWLEDGING, _M.RECONCILING}),
    _M.ACKNOWLEDGING: frozenset({_M.RECONCILING}),
    _M.FATAL: frozenset(
        {
            _M.JOINING,
            _M.STABLE,
            _M.RECONCILING,
            _M.ACKNOWLEDGING,
            _M.PREPARE_LEAVING,
            _M.LEAVING,
            _M.UNSUBSCRIBED,
        }
    ),
    _M.FENCED: frozenset(
        {_M.JOINING, _M.STABLE, _M.RECONCILING, _M.ACKNOWLEDGING, _M.PREPARE_LEAVING, _M.LEAVING}
    ),
    _M.JOINING: frozenset({_M.FENCED, _M.UNSUBSCRIBED, _M.STALE}),
    _M.PREPARE_LEAVING: frozenset(
        {_M.JOINING, _M.STABLE, _M.RECONCILING, _M.ACKNOWLEDGING, _M.UNSUBSCRIBED}
    ),
    _M.LEAVING: frozenset({_M.PREPARE_LEAVING}),
    _M.UNSUBSCRIBED: frozenset({_M.PREPARE_LEAVING, _M.LEAVING, _M.FENCED}),
    _M.STALE: frozenset({_M.LEAVING}),
}
_NOT_IN_GROUP: Final = frozenset({_M.UNSUBSCRIBED, _M.FENCED, _M.FATAL, _M.STALE})
_HEARTBEAT_NOW: Final = frozenset({_M.ACKNOWLEDGING, _M.LEAVING, _M.JOINING})
del _M


def may_move(current: MembershipState, new: MembershipState) -> bool:
    return current is new or current in PREVIOUS_VALID[new]


def check_move(current: MembershipState, new: MembershipState) -> MembershipState:
    """`new`, if the table allows moving there from `current`; InvalidStateError otherwise."""
    if not may_move(current, new):
        raise InvalidStateError(
            f"group member: invalid state transition from {current.name} to {new.name}"
        )
    return new


__all__ = ["PREVIOUS_VALID", "MembershipState", "check_move", "may_move"]
