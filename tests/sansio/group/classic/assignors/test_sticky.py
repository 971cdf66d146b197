"""Both sticky assignors against Java's `AbstractStickyAssignorTest` (ported cases, same
expectations, list order included), each under the three `RackConfig`s as Java runs them."""

from __future__ import annotations

import random

import pytest
from _java_cases import RackConfig, is_fully_balanced, tp
from _sticky_harness import GENERATION, StickyHarness

from krafka.sansio.group.classic.assignors import NO_GENERATION
from krafka.structs import TopicPartition

KINDS = ["sticky", "cooperative-sticky"]
T, T1, T2, T3 = "topic", "topic1", "topic2", "topic3"
C1, C2, C3, C4 = "consumer1", "consumer2", "consumer3", "consumer4"


@pytest.fixture(
    params=[(k, c) for k in KINDS for c in RackConfig], ids=lambda p: f"{p[0]}-{p[1].name}"
)
def h(request: pytest.FixtureRequest) -> StickyHarness:
    kind, config = request.param
    return StickyHarness(kind, config)


def test_one_consumer_no_topic(h: StickyHarness) -> None:
    subs = {"consumer": h.subscription([], 0)}
    assert h.assign(subs) == {"consumer": []}
    assert h.transferring(subs) == {}


def test_one_consumer_nonexistent_topic(h: StickyHarness) -> None:
    h.topic(T, 0)
    subs = {"consumer": h.subscription([T], 0)}
    assert h.assign(subs) == {"consumer": []}
    assert h.transferring(subs) == {}


def test_one_consumer_one_topic(h: StickyHarness) -> None:
    h.topic(T, 3)
    subs = {"consumer": h.subscription([T], 0)}
    assert h.assign(subs) == {"consumer": [tp(T, 0), tp(T, 1), tp(T, 2)]}


def test_only_assigns_partitions_from_subscribed_topics(h: StickyHarness) -> None:
    h.topic(T, 2)
    owned = [tp(T, 0), tp(T, 1), tp("other", 0), tp("other", 1)]
    subs = {"consumer": h.v2([T], owned, GENERATION, 0)}
    assert h.assign(subs) == {"consumer": [tp(T, 0), tp(T, 1)]}
    assert h.transferring(subs) == {}


def test_one_consumer_multiple_topics(h: StickyHarness) -> None:
    h.topic(T1, 1)
    h.topic(T2, 2)
    subs = {"consumer": h.subscription([T1, T2], 0)}
    assert h.assign(subs) == {"consumer": [tp(T1, 0), tp(T2, 0), tp(T2, 1)]}


def test_two_consumers_one_topic(h: StickyHarness) -> None:
    h.topic(T, 2)
    subs = {C1: h.subscription([T], 0), C2: h.subscription([T], 1)}
    assignment = h.verify(subs, h.assign(subs))
    assert assignment == {C1: [tp(T, 0)], C2: [tp(T, 1)]}


def test_multiple_consumers_mixed_topic_subscriptions(h: StickyHarness) -> None:
    h.topic(T1, 3)
    h.topic(T2, 2)
    subs = {C1: h.subscription([T1], 0), C2: h.subscription([T1, T2], 1)}
    subs[C3] = h.subscription([T1], 2)
    assignment = h.assign(subs)
    assert assignment == {
        C1: [tp(T1, 0), tp(T1, 2)],
        C2: [tp(T2, 0), tp(T2, 1)],
        C3: [tp(T1, 1)],
    }
    assert h.transferring(subs) is None
    h.verify(subs, assignment)


def test_two_consumers_two_topics_six_partitions(h: StickyHarness) -> None:
    h.topic(T1, 3)
    h.topic(T2, 3)
    subs = {C1: h.subscription([T1, T2], 0), C2: h.subscription([T1, T2], 1)}
    assert h.assign(subs) == {
        C1: [tp(T1, 0), tp(T1, 2), tp(T2, 1)],
        C2: [tp(T1, 1), tp(T2, 0), tp(T2, 2)],
    }


def test_consumer_owning_min_quota_expected_max_quota(h: StickyHarness) -> None:
    h.topic(T1, 2)
    h.topic(T2, 3)
    topics = [T1, T2]
    subs = {
        C1: h.v2(topics, [tp(T1, 0), tp(T2, 1)], GENERATION, 0),
        C2: h.v2(topics, [tp(T1, 1), tp(T2, 2)], GENERATION, 1),
    }
    assignment = h.assign(subs)
    assert h.transferring(subs) == {}
    assert h.verify(subs, assignment) == {
        C1: [tp(T1, 0), tp(T2, 1), tp(T2, 0)],
        C2: [tp(T1, 1), tp(T2, 2)],
    }


