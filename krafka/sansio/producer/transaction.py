"""The transactional producer's state machine, as an explicit table (state x event -> state).

The driver reports what the user asked for (`BEGIN`, `COMMIT`, `ABORT`) and what the
coordinator answered (`INIT_DONE`, `END_DONE`, errors); anything not in `TRANSITIONS` is an
`InvalidStateError` naming the state and the event. It also tracks which partitions joined
the current transaction (AddPartitionsToTxn must precede the first produce to each) and
whether consumer offsets were added.
"""

from __future__ import annotations

from enum import Enum
from typing import Final

from krafka.errors import InvalidStateError, KrafkaError


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


S, E = TxnState, TxnEvent

TRANSITIONS: Final[dict[tuple[TxnState, TxnEvent], TxnState]] = {
    (S.UNINITIALIZED, E.INIT): S.INITIALIZING,
    (S.INITIALIZING, E.INIT_DONE): S.READY,
    (S.INITIALIZING, E.INIT_FAILED): S.UNINITIALIZED,
    (S.READY, E.BEGIN): S.IN_TRANSACTION,
    (S.IN_TRANSACTION, E.COMMIT): S.COMMITTING,
    (S.IN_TRANSACTION, E.ABORT): S.ABORTING,
    (S.IN_TRANSACTION, E.ABORTABLE_ERROR): S.ABORTABLE_ERROR,
    (S.COMMITTING, E.END_DONE): S.READY,
    (S.COMMITTING, E.ABORTABLE_ERROR): S.ABORTABLE_ERROR,
    (S.ABORTING, E.END_DONE): S.READY,
    (S.ABORTING, E.ABORTABLE_ERROR): S.ABORTABLE_ERROR,
    (S.ABORTABLE_ERROR, E.ABORT): S.ABORTING,
    (S.ABORTABLE_ERROR, E.ABORTABLE_ERROR): S.ABORTABLE_ERROR,
    **{(state, E.FATAL_ERROR): S.FATAL_ERROR for state in S},
}

del S, E


class TransactionManager:
    """State, partitions and offsets of the current transaction of one transactional id."""

    def __init__(self, transactional_id: str, timeout: float) -> None:
        self.transactional_id = transactional_id
        self.timeout = timeout
        self.state = TxnState.UNINITIALIZED
        self.error: KrafkaError | None = None
        self.added: set[tuple[str, int]] = set()
        self.pending: set[tuple[str, int]] = set()
        self.offsets_added = False

    def handle(self, event: TxnEvent, error: KrafkaError | None = None) -> TxnState:
        """Apply `event`; raises `InvalidStateError` when the table has no such transition."""
        new = TRANSITIONS.get((self.state, event))
        if new is None:
            detail = f": {self.error}" if self.error is not None else ""
            raise InvalidStateError(
                f"transaction {self.transactional_id!r}: cannot {event.value} "
                f"in state {self.state.value}{detail}"
            ) from self.error
        if error is not None:
            self.error = error
        self.state = new
        if new in (TxnState.READY, TxnState.IN_TRANSACTION) and event is not TxnEvent.INIT_DONE:
            self.error = None
        if new is TxnState.READY:
            self._reset()
        return new

    def _reset(self) -> None:
        self.added.clear()
        self.pending.clear()
        self.offsets_added = False

    def check_can_send(self) -> None:
        """Records may only be sent inside a transaction."""
        if self.state is not TxnState.IN_TRANSACTION:
            detail = f": {self.error}" if self.error is not None else ""
            raise InvalidStateError(
                f"transaction {self.transactional_id!r}: cannot send in state "
                f"{self.state.value}{detail}"
            ) from self.error

    def may_send_to(self, tp: tuple[str, int]) -> bool:
        """True when `tp` joined the transaction; else it is queued for AddPartitionsToTxn."""
        if tp in self.added:
            return True
        self.pending.add(tp)
        return False

    def take_pending(self) -> list[tuple[str, int]]:
        out = sorted(self.pending - self.added)
        self.pending.clear()
        return out

    def partitions_added(self, tps: list[tuple[str, int]]) -> None:
        self.added.update(tps)

    @property
    def fatal(self) -> bool:
        return self.state is TxnState.FATAL_ERROR
