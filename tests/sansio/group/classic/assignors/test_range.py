"""The range assignor against Java's `RangeAssignorTest` (ported cases, same expectations)
and seed 001's example."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pytest
from _java_cases import (
    ALL_RACKS,
    RackConfig,
    broker_racks_for,
    null_racks,
    racks,
    replica_racks,
    tp,
    verify_rack_assignment,
)

from krafka.sansio.group.classic.assignors import Cluster, RangeAssignor, Subscription
from krafka.structs import TopicPartition

T1, T2 = "topic1", "topic2"
C1, C2, C3 = "consumer1", "consumer2", "consumer3"


def assign(cluster: Cluster, subs: Mapping[str, Subscription]) -> dict[str, list[TopicPartition]]:
    return {m: list(a.partitions) for m, a in RangeAssignor().assign(cluster, subs).items()}


class RangeCase:
    """`RangeAssignorTest`'s fixture: racks per `RackConfig`, replicas starting at broker 0."""

    def __init__(self, config: RackConfig, max_consumers: int = 3) -> None:
        self.replication = max_consumers
        self.broker_racks = 0 if config is RackConfig.NO_BROKER_RACK else max_consumers
        self.consumer_rack = config is not RackConfig.NO_CONSUMER_RACK

    def cluster(self, topics: Mapping[str, int]) -> Cluster:
        brokers = broker_racks_for(self.replication, self.broker_racks)
        replicas: dict[TopicPartition, frozenset[str]] = {}
        for topic, count in topics.items():
            replicas.update(replica_racks(topic, count, self.replication, brokers, 0))
        return Cluster(dict(topics), replicas)

    def sub(self, topics: Sequence[str], index: int, instance: str | None = None) -> Subscription:
        count = self.broker_racks if self.broker_racks > 0 else len(ALL_RACKS)
        rack = ALL_RACKS[index % count] if self.consumer_rack else None
        return Subscription(tuple(topics), rack_id=rack, group_instance_id=instance)


CONFIGS = list(RackConfig)


def test_seed_001_example() -> None:
    subs = {f"consumer{i}": Subscription(("orders",)) for i in (1, 2, 3)}
    result = assign(Cluster.of({"orders": 6}), subs)
    assert result == {
        "consumer1": [tp("orders", 0), tp("orders", 1)],
        "consumer2": [tp("orders", 2), tp("orders", 3)],
        "consumer3": [tp("orders", 4), tp("orders", 5)],
    }


@pytest.mark.parametrize("config", CONFIGS)
def test_one_consumer_no_topic_and_nonexistent_topic(config: RackConfig) -> None:
    case = RangeCase(config)
    assert assign(case.cluster({}), {C1: case.sub([], 0)}) == {C1: []}
    assert assign(case.cluster({}), {C1: case.sub([T1], 0)}) == {C1: []}


@pytest.mark.parametrize("config", CONFIGS)
def test_only_assigns_partitions_from_subscribed_topics(config: RackConfig) -> None:
    case = RangeCase(config)
    result = assign(case.cluster({T1: 3, "other": 3}), {C1: case.sub([T1], 0)})
    assert result == {C1: [tp(T1, 0), tp(T1, 1), tp(T1, 2)]}


@pytest.mark.parametrize("config", CONFIGS)
def test_one_consumer_multiple_topics(config: RackConfig) -> None:
    case = RangeCase(config)
    result = assign(case.cluster({T1: 1, T2: 2}), {C1: case.sub([T1, T2], 0)})
    assert result == {C1: [tp(T1, 0), tp(T2, 0), tp(T2, 1)]}


@pytest.mark.parametrize("config", CONFIGS)
@pytest.mark.parametrize(
    ("count", "expected"), [(1, ([tp(T1, 0)], [])), (2, ([tp(T1, 0)], [tp(T1, 1)]))]
)
def test_two_consumers_one_topic(
    config: RackConfig, count: int, expected: tuple[list[TopicPartition], ...]
) -> None:
    case = RangeCase(config)
    result = assign(case.cluster({T1: count}), {C1: case.sub([T1], 0), C2: case.sub([T1], 1)})
    assert (result[C1], result[C2]) == expected


