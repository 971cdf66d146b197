"""Rack-aware sticky assignment (KIP-881) against Java's `AbstractStickyAssignorTest`
rack cases, for both sticky assignors.

Java runs some lines with a test-only switch forcing rack logic even when every partition is
on every rack; those lines expect the same result as without it, which is what krafka (without
the switch) computes, so they are kept."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pytest
from _java_cases import Assign, null_racks, racks, verify_rack_assignment

from krafka.sansio.group.classic.assignors import Cluster, CooperativeStickyAssignor, StickyAssignor
from krafka.sansio.group.classic.assignors import Subscription as Sub
from krafka.structs import TopicPartition

TOPICS = {"t1": 6, "t2": 7, "t3": 2}
EVERY = ["t1", "t2", "t3"]


def assigner(kind: str) -> Assign:
    assignor = CooperativeStickyAssignor() if kind == "cooperative-sticky" else StickyAssignor()

    def assign(cluster: Cluster, subs: Mapping[str, Sub]) -> dict[str, Sequence[TopicPartition]]:
        return {m: a.partitions for m, a in assignor.assign(cluster, subs).items()}

    return assign


def _both(
    kind: str,
    rf: int,
    brokers: list[str | None],
    consumers: list[str | None],
    topics: list[list[str]],
    expected: list[str],
    mismatches: int,
) -> None:
    """Java's `verifyUniformSubscription` / `verifyNonEqualSubscription`: without owned
    partitions, then owning the expected result (which must then stay put)."""
    assign = assigner(kind)
    for owned in (None, expected):
        verify_rack_assignment(
            assign, TOPICS, rf, brokers, consumers, topics, owned, expected, mismatches
        )


@pytest.mark.parametrize("kind", ["sticky", "cooperative-sticky"])
def test_rack_aware_assignment_with_uniform_subscription(kind: str) -> None:
    topics = [EVERY] * 3
    balanced = [
        "t1-0, t1-3, t2-0, t2-3, t2-6",
        "t1-1, t1-4, t2-1, t2-4, t3-0",
        "t1-2, t1-5, t2-2, t2-5, t3-1",
    ]
    for rf, brokers, consumers, mismatches in [
        (3, null_racks(3), racks(3), -1),
        (3, racks(3), null_racks(3), -1),
        (3, racks(3), racks(3), 0),
        (4, racks(4), racks(3), 0),
        (3, racks(3), ["d", "e", "f"], -1),
        (3, racks(3), [None, "e", "f"], -1),
        (1, racks(3), racks(3), 0),
        (2, racks(3), racks(3), 0),
        (3, racks(2), racks(3), 5),
    ]:
        _both(kind, rf, brokers, consumers, topics, balanced, mismatches)
    owned = [
        "t1-0, t1-1, t1-2, t1-3, t1-4",
        "t1-5, t2-0, t2-1, t2-2, t2-3",
        "t2-4, t2-5, t2-6, t3-0, t3-1",
    ]
    assign = assigner(kind)
    cooperative = ["t1-0, t1-3", "t2-1", "t2-5, t3-1"]
    improved = cooperative if kind == "cooperative-sticky" else balanced
    verify_rack_assignment(assign, TOPICS, 1, racks(3), racks(3), topics, owned, improved, 0)
    verify_rack_assignment(assign, TOPICS, 3, racks(3), racks(3), topics, balanced, balanced, 0)


@pytest.mark.parametrize("kind", ["sticky", "cooperative-sticky"])
def test_rack_aware_assignment_with_non_equal_subscription(kind: str) -> None:
    topics = [EVERY, EVERY, ["t1", "t3"]]
    general = [
        "t1-5, t2-0, t2-2, t2-4, t2-6",
        "t1-3, t2-1, t2-3, t2-5, t3-0",
        "t1-0, t1-1, t1-2, t1-4, t3-1",
    ]
    for rf, brokers, consumers, mismatches in [
        (3, null_racks(3), racks(3), -1),
        (3, racks(3), null_racks(3), -1),
        (3, racks(3), racks(3), 0),
        (4, racks(4), racks(3), 0),
        (3, racks(3), ["d", "e", "f"], -1),
        (3, racks(3), [None, "e", "f"], -1),
        (3, racks(2), racks(3), 5),
    ]:
        _both(kind, rf, brokers, consumers, topics, general, mismatches)
    aligned_rf1 = [
        "t1-3, t2-0, t2-2, t2-3, t2-6",
        "t1-4, t2-1, t2-4, t2-5, t3-0",
        "t1-0, t1-1, t1-2, t1-5, t3-1",
    ]
    _both(kind, 1, racks(3), racks(3), topics, aligned_rf1, 4)
    aligned_rf2 = [
        "t1-3, t2-0, t2-2, t2-5, t2-6",
        "t1-0, t2-1, t2-3, t2-4, t3-0",
        "t1-1, t1-2, t1-4, t1-5, t3-1",
    ]
    _both(kind, 2, racks(3), racks(3), topics, aligned_rf2, 0)
    owned = [
        "t1-0, t1-1, t1-2, t1-3, t1-4",
        "t1-5, t2-0, t2-1, t2-2, t2-3",
        "t2-4, t2-5, t2-6, t3-0, t3-1",
    ]
    assign = assigner(kind)
    if kind == "sticky":
        verify_rack_assignment(assign, TOPICS, 1, racks(3), racks(3), topics, owned, aligned_rf1, 4)
        verify_rack_assignment(assign, TOPICS, 3, racks(3), racks(3), topics, owned, general, 0)
        return
    intermediate = ["t1-3", "t2-1", "t3-1"]
    verify_rack_assignment(assign, TOPICS, 1, racks(3), racks(3), topics, owned, intermediate, 0)
    verify_rack_assignment(
        assign, TOPICS, 1, racks(3), racks(3), topics, intermediate, aligned_rf1, 4
    )
    final = [
        "t1-2, t1-3, t1-4, t2-4, t2-5",
        "t2-0, t2-1, t2-2, t2-3, t2-6",
        "t1-0, t1-1, t1-5, t3-0, t3-1",
    ]
    intermediate = ["t1-2, t1-3, t1-4", "t2-0, t2-1, t2-2, t2-3", "t3-0, t3-1"]
    verify_rack_assignment(assign, TOPICS, 3, racks(3), racks(3), topics, owned, intermediate, 0)
    verify_rack_assignment(assign, TOPICS, 3, racks(3), racks(3), topics, intermediate, final, 0)
