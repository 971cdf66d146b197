"""The KIP-848 / share-group member states: Java's previousValidStates table, exactly."""

from __future__ import annotations

import itertools

import pytest

from krafka.errors import InvalidStateError
from krafka.sansio.group.membership.state import (
    PREVIOUS_VALID,
    MembershipState,
    check_move,
    may_move,
)

S = MembershipState
# Java's MemberState static block, transcribed.
JAVA = {
    S.STABLE: {S.JOINING, S.ACKNOWLEDGING, S.RECONCILING},
    S.RECONCILING: {S.STABLE, S.JOINING, S.ACKNOWLEDGING, S.RECONCILING},
    S.ACKNOWLEDGING: {S.RECONCILING},
    S.FATAL: {
        S.JOINING,
        S.STABLE,
        S.RECONCILING,
        S.ACKNOWLEDGING,
        S.PREPARE_LEAVING,
        S.LEAVING,
        S.UNSUBSCRIBED,
    },
    S.FENCED: {S.JOINING, S.STABLE, S.RECONCILING, S.ACKNOWLEDGING, S.PREPARE_LEAVING, S.LEAVING},
    S.JOINING: {S.FENCED, S.UNSUBSCRIBED, S.STALE},
    S.PREPARE_LEAVING: {S.JOINING, S.STABLE, S.RECONCILING, S.ACKNOWLEDGING, S.UNSUBSCRIBED},
    S.LEAVING: {S.PREPARE_LEAVING},
    S.UNSUBSCRIBED: {S.PREPARE_LEAVING, S.LEAVING, S.FENCED},
    S.STALE: {S.LEAVING},
}


def test_every_state_has_its_java_row() -> None:
    assert set(PREVIOUS_VALID) == set(S)
    assert {state: set(prev) for state, prev in PREVIOUS_VALID.items()} == JAVA


@pytest.mark.parametrize(("current", "new"), list(itertools.product(S, S)))
def test_moves_follow_the_table(current: MembershipState, new: MembershipState) -> None:
    allowed = current is new or current in JAVA[new]
    assert may_move(current, new) is allowed
    if allowed:
        assert check_move(current, new) is new
    else:
        with pytest.raises(InvalidStateError):
            check_move(current, new)


def test_new_assignments_are_taken_where_java_takes_them() -> None:
    takes = {s for s in S if s.can_handle_new_assignment}
    assert takes == {S.STABLE, S.JOINING, S.ACKNOWLEDGING, S.RECONCILING}


def test_heartbeat_states() -> None:
    assert {s for s in S if not s.heartbeats} == {S.UNSUBSCRIBED, S.FENCED, S.FATAL, S.STALE}
    assert {s for s in S if s.heartbeat_now} == {S.ACKNOWLEDGING, S.LEAVING, S.JOINING}
    assert {s for s in S if s.leaving} == {S.PREPARE_LEAVING, S.LEAVING}