@pytest.mark.parametrize("config", CONFIGS)
def test_multiple_consumers_mixed_topics(config: RackConfig) -> None:
    case = RangeCase(config)
    subs = {C1: case.sub([T1], 0), C2: case.sub([T1, T2], 1), C3: case.sub([T1], 2)}
    result = assign(case.cluster({T1: 3, T2: 2}), subs)
    assert result == {
        C1: [tp(T1, 0)],
        C2: [tp(T1, 1), tp(T2, 0), tp(T2, 1)],
        C3: [tp(T1, 2)],
    }


@pytest.mark.parametrize("config", CONFIGS)
def test_two_consumers_two_topics_six_partitions(config: RackConfig) -> None:
    case = RangeCase(config)
    subs = {C1: case.sub([T1, T2], 0), C2: case.sub([T1, T2], 1)}
    result = assign(case.cluster({T1: 3, T2: 3}), subs)
    assert result[C1] == [tp(T1, 0), tp(T1, 1), tp(T2, 0), tp(T2, 1)]
    assert result[C2] == [tp(T1, 2), tp(T2, 2)]


@pytest.mark.parametrize("config", CONFIGS)
@pytest.mark.parametrize("high_is_static", [True, False])
def test_static_members_sort_by_instance_id_before_dynamic_ones(
    config: RackConfig, high_is_static: bool
) -> None:
    """testTwoStaticConsumersTwoTopicsSixPartitions and
    testOneStaticConsumerAndOneDynamicConsumerTwoTopicsSixPartitions."""
    case = RangeCase(config)
    low, high = "consumer-b", "consumer-a"
    subs = {
        low: case.sub([T1, T2], 0, "instance1"),
        high: case.sub([T1, T2], 1, "instance2" if high_is_static else None),
    }
    result = assign(case.cluster({T1: 3, T2: 3}), subs)
    assert result[low] == [tp(T1, 0), tp(T1, 1), tp(T2, 0), tp(T2, 1)]
    assert result[high] == [tp(T1, 2), tp(T2, 2)]


@pytest.mark.parametrize("config", CONFIGS)
def test_static_member_range_assignment_persistent(config: RackConfig) -> None:
    case = RangeCase(config, 5)
    cluster = case.cluster({T1: 5, T2: 4})
    subs = {f"consumer{i}": case.sub([T1, T2], i - 1, f"instance{i}") for i in (1, 2, 3)}
    subs["consumer4"] = case.sub([T1, T2], 3)
    expected = {
        "consumer1": [tp(T1, 0), tp(T1, 1), tp(T2, 0)],
        "consumer2": [tp(T1, 2), tp(T2, 1)],
        "consumer3": [tp(T1, 3), tp(T2, 2)],
        "consumer4": [tp(T1, 4), tp(T2, 3)],
    }
    assert assign(cluster, subs) == expected
    del subs["consumer4"]
    subs["consumer5"] = case.sub([T1, T2], 4)
    expected["consumer5"] = expected.pop("consumer4")
    assert assign(cluster, subs) == expected


def _by_instance(
    cluster: Cluster, subs: Mapping[str, Subscription]
) -> dict[str | None, list[TopicPartition]]:
    result = assign(cluster, subs)
    return {s.group_instance_id: result[m] for m, s in subs.items()}


def _check_persistent_after_member_id_changes(
    cluster: Cluster, case: RangeCase, expected: list[str]
) -> None:
    subs = {f"consumer{i}": case.sub([T1, T2], i - 1, f"instance{i}") for i in (1, 2, 3)}
    before = _by_instance(cluster, subs)
    assert {k: ", ".join(map(str, v)) for k, v in before.items()} == {
        f"instance{i}": text for i, text in zip((1, 2, 3), expected, strict=True)
    }
    subs["consumer4"] = subs.pop("consumer3")
    subs["consumer5"] = subs.pop("consumer2")
    assert _by_instance(cluster, subs) == before


