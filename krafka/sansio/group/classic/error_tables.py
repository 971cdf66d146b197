"""Java's tables of what a classic group member does with each error of JoinGroup, SyncGroup
and Heartbeat (`AbstractCoordinator`'s response handlers), as data.

Codes a table does not name are "unexpected": Java raises them to the application. krafka
does the same for non-retriable ones and retries retriable ones after a backoff (a broker may
answer COORDINATOR_LOAD_IN_PROGRESS to a SyncGroup or a Heartbeat while it loads the group,
which Java's tables do not foresee).
"""

from __future__ import annotations

from enum import Enum
from typing import Final

from krafka.protocol.error_codes import ErrorCode


class Action(Enum):
    #: Rejoin at once: the error says how to join next, not that something is wrong.
    REJOIN_NOW = "rejoin-now"
    #: Keep the coordinator, try again after a backoff (it is loading).
    RETRY_LATER = "retry-later"
    #: The coordinator moved: find it again, then try again after a backoff.
    COORDINATOR_MOVED = "coordinator-moved"
    #: Reset the generation and member id (if unchanged since the request), rejoin at once.
    RESET_MEMBER = "reset-member"
    #: Reset the generation but keep the member id (if unchanged), rejoin at once.
    RESET_GENERATION = "reset-generation"
    #: Take the member id the coordinator gave (KIP-394), rejoin at once.
    MEMBER_ID_REQUIRED = "member-id-required"
    #: Heartbeat: the group is rebalancing; rejoin if STABLE, otherwise ignore.
    REBALANCING = "rebalancing"
    #: Raise to the application; the member stays out until the application polls again.
    FATAL = "fatal"


_C, _A = ErrorCode, Action

JOIN_GROUP: Final[dict[int, Action]] = {
    _C.COORDINATOR_LOAD_IN_PROGRESS: _A.RETRY_LATER,
    _C.UNKNOWN_MEMBER_ID: _A.RESET_MEMBER,
    _C.COORDINATOR_NOT_AVAILABLE: _A.COORDINATOR_MOVED,
    _C.NOT_COORDINATOR: _A.COORDINATOR_MOVED,
    _C.FENCED_INSTANCE_ID: _A.FATAL,
    _C.INCONSISTENT_GROUP_PROTOCOL: _A.FATAL,
    _C.INVALID_SESSION_TIMEOUT: _A.FATAL,
    _C.INVALID_GROUP_ID: _A.FATAL,
    _C.GROUP_AUTHORIZATION_FAILED: _A.FATAL,
    _C.GROUP_MAX_SIZE_REACHED: _A.FATAL,
    _C.UNSUPPORTED_VERSION: _A.FATAL,
    _C.MEMBER_ID_REQUIRED: _A.MEMBER_ID_REQUIRED,
    _C.REBALANCE_IN_PROGRESS: _A.REJOIN_NOW,
}

SYNC_GROUP: Final[dict[int, Action]] = {
    _C.GROUP_AUTHORIZATION_FAILED: _A.FATAL,
    _C.REBALANCE_IN_PROGRESS: _A.REJOIN_NOW,
    _C.FENCED_INSTANCE_ID: _A.FATAL,
    _C.UNKNOWN_MEMBER_ID: _A.RESET_MEMBER,
    _C.ILLEGAL_GENERATION: _A.RESET_GENERATION,
    _C.COORDINATOR_NOT_AVAILABLE: _A.COORDINATOR_MOVED,
    _C.NOT_COORDINATOR: _A.COORDINATOR_MOVED,
}

HEARTBEAT: Final[dict[int, Action]] = {
    _C.COORDINATOR_NOT_AVAILABLE: _A.COORDINATOR_MOVED,
    _C.NOT_COORDINATOR: _A.COORDINATOR_MOVED,
    _C.REBALANCE_IN_PROGRESS: _A.REBALANCING,
    _C.ILLEGAL_GENERATION: _A.RESET_GENERATION,
    _C.UNKNOWN_MEMBER_ID: _A.RESET_MEMBER,
    #: Reset (as UNKNOWN_MEMBER_ID) and raise: another instance took this identity.
    _C.FENCED_INSTANCE_ID: _A.FATAL,
    _C.GROUP_AUTHORIZATION_FAILED: _A.FATAL,
}

del _C, _A


def action(table: dict[int, Action], code: int, retriable: bool) -> Action:
    """The action for `code` in `table`; unexpected codes: retry if retriable, else fatal."""
    found = table.get(code)
    if found is not None:
        return found
    return Action.RETRY_LATER if retriable else Action.FATAL


__all__ = ["HEARTBEAT", "JOIN_GROUP", "SYNC_GROUP", "Action", "action"]
