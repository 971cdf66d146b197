"""The eager `sticky` assignor against Java's `StickyAssignorTest` (ported cases): its
previous assignment travels in the user data, whatever the subscription says."""

from __future__ import annotations

import struct

import pytest
from _java_cases import RackConfig, is_fully_balanced, tp
from _sticky_harness import GENERATION, StickyHarness

from krafka.sansio.group.classic.assignors import (
    Cluster,
    StickyAssignor,
    Subscription,
    encode_sticky_user_data,
)
from krafka.sansio.group.classic.assignors.sticky_assignor import sticky_member_data
from krafka.structs import TopicPartition

T, T2, T3 = "topic", "topic2", "topic3"
C1, C2, C3 = "consumer1", "consumer2", "consumer3"
CONFIGS = list(RackConfig)


@pytest.fixture(params=CONFIGS, ids=lambda c: c.name)
def h(request: pytest.FixtureRequest) -> StickyHarness:
    return StickyHarness("sticky", request.param)


def test_member_data_from_every_subscription_version() -> None:
    h = StickyHarness("sticky")
    owned = [tp("topic1", 0), tp("topic2", 1)]
    for build in (h.v0, h.v1, h.v2):
        subscription = build([T], owned, GENERATION, 0)
        assert subscription is not None
        data = sticky_member_data(subscription)
        assert (list(data.partitions), data.generation) == (owned, GENERATION)


@pytest.mark.parametrize(
    ("count", "expected"),
    [
        (3, ([tp(T, 1)], [tp(T, 2)], [tp(T, 0)])),
        (4, ([tp(T, 1), tp(T, 3)], [tp(T, 2)], [tp(T, 0)])),
    ],
)
def test_partitions_claimed_twice_in_one_generation_are_invalidated(
    h: StickyHarness, count: int, expected: tuple[list[TopicPartition], ...]
) -> None:
    h.topic(T, count)
    subs = {
        C1: h.v2([T], [tp(T, 0), tp(T, 1)], GENERATION, 0),
        C2: h.v2([T], [tp(T, 0), tp(T, 2)], GENERATION, 1),
        C3: h.v2([T], [], GENERATION, 2),
    }
    assignment = h.verify(subs, h.assign(subs))
    assert (assignment[C1], assignment[C2], assignment[C3]) == expected
    assert is_fully_balanced(assignment)


@pytest.mark.parametrize("equal", [True, False])
def test_assignment_with_multiple_generations_1(h: StickyHarness, equal: bool) -> None:
    every = [T, T2]
    second = every if equal else [T]
    h.topic(T, 6)
    h.topic(T2, 6)
    subs = {C1: h.subscription(every, 0), C2: h.subscription(second, 1)}
    subs[C3] = h.subscription(every, 2)
    r1 = h.verify(subs, h.assign(subs))
    assert [len(r1[c]) for c in (C1, C2, C3)] == [4, 4, 4]
    subs[C1] = h.v2(every, r1[C1], GENERATION, 0)
    subs[C2] = h.v2(second, r1[C2], GENERATION, 1)
    del subs[C3]
    r2 = h.verify(subs, h.assign(subs))
    assert len(r2[C1]) == len(r2[C2]) == 6
    if equal:
        assert set(r1[C1]) <= set(r2[C1])
    assert set(r1[C2]) <= set(r2[C2])
    assert set(r2[C2]) & set(r1[C3])
    del subs[C1]
    subs[C2] = h.v2(second, r2[C2], 2, 1)
    subs[C3] = h.v2(every, r1[C3], 1, 2)
    r3 = h.verify(subs, h.assign(subs))
    assert len(r3[C2]) == len(r3[C3]) == 6
    assert not set(r3[C2]) & set(r3[C3])


@pytest.mark.parametrize("equal", [True, False])
def test_assignment_with_multiple_generations_2(h: StickyHarness, equal: bool) -> None:
    every = [T, T2, T3]
    first = every if equal else [T]
    third = every if equal else [T, T2]
    for topic in every:
        h.topic(topic, 4)
    subs = {C1: h.subscription(first, 0), C2: h.subscription(every, 1)}
    subs[C3] = h.subscription(third, 2)
    r1 = h.verify(subs, h.assign(subs))
    assert [len(r1[c]) for c in (C1, C2, C3)] == [4, 4, 4]
    del subs[C1], subs[C3]
    subs[C2] = h.v2(every, r1[C2], 1, 1)
    r2 = h.verify(subs, h.assign(subs))
    assert len(r2[C2]) == 12 and set(r1[C2]) <= set(r2[C2])
    subs[C1] = h.v2(first, r1[C1], 1, 0)
    subs[C2] = h.v2(every, r2[C2], 2, 1)
    subs[C3] = h.v2(third, r1[C3], 1, 2)
    r3 = h.verify(subs, h.assign(subs))
    assert [len(r3[c]) for c in (C1, C2, C3)] == [4, 4, 4]