def test_max_quota_consumers_more_than_expected(h: StickyHarness) -> None:
    h.topic(T1, 2)
    h.topic(T2, 2)
    topics = [T1, T2]
    subs = {
        C1: h.v2(topics, [tp(T1, 0), tp(T2, 0)], GENERATION, 0),
        C2: h.v2(topics, [tp(T1, 1), tp(T2, 1)], GENERATION, 1),
        C3: h.v2(topics, [], GENERATION, 2),
    }
    assignment = h.assign(subs)
    assert h.transferring(subs) == {tp(T2, 0): C3}
    assert h.verify(subs, assignment) == {
        C1: [tp(T1, 0)],
        C2: [tp(T1, 1), tp(T2, 1)],
        C3: [tp(T2, 0)],
    }


def test_all_consumers_are_under_min_quota(h: StickyHarness) -> None:
    h.topic(T1, 2)
    h.topic(T2, 3)
    topics = [T1, T2]
    subs = {
        C1: h.v2(topics, [tp(T1, 0)], GENERATION, 0),
        C2: h.v2(topics, [tp(T1, 1)], GENERATION, 1),
        C3: h.v2(topics, [], GENERATION, 2),
    }
    assignment = h.assign(subs)
    assert h.transferring(subs) == {}
    assert h.verify(subs, assignment) == {
        C1: [tp(T1, 0), tp(T2, 1)],
        C2: [tp(T1, 1), tp(T2, 2)],
        C3: [tp(T2, 0)],
    }


def test_add_remove_consumer_one_topic(h: StickyHarness) -> None:
    h.topic(T, 3)
    subs = {C1: h.subscription([T], 0)}
    assignment = h.verify(subs, h.assign(subs))
    assert assignment == {C1: [tp(T, 0), tp(T, 1), tp(T, 2)]}
    subs[C1] = h.v2([T], assignment[C1], GENERATION, 0)
    subs[C2] = h.v2([T], [], GENERATION, 1)
    assignment = h.assign(subs)
    assert h.transferring(subs) == {tp(T, 2): C2}
    assignment = h.verify(subs, assignment)
    assert assignment == {C1: [tp(T, 0), tp(T, 1)], C2: [tp(T, 2)]}
    del subs[C1]
    subs[C2] = h.v2([T], assignment[C2], GENERATION, 1)
    assignment = h.assign(subs)
    assert set(assignment[C2]) == {tp(T, 0), tp(T, 1), tp(T, 2)}
    assert h.transferring(subs) == {}


def _per_topic(assignment: dict[str, list[TopicPartition]], topic: str) -> set[int]:
    return {sum(p.topic == topic for p in ps) for ps in assignment.values()}


def test_topic_balance_after_reassignment(h: StickyHarness) -> None:
    topics = [T1, T2]
    h.topic(T1, 12)
    h.topic(T2, 12)
    subs = {C1: h.subscription(topics, 0)}
    assignment = h.verify(subs, h.assign(subs))
    assert _per_topic(assignment, T1) == _per_topic(assignment, T2) == {12}
    for rounds, (members, per_topic) in enumerate([((C1, C2), 6), ((C1, C2, C3, C4), 3)]):
        for index, member in enumerate(members):
            subs[member] = h.v2(topics, assignment.get(member, []), GENERATION, index)
        assignment = h.verify(subs, h.assign(subs))
        assert _per_topic(assignment, T1) == _per_topic(assignment, T2) == {per_topic}, rounds
        assert is_fully_balanced(assignment)
    del subs[C1], subs[C2]
    subs[C3] = h.v2(topics, assignment[C3], GENERATION, 2)
    subs[C4] = h.v2(topics, assignment[C4], GENERATION, 3)
    assignment = h.assign(subs)
    assert h.transferring(subs) == {}
    assignment = h.verify(subs, assignment)
    assert _per_topic(assignment, T1) == _per_topic(assignment, T2) == {6}


