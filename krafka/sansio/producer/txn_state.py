"""The transactional producer's states and the explicit table of what moves between them.

Java's TransactionManager states. COMMITTING and ABORTING are entered the moment the
application asks, before the last records are delivered: from then on `send` is refused, so no
record can slip in after the commit marker. A failed record while ABORTING changes nothing (the
abort failed it on purpose); while IN_TRANSACTION or COMMITTING it makes the transaction
abortable-only.
"""

from __future__ import annotations

from enum import Enum
from typing import Final


class TxnState(Enum):
    UNINITIALIZED = "uninitialized"
    INITIALIZING = "initializing"
    READY = "ready"
    IN_TRANSACTION = "in-transaction"
    COMMITTING = "committing"
    ABORTING = "aborting"
    ABORTABLE_ERROR = "abortable-error"
    FATAL_ERROR = "fatal-error"


class TxnEvent(Enum):
    INIT = "init"
    INIT_DONE = "init-done"
    INIT_FAILED = "init-failed"
    BEGIN = "begin"
    COMMIT = "commit"
    ABORT = "abort"
    END_DONE = "end-done"
    ABORTABLE_ERROR = "abortable-error"
    FATAL_ERROR = "fatal-error"


_S, _E = TxnState, TxnEvent

TRANSITIONS: Final[dict[tuple[TxnState, TxnEvent], TxnState]] = {
    (_S.UNINITIALIZED, _E.INIT): _S.INITIALIZING,
    (_S.INITIALIZING, _E.INIT_DONE): _S.READY,
    (_S.INITIALIZING, _E.INIT_FAILED): _S.UNINITIALIZED,
    (_S.READY, _E.INIT): _S.INITIALIZING,  # an epoch bump of an idle producer (KIP-360)
    (_S.READY, _E.BEGIN): _S.IN_TRANSACTION,
    (_S.IN_TRANSACTION, _E.COMMIT): _S.COMMITTING,
    (_S.IN_TRANSACTION, _E.ABORT): _S.ABORTING,
    (_S.IN_TRANSACTION, _E.ABORTABLE_ERROR): _S.ABORTABLE_ERROR,
    (_S.COMMITTING, _E.END_DONE): _S.READY,
    (_S.COMMITTING, _E.ABORTABLE_ERROR): _S.ABORTABLE_ERROR,
    (_S.ABORTING, _E.END_DONE): _S.READY,
    (_S.ABORTING, _E.INIT): _S.INITIALIZING,  # abort after an error ends with an epoch bump
    (_S.ABORTABLE_ERROR, _E.ABORT): _S.ABORTING,
    (_S.ABORTABLE_ERROR, _E.ABORTABLE_ERROR): _S.ABORTABLE_ERROR,
    **{(state, _E.FATAL_ERROR): _S.FATAL_ERROR for state in _S},
}

#: States in which a record failure makes the transaction abortable-only.
ABORTABLE_ON_FAILURE: Final = frozenset({_S.IN_TRANSACTION, _S.COMMITTING, _S.ABORTABLE_ERROR})

del _S, _E
