"""An application call to the transaction machine whose outcome the application has not been
told yet (Java's `pendingTransition`).

`init_transactions`, `commit_transaction` and `abort_transaction` wait at most `max_block`.
When the wait ends first, the coordinator may still act on the request, or may have acted on it
already: the outcome is unknown. Until the application has learnt it, calling the same operation
again waits for that very outcome, and every other transactional call is refused: an abort
after a timed-out commit would report an abort the coordinator never made (the records are
committed), a commit after a timed-out abort could not undo the abort.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from krafka.errors import InvalidStateError


class TxnCall(Enum):
    """The calls whose outcome a timed-out wait leaves unknown (values: the producer's names)."""

    INITIALIZE = "init_transactions"
    COMMIT = "commit_transaction"
    ABORT = "abort_transaction"


@dataclass(slots=True, eq=False)
class PendingCall:
    """Operation `op` of `call`, not yet reported to the application."""

    call: TxnCall
    op: int
    #: The application stopped waiting before the outcome (its `max_block` ran out).
    abandoned: bool = False
    #: The outcome is known (emitted while nobody waited): the next same call reports it.
    finished: bool = False

    def refusal(self, attempted: str) -> InvalidStateError:
        """Why `attempted` (a producer method's name) cannot run now."""
        name = self.call.value
        if not self.abandoned and not self.finished:
            return InvalidStateError(f"cannot call {attempted}(): {name}() is in progress")
        return InvalidStateError(
            f"cannot call {attempted}(): the previous {name}() timed out and its outcome is "
            f"unknown; call {name}() again to wait for it"
        )