def test_add_remove_two_consumers_two_topics(h: StickyHarness) -> None:
    topics = [T1, T2]
    h.topic(T1, 3)
    h.topic(T2, 4)
    subs = {C1: h.subscription(topics, 0), C2: h.subscription(topics, 1)}
    assignment = h.assign(subs)
    assert assignment == {
        C1: [tp(T1, 0), tp(T1, 2), tp(T2, 1), tp(T2, 3)],
        C2: [tp(T1, 1), tp(T2, 0), tp(T2, 2)],
    }
    subs[C1] = h.v2(topics, assignment[C1], GENERATION, 0)
    subs[C2] = h.v2(topics, assignment[C2], GENERATION, 1)
    subs[C3] = h.v2(topics, [], GENERATION, 2)
    subs[C4] = h.v2(topics, [], GENERATION, 3)
    assignment = h.assign(subs)
    assert h.transferring(subs) == {tp(T1, 2): C3, tp(T2, 3): C3, tp(T2, 2): C4}
    assignment = h.verify(subs, assignment)
    assert assignment == {
        C1: [tp(T1, 0), tp(T2, 1)],
        C2: [tp(T2, 0), tp(T1, 1)],
        C3: [tp(T1, 2), tp(T2, 3)],
        C4: [tp(T2, 2)],
    }
    del subs[C1], subs[C2]
    subs[C3] = h.v2(topics, assignment[C3], GENERATION, 2)
    subs[C4] = h.v2(topics, assignment[C4], GENERATION, 3)
    assignment = h.assign(subs)
    assert assignment == {
        C3: [tp(T1, 2), tp(T2, 3), tp(T1, 0), tp(T2, 1)],
        C4: [tp(T2, 2), tp(T1, 1), tp(T2, 0)],
    }
    assert h.transferring(subs) == {}


def test_poor_round_robin_assignment_scenario(h: StickyHarness) -> None:
    for i in range(1, 6):
        h.topic(f"topic{i}", i % 2 + 1)
    every = [f"topic{i}" for i in range(1, 6)]
    odd = ["topic1", "topic3", "topic5"]
    subs = {
        C1: h.subscription(every, 0),
        C2: h.subscription(odd, 1),
        C3: h.subscription(odd, 2),
        C4: h.subscription(every, 3),
    }
    h.verify(subs, h.assign(subs))


def test_add_remove_topic_two_consumers(h: StickyHarness) -> None:
    h.topic(T, 3)
    subs = {C1: h.subscription([T], 0), C2: h.subscription([T], 1)}
    first = h.verify(subs, h.assign(subs))
    assert sorted(len(p) for p in first.values()) == [1, 2]
    h.topic(T2, 3)
    for index, member in enumerate((C1, C2)):
        subs[member] = h.v2([T, T2], first[member], GENERATION, index)
    second = h.assign(subs)
    assert h.transferring(subs) == {}
    second = h.verify(subs, second)
    assert all(len(second[m]) == 3 and set(first[m]) <= set(second[m]) for m in (C1, C2))
    del h.counts[T]
    for index, member in enumerate((C1, C2)):
        subs[member] = h.v2([T2], second[member], GENERATION, index)
    third = h.assign(subs)
    assert h.transferring(subs) == {}
    third = h.verify(subs, third)
    assert sorted(len(p) for p in third.values()) == [1, 2]
    assert all(set(third[m]) <= set(second[m]) for m in (C1, C2))


def _name(prefix: str, i: int, maximum: int) -> str:
    return f"{prefix}{i:0{len(str(maximum))}d}"


def test_reassignment_after_one_consumer_leaves(h: StickyHarness) -> None:
    for i in range(1, 20):
        h.topic(_name("t", i, 20), i)
    subs = {
        _name("c", i, 20): h.subscription([_name("t", j, 20) for j in range(1, i + 1)], i)
        for i in range(1, 20)
    }
    assignment = h.verify(subs, h.assign(subs))
    for i in range(1, 20):
        member = _name("c", i, 20)
        subs[member] = h.v2(subs[member].topics, assignment[member], GENERATION, i)
    del subs["c10"]
    h.verify(subs, h.assign(subs))


def test_reassignment_after_one_consumer_added(h: StickyHarness) -> None:
    h.topic("topic", 20)
    subs = {_name("c", i, 10): h.subscription(["topic"], i) for i in range(1, 10)}
    assert h.transferring(subs) == {}
    h.verify(subs, h.assign(subs))
    subs[_name("c", 10, 10)] = h.subscription(["topic"], 10)
    assert h.transferring(subs) == {}
    h.verify(subs, h.assign(subs))


def test_same_subscriptions(h: StickyHarness) -> None:
    for i in range(1, 15):
        h.topic(_name("t", i, 15), i)
    every = [_name("t", j, 15) for j in range(1, 15)]
    subs = {_name("c", i, 9): h.subscription(every, i) for i in range(1, 9)}
    assignment = h.verify(subs, h.assign(subs))
    for i in range(1, 9):
        member = _name("c", i, 9)
        subs[member] = h.v2(every, assignment[member], GENERATION, i)
    del subs[_name("c", 5, 9)]
    assert h.transferring(subs) == {}
    h.verify(subs, h.assign(subs))


