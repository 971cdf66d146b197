"""One share session per broker (KIP-932), as Java's ShareSessionHandler keeps it.

The session is keyed by the member id; its epoch starts at 0. A request at epoch 0 opens a new
session and names every partition the member wants from that broker; later requests name only
the partitions added since (and forget the removed ones). Acknowledgements may ride on any
request of an open session, never on the one that opens it (ShareAcknowledge cannot open one).
SHARE_SESSION_NOT_FOUND, INVALID_SHARE_SESSION_EPOCH and SHARE_SESSION_LIMIT_REACHED start
over at epoch 0; any other answer moves the epoch on; a request that got no answer leaves the
session unknown, so the next one opens a new session. Closing sends the final epoch (-1).
"""

from __future__ import annotations

from collections.abc import Set
from dataclasses import dataclass
from typing import Final

from krafka.protocol.error_codes import ErrorCode
from krafka.sansio.group.membership.assignment import IdPartition

INITIAL_EPOCH: Final = 0
FINAL_EPOCH: Final = -1
_INT32_MAX: Final = 2**31 - 1
SESSION_RESET_CODES: Final = frozenset(
    {
        ErrorCode.SHARE_SESSION_NOT_FOUND,
        ErrorCode.INVALID_SHARE_SESSION_EPOCH,
        ErrorCode.SHARE_SESSION_LIMIT_REACHED,
    }
)


@dataclass(frozen=True, slots=True)
class SessionRequest:
    """What one request of the session carries: its epoch, the partitions to name, the ones
    to forget."""

    epoch: int
    named: frozenset[IdPartition]
    forgotten: frozenset[IdPartition]


class ShareSession:
    """The share session with one broker."""

    def __init__(self) -> None:
        self.epoch = INITIAL_EPOCH
        self.partitions: frozenset[IdPartition] = frozenset()

    @property
    def is_open(self) -> bool:
        """Acknowledgements may be sent (the broker knows the session)."""
        return self.epoch > INITIAL_EPOCH

    def next_request(self, wanted: Set[IdPartition]) -> SessionRequest:
        """The next request's session fields, for a member that wants `wanted` from here."""
        wanted = frozenset(wanted)
        if self.epoch == INITIAL_EPOCH:
            request = SessionRequest(INITIAL_EPOCH, wanted, frozenset())
        else:
            added = wanted - self.partitions
            request = SessionRequest(self.epoch, added, self.partitions - wanted)
        self.partitions = wanted
        return request

    def closing_request(self) -> SessionRequest:
        """The request that closes the session (acknowledgements only)."""
        request = SessionRequest(FINAL_EPOCH, frozenset(), frozenset())
        self.reset()
        return request

    def answered(self, code: int) -> None:
        """The broker answered a request of this session with top-level `code`."""
        if code in SESSION_RESET_CODES or (self.epoch == INITIAL_EPOCH and code != ErrorCode.NONE):
            self.reset()
        else:
            self.epoch = 1 if self.epoch >= _INT32_MAX else self.epoch + 1

    def reset(self) -> None:
        self.epoch = INITIAL_EPOCH
        self.partitions = frozenset()


__all__ = ["FINAL_EPOCH", "INITIAL_EPOCH", "SessionRequest", "ShareSession"]
