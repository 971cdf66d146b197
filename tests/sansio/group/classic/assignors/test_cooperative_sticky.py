"""The `cooperative-sticky` assignor against Java's `CooperativeStickyAssignorTest` (ported
cases) and seed 001's example played over its two rounds."""

from __future__ import annotations

import pytest
from _java_cases import RackConfig, tp
from _sticky_harness import GENERATION, StickyHarness

from krafka.sansio.group.classic.assignors import (
    NO_GENERATION,
    Cluster,
    CooperativeStickyAssignor,
    RebalanceProtocol,
    Subscription,
    decode_cooperative_sticky_user_data,
    encode_cooperative_sticky_user_data,
)
from krafka.sansio.group.classic.assignors.sticky_assignor import cooperative_member_data
from krafka.structs import TopicPartition

T = "topic"
C1, C2, C3 = "consumer1", "consumer2", "consumer3"


def test_protocols_and_generation_user_data() -> None:
    """testEncodeAndDecodeGeneration / testDecodeGeneration."""
    assignor = CooperativeStickyAssignor()
    assert list(assignor.supported_protocols()) == [
        RebalanceProtocol.COOPERATIVE,
        RebalanceProtocol.EAGER,
    ]
    fresh = Subscription((T,), assignor.subscription_user_data([T], (), NO_GENERATION))
    assert cooperative_member_data(fresh).generation == NO_GENERATION
    later = Subscription((T,), assignor.subscription_user_data([T], (), 10))
    assert cooperative_member_data(later).generation == 10
    assert cooperative_member_data(Subscription((T,))).generation is None
    assert decode_cooperative_sticky_user_data(encode_cooperative_sticky_user_data(7)) == 7


@pytest.mark.parametrize("config", list(RackConfig), ids=lambda c: c.name)
@pytest.mark.parametrize(
    ("count", "first", "second"),
    [(3, [tp(T, 1)], [tp(T, 2)]), (4, [tp(T, 1), tp(T, 3)], [tp(T, 2)])],
)
def test_partition_claimed_twice_is_withheld_until_both_revoke_it(
    config: RackConfig, count: int, first: list[TopicPartition], second: list[TopicPartition]
) -> None:
    h = StickyHarness("cooperative-sticky", config)
    h.topic(T, count)
    subs = {
        C1: h.v2([T], [tp(T, 0), tp(T, 1)], GENERATION, 0),
        C2: h.v2([T], [tp(T, 0), tp(T, 2)], GENERATION, 1),
        C3: h.v2([T], [], GENERATION, 2),
    }
    assignment = h.assign(subs)
    assert (assignment[C1], assignment[C2], assignment[C3]) == (first, second, [])
    h.verify(subs, assignment)


def test_member_data_takes_owned_partitions_from_the_subscription() -> None:
    """testMemberDataWithInconsistentData, ...WithEmptyPartitionsAndEqualGeneration and
    ...AndHigherGeneration: the subscription's partitions, its v2 generation if any."""
    data = encode_cooperative_sticky_user_data(GENERATION)
    member = cooperative_member_data(Subscription((T,), data, (tp(T, 0),)))
    assert (member.partitions, member.generation) == ((tp(T, 0),), GENERATION)
    for user_data_generation in (GENERATION, GENERATION - 1):
        data = encode_cooperative_sticky_user_data(user_data_generation)
        member = cooperative_member_data(Subscription((T,), data, (), GENERATION))
        assert (member.partitions, member.generation) == ((), GENERATION)


def test_unreadable_user_data_counts_as_no_generation() -> None:
    """kafka-python's cooperative members send empty user data and no v2 generation."""
    member = cooperative_member_data(Subscription((T,), b"", (tp(T, 0),)))
    assert (member.partitions, member.generation) == ((tp(T, 0),), NO_GENERATION)


def test_assignor_with_old_version_subscriptions() -> None:
    h = StickyHarness("cooperative-sticky")
    h.topic("topic1", 3)
    topics = ["topic1"]
    subs = {
        C1: h.v1(topics, [tp("topic1", 0)], GENERATION, 0),
        C2: h.v1(topics, [tp("topic1", 1)], GENERATION, 1),
        C3: h.v2(topics, [], GENERATION, 2),
    }
    assert h.verify(subs, h.assign(subs)) == {
        C1: [tp("topic1", 0)],
        C2: [tp("topic1", 1)],
        C3: [tp("topic1", 2)],
    }


def test_uniform_subscription_transfer_ownership_list_is_right() -> None:
    h = StickyHarness("cooperative-sticky")
    h.replication, h.broker_racks, h.consumer_rack = 1, 2, True
    h.topic("topic1", 4)
    subs = {
        "c0": h.v2(["topic1"], [tp("topic1", 0), tp("topic1", 1)], GENERATION, 0),
        "c1": h.v2(["topic1"], [tp("topic1", 2), tp("topic1", 3)], GENERATION, 1),
    }
    transferring = h.transferring(subs)
    assert transferring is not None and len(transferring) == 2


def test_seed_001_example_over_two_rounds() -> None:
    """A third member joins two owning three partitions each: round one only revokes (the
    newcomer gets nothing yet), round two hands over partitions 2 and 5."""
    assignor = CooperativeStickyAssignor()
    cluster = Cluster.of({"orders": 6})
    owned = {"c1": [tp("orders", p) for p in (0, 1, 2)], "c2": [tp("orders", p) for p in (3, 4, 5)]}
    subs = {
        m: Subscription(
            ("orders",), assignor.subscription_user_data(["orders"], ps, 1), tuple(ps), 1
        )
        for m, ps in owned.items()
    }
    subs["c3"] = Subscription(("orders",), assignor.subscription_user_data(["orders"], (), -1))
    first = {m: a.partitions for m, a in assignor.assign(cluster, subs).items()}
    assert first == {
        "c1": (tp("orders", 0), tp("orders", 1)),
        "c2": (tp("orders", 3), tp("orders", 4)),
        "c3": (),
    }
    subs = {m: Subscription(("orders",), None, ps, 2) for m, ps in first.items()}
    second = {m: a.partitions for m, a in assignor.assign(cluster, subs).items()}
    assert second == {**first, "c3": (tp("orders", 2), tp("orders", 5))}