@pytest.mark.parametrize("kind", KINDS)
def test_subscription_not_equal_and_assign_same_partition_with_3_generations(kind: str) -> None:
    for sequence in [(1, 2, 3), (1, 3, 2), (2, 1, 3), (2, 3, 1), (3, 1, 2), (3, 2, 1)]:
        h = StickyHarness(kind)
        h.topic(T, 6)
        h.topic(T1, 1)
        subs = {
            C1: h.v2([T], [tp(T, 0), tp(T, 2)], sequence[0], 0),
            C2: h.v2([T], [tp(T, 1), tp(T, 2), tp(T, 3)], sequence[1], 1),
            C3: h.v2([T], [tp(T, 2), tp(T, 4), tp(T, 5)], sequence[2], 2),
            C4: h.v2([T1], [tp(T1, 0)], 2, 3),
        }
        assignment = h.assign(subs)
        everything = [p for ps in assignment.values() for p in ps]
        assert len(everything) == len(set(everything))
        assert all(1 <= len(ps) <= 2 for ps in assignment.values()), (sequence, assignment)


def test_move_existing_assignments(h: StickyHarness) -> None:
    for i in range(1, 7):
        h.topic(f"topic{i}", 1)
    subs = {
        C1: h.v2(["topic1", "topic2"], [tp("topic1", 0)], GENERATION, 0),
        C2: h.v2(
            ["topic1", "topic2", "topic3", "topic4"],
            [tp("topic2", 0), tp("topic3", 0)],
            GENERATION,
            1,
        ),
        C3: h.v2(
            ["topic2", "topic3", "topic4", "topic5", "topic6"],
            [tp("topic4", 0), tp("topic5", 0), tp("topic6", 0)],
            GENERATION,
            2,
        ),
    }
    assert h.transferring(subs) is None
    h.verify(subs, h.assign(subs))


def test_stickiness(h: StickyHarness) -> None:
    h.topic(T1, 3)
    subs = {c: h.subscription([T1], i) for i, c in enumerate((C1, C2, C3, C4))}
    assignment = h.verify(subs, h.assign(subs))
    assert all(len(ps) <= 1 for ps in assignment.values())
    before = {m: ps[0] for m, ps in assignment.items() if ps}
    del subs[C1]
    for index, member in enumerate((C2, C3, C4), start=1):
        subs[member] = h.v2([T1], assignment[member], GENERATION, index)
    assert h.transferring(subs) == {}
    assignment = h.verify(subs, h.assign(subs))
    for member, partitions in assignment.items():
        assert len(partitions) == 1
        assert member not in before or before[member] in partitions


def test_assignment_updated_for_deleted_topic(h: StickyHarness) -> None:
    h.topic(T1, 1)
    h.topic(T3, 100)
    subs = {"consumer": h.subscription([T1, T2, T3], 0)}
    assignment = h.assign(subs)
    assert len(assignment["consumer"]) == 101


def test_no_exception_when_only_subscribed_topic_deleted(h: StickyHarness) -> None:
    h.topic(T, 3)
    subs = {"consumer": h.subscription([T], 0)}
    assignment = h.assign(subs)
    subs["consumer"] = h.v2([T], assignment["consumer"], GENERATION, 0)
    h.counts.clear()
    assert h.assign(subs) == {"consumer": []}
    assert h.transferring(subs) == {}


def _sublist(rng: random.Random, topics: list[str]) -> list[str]:
    return sorted(rng.sample(topics, rng.randint(1, len(topics))))


@pytest.mark.parametrize("kind", KINDS)
def test_reassignment_with_random_subscriptions_and_changes(kind: str) -> None:
    rng = random.Random(7)
    for _ in range(15):
        h = StickyHarness(kind)
        topics = [_name("t", i, 20) for i in range(rng.randint(10, 19))]
        for i, topic in enumerate(topics):
            h.topic(topic, i + 1)

        members = [_name("c", i, 40) for i in range(rng.randint(20, 39))]
        subs = {m: h.subscription(_sublist(rng, topics), i) for i, m in enumerate(members)}
        assignment = h.verify(subs, h.assign(subs))
        subs = {
            m: h.v2(_sublist(rng, topics), assignment[m], GENERATION, i)
            for i, m in enumerate(members)
        }
        h.verify(subs, h.assign(subs))