@pytest.mark.parametrize("config", CONFIGS)
def test_static_member_assignment_persists_after_member_id_changes(config: RackConfig) -> None:
    case = RangeCase(config)
    expected = [
        "topic1-0, topic1-1, topic2-0, topic2-1",
        "topic1-2, topic1-3, topic2-2, topic2-3",
        "topic1-4, topic2-4",
    ]
    _check_persistent_after_member_id_changes(case.cluster({T1: 5, T2: 5}), case, expected)


def test_rack_aware_static_member_assignment_persists_after_member_id_changes() -> None:
    case = RangeCase(RackConfig.BROKER_AND_CONSUMER_RACK)
    brokers = broker_racks_for(2, 3)
    replicas = {**replica_racks(T1, 5, 2, brokers, 0), **replica_racks(T2, 5, 2, brokers, 0)}
    expected = [
        "topic1-0, topic1-2, topic2-0, topic2-2",
        "topic1-1, topic1-3, topic2-1, topic2-3",
        "topic1-4, topic2-4",
    ]
    cluster = Cluster({T1: 5, T2: 5}, replicas)
    _check_persistent_after_member_id_changes(cluster, case, expected)


def _range(cluster: Cluster, subs: Mapping[str, Subscription]) -> dict[str, list[TopicPartition]]:
    return assign(cluster, subs)


def _verify_non_rack_aware(
    topics: dict[str, int], consumer_topics: list[list[str]], expected: list[str]
) -> None:
    """Java's `verifyNonRackAwareAssignment` (without its preferRackAwareLogic test hook: those
    lines expect the same result, here reached without rack logic)."""
    for rf, brokers, consumers, mismatches in [
        (3, null_racks(3), racks(3), -1),
        (3, racks(3), null_racks(3), -1),
        (3, racks(3), racks(3), 0),
        (4, racks(4), racks(3), 0),
        (3, racks(3), ["d", "e", "f"], -1),
        (3, racks(3), [None, "e", "f"], -1),
    ]:
        verify_rack_assignment(
            _range, topics, rf, brokers, consumers, consumer_topics, None, expected, mismatches
        )


def test_rack_aware_assignment_with_uniform_subscription() -> None:
    topics = {"t1": 6, "t2": 7, "t3": 2}
    everything = [["t1", "t2", "t3"]] * 3
    _verify_non_rack_aware(
        topics,
        everything,
        [
            "t1-0, t1-1, t2-0, t2-1, t2-2, t3-0",
            "t1-2, t1-3, t2-3, t2-4, t3-1",
            "t1-4, t1-5, t2-5, t2-6",
        ],
    )
    for rf, brokers, expected, mismatches in [
        (
            1,
            racks(3),
            [
                "t1-0, t1-3, t2-0, t2-3, t2-6",
                "t1-1, t1-4, t2-1, t2-4, t3-0",
                "t1-2, t1-5, t2-2, t2-5, t3-1",
            ],
            0,
        ),
        (
            2,
            racks(3),
            [
                "t1-0, t1-2, t2-0, t2-2, t2-3, t3-1",
                "t1-1, t1-3, t2-1, t2-4, t3-0",
                "t1-4, t1-5, t2-5, t2-6",
            ],
            1,
        ),
        (
            3,
            racks(2),
            [
                "t1-0, t1-1, t2-0, t2-1, t2-2, t3-0",
                "t1-2, t1-3, t2-3, t2-4, t3-1",
                "t1-4, t1-5, t2-5, t2-6",
            ],
            4,
        ),
    ]:
        verify_rack_assignment(
            _range, topics, rf, brokers, racks(3), everything, None, expected, mismatches
        )