@pytest.mark.parametrize("equal", [True, False])
def test_assignment_with_conflicting_previous_generations(h: StickyHarness, equal: bool) -> None:
    every = [T, T2, T3]
    for topic in every:
        h.topic(topic, 4)
    first = every if equal else [T]
    second = every if equal else [T, T2]
    c1 = (
        [tp(T, 0), tp(T, 1), tp(T, 2), tp(T2, 2), tp(T2, 3), tp(T3, 0)]
        if equal
        else [tp(T, 0), tp(T, 1), tp(T, 2), tp(T, 3)]
    )
    c2 = [tp(T, 0), tp(T, 1), tp(T2, 0), tp(T2, 1), tp(T2, 2), tp(T2, 3)]
    c3 = [tp(T, 2), tp(T, 3), tp(T3, 0), tp(T3, 1), tp(T3, 2), tp(T3, 3)]
    subs = {C1: h.v2(first, c1, 1, 0), C2: h.v2(second, c2, 2, 1), C3: h.v2(every, c3, 2, 2)}
    assignment = h.verify(subs, h.assign(subs))
    assert [len(assignment[c]) for c in (C1, C2, C3)] == [4, 4, 4]
    assert set(assignment[C2]) <= set(c2)
    assert set(assignment[C3]) <= set(c3)


def _v0_user_data(partitions: list[TopicPartition]) -> bytes:
    """Java's STICKY_ASSIGNOR_USER_DATA_V0: the previous assignment without a generation."""
    topic = T.encode()
    numbers = [p.partition for p in partitions]
    return (
        struct.pack(">ih", 1, len(topic))
        + topic
        + struct.pack(f">i{len(numbers)}i", len(numbers), *numbers)
    )


def test_schema_backward_compatibility(h: StickyHarness) -> None:
    h.topic(T, 3)
    c1_owned, c2_owned = [tp(T, 0), tp(T, 2)], [tp(T, 1)]
    subs = {
        C1: h.v2([T], c1_owned, 1, 0),
        C2: Subscription((T,), _v0_user_data(c2_owned), rack_id=h.rack(1)),
        C3: h.subscription([T], 2),
    }
    assignment = h.verify(subs, h.assign(subs))
    assert [len(assignment[c]) for c in (C1, C2, C3)] == [1, 1, 1]
    assert set(assignment[C1]) <= set(c1_owned)
    assert set(assignment[C2]) <= set(c2_owned)


def test_member_data_follows_user_data_not_the_subscription() -> None:
    """testMemberDataWithInconsistentData and testMemberDataWillHonorUserData."""
    data = StickyAssignor().subscription_user_data([T], [tp(T, 1)], GENERATION)
    inconsistent = Subscription((T,), data, (tp(T, 0),))
    member = sticky_member_data(inconsistent)
    assert (member.partitions, member.generation) == ((tp(T, 1),), GENERATION)
    owned = [tp("topic1", 0), tp("topic2", 1)]
    honoured = Subscription((T,), encode_sticky_user_data(owned, 0), (), GENERATION)
    member = sticky_member_data(honoured)
    assert (list(member.partitions), member.generation) == (owned, 0)


def test_assignor_with_old_version_subscriptions() -> None:
    h = StickyHarness("sticky")
    h.topic("topic1", 3)
    topics = ["topic1"]
    old = h.v0(topics, [tp("topic1", 0)], GENERATION, 0)
    assert old is not None
    subs = {
        C1: old,
        C2: h.v1(topics, [tp("topic1", 1)], GENERATION, 1),
        C3: h.v2(topics, [], GENERATION, 2),
    }
    assert h.assign(subs) == {
        C1: [tp("topic1", 0)],
        C2: [tp("topic1", 1)],
        C3: [tp("topic1", 2)],
    }


def test_seed_001_example_a_joining_member_takes_one_from_each() -> None:
    """Seed 001: 6 partitions on two members, a third joins: each keeps two, the newcomer
    gets partitions 2 and 5."""
    assignor = StickyAssignor()
    before = {
        "c1": [tp("orders", p) for p in (0, 1, 2)],
        "c2": [tp("orders", p) for p in (3, 4, 5)],
    }
    subs = {
        m: Subscription(("orders",), assignor.subscription_user_data(["orders"], ps, 1))
        for m, ps in before.items()
    }
    subs["c3"] = Subscription(("orders",), assignor.subscription_user_data(["orders"], (), -1))
    result = assignor.assign(Cluster.of({"orders": 6}), subs)
    assert {m: a.partitions for m, a in result.items()} == {
        "c1": (tp("orders", 0), tp("orders", 1)),
        "c2": (tp("orders", 3), tp("orders", 4)),
        "c3": (tp("orders", 2), tp("orders", 5)),
    }
