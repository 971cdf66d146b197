"""The transaction state table: every (state, event) pair, driven exhaustively."""

from __future__ import annotations

import itertools

import pytest

from krafka.errors import InvalidStateError, KrafkaError
from krafka.sansio.producer import TRANSITIONS, TransactionManager, TxnEvent, TxnState

S, E = TxnState, TxnEvent

EXPECTED = {
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


def manager_in(state: TxnState) -> TransactionManager:
    txn = TransactionManager("tx", 60.0)
    txn.state = state
    return txn


@pytest.mark.parametrize(("state", "event"), list(itertools.product(S, E)))
def test_every_pair_follows_the_table(state: TxnState, event: TxnEvent) -> None:
    txn = manager_in(state)
    expected = EXPECTED.get((state, event))
    assert TRANSITIONS.get((state, event)) == expected
    if expected is None:
        with pytest.raises(InvalidStateError, match=f"cannot {event.value} in state"):
            txn.handle(event)
        assert txn.state is state
    else:
        assert txn.handle(event) is expected
        assert txn.state is expected


def test_a_whole_transaction() -> None:
    txn = TransactionManager("tx", 60.0)
    for event in (E.INIT, E.INIT_DONE, E.BEGIN):
        txn.handle(event)
    txn.check_can_send()
    assert not txn.may_send_to(("t", 0))
    assert txn.take_pending() == [("t", 0)]
    txn.partitions_added([("t", 0)])
    assert txn.may_send_to(("t", 0))
    txn.offsets_added = True
    txn.handle(E.COMMIT)
    with pytest.raises(InvalidStateError, match="cannot send in state committing"):
        txn.check_can_send()
    txn.handle(E.END_DONE)
    assert txn.state is S.READY and not txn.added and not txn.offsets_added


def test_abortable_error_is_reported_until_aborted() -> None:
    txn = manager_in(S.IN_TRANSACTION)
    txn.handle(E.ABORTABLE_ERROR, KrafkaError("batch failed"))
    with pytest.raises(InvalidStateError, match="batch failed"):
        txn.check_can_send()
    with pytest.raises(InvalidStateError):
        txn.handle(E.COMMIT)
    txn.handle(E.ABORT)
    txn.handle(E.END_DONE)
    assert txn.error is None and txn.state is S.READY


def test_fatal_is_final() -> None:
    txn = manager_in(S.READY)
    txn.handle(E.FATAL_ERROR, KrafkaError("fenced"))
    assert txn.fatal
    for event in E:
        if event is not E.FATAL_ERROR:
            with pytest.raises(InvalidStateError, match="fenced"):
                txn.handle(event)