def test_rack_aware_assignment_with_non_equal_subscription() -> None:
    topics = {"t1": 6, "t2": 7, "t3": 2}
    consumer_topics = [["t1", "t2", "t3"], ["t1", "t2", "t3"], ["t1", "t3"]]
    _verify_non_rack_aware(
        topics,
        consumer_topics,
        [
            "t1-0, t1-1, t2-0, t2-1, t2-2, t2-3, t3-0",
            "t1-2, t1-3, t2-4, t2-5, t2-6, t3-1",
            "t1-4, t1-5",
        ],
    )
    for rf, brokers, expected, mismatches in [
        (
            1,
            racks(3),
            [
                "t1-0, t1-3, t2-0, t2-2, t2-3, t2-6",
                "t1-1, t1-4, t2-1, t2-4, t2-5, t3-0",
                "t1-2, t1-5, t3-1",
            ],
            2,
        ),
        (
            2,
            racks(3),
            [
                "t1-0, t1-2, t2-0, t2-2, t2-3, t2-5, t3-1",
                "t1-1, t1-3, t2-1, t2-4, t2-6, t3-0",
                "t1-4, t1-5",
            ],
            0,
        ),
        (
            3,
            racks(2),
            [
                "t1-0, t1-1, t2-0, t2-1, t2-2, t2-3, t3-0",
                "t1-2, t1-3, t2-4, t2-5, t2-6, t3-1",
                "t1-4, t1-5",
            ],
            2,
        ),
    ]:
        verify_rack_assignment(
            _range, topics, rf, brokers, racks(3), consumer_topics, None, expected, mismatches
        )


def test_rack_aware_assignment_prioritizes_co_partitioning() -> None:
    """testRackAwareAssignmentWithUniformPartitions (+ NonEqualSubscription)."""
    topics = {"t1": 5, "t2": 5, "t3": 5}
    everything = [["t1", "t2", "t3"]] * 3
    ranged = [
        "t1-0, t1-1, t2-0, t2-1, t3-0, t3-1",
        "t1-2, t1-3, t2-2, t2-3, t3-2, t3-3",
        "t1-4, t2-4, t3-4",
    ]
    _verify_non_rack_aware(topics, everything, ranged)
    for rf, brokers, mismatches in [(1, racks(3), 10), (2, racks(3), 5), (3, racks(2), 3)]:
        verify_rack_assignment(
            _range, topics, rf, brokers, racks(3), everything, None, ranged, mismatches
        )
    uneven = [["t1", "t2", "t3"], ["t1", "t2", "t3"], ["t1", "t3"]]
    _verify_non_rack_aware(
        topics,
        uneven,
        [
            "t1-0, t1-1, t2-0, t2-1, t2-2, t3-0, t3-1",
            "t1-2, t1-3, t2-3, t2-4, t3-2, t3-3",
            "t1-4, t3-4",
        ],
    )
    for rf, brokers, expected, mismatches in [
        (
            1,
            racks(3),
            [
                "t1-0, t1-1, t2-0, t2-1, t2-4, t3-0, t3-1",
                "t1-2, t1-3, t2-2, t2-3, t3-2, t3-3",
                "t1-4, t3-4",
            ],
            9,
        ),
        (
            2,
            racks(3),
            [
                "t1-2, t2-0, t2-1, t2-3, t3-2",
                "t1-0, t1-3, t2-2, t2-4, t3-0, t3-3",
                "t1-1, t1-4, t3-1, t3-4",
            ],
            0,
        ),
        (
            3,
            racks(2),
            [
                "t1-0, t1-1, t2-0, t2-1, t2-2, t3-0, t3-1",
                "t1-2, t1-3, t2-3, t2-4, t3-2, t3-3",
                "t1-4, t3-4",
            ],
            2,
        ),
    ]:
        verify_rack_assignment(
            _range, topics, rf, brokers, racks(3), uneven, None, expected, mismatches
        )