def test_all_consumers_reach_expected_quota_and_are_considered_filled(h: StickyHarness) -> None:
    h.topic(T, 4)
    subs = {
        C1: h.v2([T], [tp(T, 0), tp(T, 1)], GENERATION, 0),
        C2: h.v2([T], [tp(T, 2)], GENERATION, 1),
        C3: h.v2([T], [], GENERATION, 2),
    }
    assert h.assign(subs) == {C1: [tp(T, 0), tp(T, 1)], C2: [tp(T, 2)], C3: [tp(T, 3)]}
    assert h.transferring(subs) == {}


@pytest.mark.parametrize("stale_generation", [9, NO_GENERATION])
def test_owned_partitions_are_invalidated_for_consumer_with_stale_generation(
    h: StickyHarness, stale_generation: int
) -> None:
    """...WithStaleGeneration and ...WithNoGeneration."""
    h.topic(T, 3)
    h.topic(T2, 3)
    owned = [tp(T, 0), tp(T, 2), tp(T2, 1)]
    subs = {C1: h.v2([T, T2], owned, 10, 0), C2: h.v2([T, T2], owned, stale_generation, 1)}
    assignment = h.assign(subs)
    assert set(assignment[C1]) == set(owned)
    assert set(assignment[C2]) == {tp(T, 1), tp(T2, 0), tp(T2, 2)}
    assert h.transferring(subs) == {}


def test_owned_partitions_are_invalidated_for_consumer_with_multiple_generations(
    h: StickyHarness,
) -> None:
    h.topic(T, 3)
    h.topic(T2, 3)
    subs = {
        C1: h.v2([T, T2], [tp(T, 0), tp(T2, 1), tp(T, 1)], 10, 0),
        C2: h.v2([T, T2], [tp(T, 0), tp(T2, 1), tp(T2, 2)], 8, 1),
    }
    assignment = h.assign(subs)
    assert set(assignment[C1]) == {tp(T, 0), tp(T2, 1), tp(T, 1)}
    assert set(assignment[C2]) == {tp(T, 2), tp(T2, 2), tp(T2, 0)}
    assert h.transferring(subs) == {}


def test_partitions_claimed_twice_in_one_generation_are_transferring(h: StickyHarness) -> None:
    h.topic(T, 3)
    subs = {
        C1: h.v2([T], [tp(T, 0), tp(T, 1)], GENERATION, 0),
        C2: h.v2([T], [tp(T, 0), tp(T, 2)], GENERATION, 1),
        C3: h.v2([T], [], GENERATION, 2),
    }
    assignment = h.assign(subs)
    assert h.transferring(subs) == {tp(T, 0): C3}
    assert h.verify(subs, assignment) == {C1: [tp(T, 1)], C2: [tp(T, 2)], C3: [tp(T, 0)]}


def test_ensure_partitions_assigned_to_highest_generation(h: StickyHarness) -> None:
    for topic in (T, T2, T3):
        h.topic(topic, 3)
    topics = [T, T2, T3]
    subs = {
        C1: h.v2(topics, [tp(T, 0), tp(T2, 0), tp(T3, 0)], 10, 0),
        C2: h.v2(topics, [tp(T, 1), tp(T2, 1), tp(T3, 1)], 9, 1),
        C3: h.v2(topics, [tp(T2, 1), tp(T3, 0), tp(T3, 2)], 8, 1),
    }
    assignment = h.assign(subs)
    assert set(assignment[C1]) == {tp(T, 0), tp(T2, 0), tp(T3, 0)}
    assert set(assignment[C2]) == {tp(T, 1), tp(T2, 1), tp(T3, 1)}
    assert set(assignment[C3]) == {tp(T, 2), tp(T2, 2), tp(T3, 2)}
    assert h.transferring(subs) == {}


def test_no_reassignment_on_current_members(h: StickyHarness) -> None:
    for topic in (T, T1, T2, T3):
        h.topic(topic, 3)
    topics = [T, T2, T3, T1]
    subs = {
        C1: h.v2(topics, [], NO_GENERATION, 0),
        C2: h.v2(topics, [tp(T, 0), tp(T2, 0), tp(T1, 0)], 9, 1),
        C3: h.v2(topics, [tp(T3, 2), tp(T2, 2), tp(T1, 1)], 8, 2),
        C4: h.v2(topics, [tp(T3, 1), tp(T, 1), tp(T, 2)], 7, 3),
    }
    assignment = h.assign(subs)
    assert set(assignment[C1]) == {tp(T1, 2), tp(T2, 1), tp(T3, 0)}
    assert h.transferring(subs) == {}
    h.verify(subs, assignment)