def test_rack_aware_assignment_with_co_partitioning() -> None:
    topics = {"t1": 6, "t2": 6, "t3": 2, "t4": 2}
    consumer_racks: list[str | None] = ["a", "b", "b", "a"]
    pairs = [["t1", "t2"], ["t1", "t2"], ["t3", "t4"], ["t3", "t4"]]
    ranged = [
        "t1-0, t1-1, t1-2, t2-0, t2-1, t2-2",
        "t1-3, t1-4, t1-5, t2-3, t2-4, t2-5",
        "t3-0, t4-0",
        "t3-1, t4-1",
    ]
    for rf, mismatches in [(3, -1), (2, 0)]:
        verify_rack_assignment(
            _range, topics, rf, racks(2), consumer_racks, pairs, None, ranged, mismatches
        )
    verify_rack_assignment(
        _range,
        topics,
        1,
        racks(2),
        consumer_racks,
        pairs,
        None,
        [
            "t1-0, t1-2, t1-4, t2-0, t2-2, t2-4",
            "t1-1, t1-3, t1-5, t2-1, t2-3, t2-5",
            "t3-1, t4-1",
            "t3-0, t4-0",
        ],
        0,
    )
    everything = [["t1", "t2", "t3", "t4"]] * 4
    ranged = [
        "t1-0, t1-1, t2-0, t2-1, t3-0, t4-0",
        "t1-2, t1-3, t2-2, t2-3, t3-1, t4-1",
        "t1-4, t2-4",
        "t1-5, t2-5",
    ]
    for rf, mismatches in [(3, -1), (2, 0)]:
        verify_rack_assignment(
            _range, topics, rf, racks(2), consumer_racks, everything, None, ranged, mismatches
        )
    verify_rack_assignment(
        _range,
        topics,
        1,
        racks(2),
        consumer_racks,
        everything,
        None,
        [
            "t1-0, t1-2, t2-0, t2-2, t3-0, t4-0",
            "t1-1, t1-3, t2-1, t2-3, t3-1, t4-1",
            "t1-5, t2-5",
            "t1-4, t2-4",
        ],
        0,
    )
    verify_rack_assignment(
        _range,
        topics,
        1,
        racks(3),
        consumer_racks,
        everything,
        None,
        [
            "t1-0, t1-3, t2-0, t2-3, t3-0, t4-0",
            "t1-1, t1-4, t2-1, t2-4, t3-1, t4-1",
            "t1-2, t2-2",
            "t1-5, t2-5",
        ],
        6,
    )


def test_co_partitioned_assignment_with_same_subscription() -> None:
    topics = {"t1": 6, "t2": 6, "t3": 2, "t4": 2, "t5": 4, "t6": 4}
    listed = [["t1", "t2", "t3", "t4", "t5", "t6", "t7", "t8", "t9"]] * 3
    consumer_racks: list[str | None] = ["a", "b", "c"]
    ranged = [
        "t1-0, t1-1, t2-0, t2-1, t3-0, t4-0, t5-0, t5-1, t6-0, t6-1",
        "t1-2, t1-3, t2-2, t2-3, t3-1, t4-1, t5-2, t6-2",
        "t1-4, t1-5, t2-4, t2-5, t5-3, t6-3",
    ]
    for brokers, mismatches in [(null_racks(3), -1), (racks(3), 0)]:
        verify_rack_assignment(
            _range, topics, 3, brokers, consumer_racks, listed, None, ranged, mismatches
        )
    verify_rack_assignment(
        _range,
        topics,
        2,
        racks(3),
        consumer_racks,
        listed,
        None,
        [
            "t1-0, t1-2, t2-0, t2-2, t3-0, t4-0, t5-1, t6-1",
            "t1-1, t1-3, t2-1, t2-3, t3-1, t4-1, t5-2, t6-2",
            "t1-4, t1-5, t2-4, t2-5, t5-0, t5-3, t6-0, t6-3",
        ],
        0,
    )


def test_range_is_balanced_per_topic_not_overall() -> None:
    """What Java guarantees: per topic, counts differ by at most one; overall they may not."""
    subs = {f"c{i}": Subscription(("a", "b", "c")) for i in range(3)}
    result = assign(Cluster.of({"a": 4, "b": 4, "c": 4}), subs)
    sizes = sorted(len(p) for p in result.values())
    assert sizes == [3, 3, 6]
