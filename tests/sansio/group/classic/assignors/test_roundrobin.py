"""The round-robin assignor against Java's `RoundRobinAssignorTest` (ported cases, same
expectations, list order included) and seed 001's example."""

from __future__ import annotations

from collections.abc import Mapping

import pytest
from _java_cases import tp

from krafka.sansio.group.classic.assignors import Cluster, RoundRobinAssignor, Subscription
from krafka.structs import TopicPartition

T, T1, T2 = "topic", "topic1", "topic2"


def assign(cluster: Cluster, subs: Mapping[str, Subscription]) -> dict[str, list[TopicPartition]]:
    return {m: list(a.partitions) for m, a in RoundRobinAssignor().assign(cluster, subs).items()}


def sub(*topics: str, instance: str | None = None) -> Subscription:
    return Subscription(topics, group_instance_id=instance)


def test_seed_001_example() -> None:
    subs = {f"consumer{i}": sub("orders") for i in (1, 2, 3)}
    assert assign(Cluster.of({"orders": 6}), subs) == {
        "consumer1": [tp("orders", 0), tp("orders", 3)],
        "consumer2": [tp("orders", 1), tp("orders", 4)],
        "consumer3": [tp("orders", 2), tp("orders", 5)],
    }


def test_one_consumer() -> None:
    assert assign(Cluster.of({}), {"consumer": sub()}) == {"consumer": []}
    assert assign(Cluster.of({}), {"consumer": sub(T)}) == {"consumer": []}
    three = [tp(T, 0), tp(T, 1), tp(T, 2)]
    assert assign(Cluster.of({T: 3}), {"consumer": sub(T)}) == {"consumer": three}
    assert assign(Cluster.of({T: 3, "other": 3}), {"consumer": sub(T)}) == {"consumer": three}
    result = assign(Cluster.of({T1: 1, T2: 2}), {"consumer": sub(T1, T2)})
    assert result == {"consumer": [tp(T1, 0), tp(T2, 0), tp(T2, 1)]}


@pytest.mark.parametrize(
    ("count", "first", "second"), [(1, [tp(T, 0)], []), (2, [tp(T, 0)], [tp(T, 1)])]
)
def test_two_consumers_one_topic(
    count: int, first: list[TopicPartition], second: list[TopicPartition]
) -> None:
    result = assign(Cluster.of({T: count}), {"consumer1": sub(T), "consumer2": sub(T)})
    assert result == {"consumer1": first, "consumer2": second}


def test_multiple_consumers_mixed_topics() -> None:
    subs = {"consumer1": sub(T1), "consumer2": sub(T1, T2), "consumer3": sub(T1)}
    assert assign(Cluster.of({T1: 3, T2: 2}), subs) == {
        "consumer1": [tp(T1, 0)],
        "consumer2": [tp(T1, 1), tp(T2, 0), tp(T2, 1)],
        "consumer3": [tp(T1, 2)],
    }


@pytest.mark.parametrize(
    ("first", "second"),
    [
        (("consumer1", None), ("consumer2", None)),
        (("consumer-b", "instance1"), ("consumer-a", "instance2")),
        (("consumer-b", "instance1"), ("consumer-a", None)),
    ],
)
def test_two_consumers_two_topics_six_partitions(
    first: tuple[str, str | None], second: tuple[str, str | None]
) -> None:
    """testTwoDynamicConsumers..., testTwoStaticConsumers..., testOneStaticConsumerAndOne
    DynamicConsumer...: instance ids order members before member ids do."""
    subs = {first[0]: sub(T1, T2, instance=first[1]), second[0]: sub(T1, T2, instance=second[1])}
    result = assign(Cluster.of({T1: 3, T2: 3}), subs)
    assert result[first[0]] == [tp(T1, 0), tp(T1, 2), tp(T2, 1)]
    assert result[second[0]] == [tp(T1, 1), tp(T2, 0), tp(T2, 2)]


def test_static_member_round_robin_assignment_persistent() -> None:
    cluster = Cluster.of({T1: 3, T2: 3})
    subs = {f"consumer{i}": sub(T1, T2, instance=f"instance{i}") for i in (1, 2, 3)}
    subs["consumer4"] = sub(T1, T2)
    expected = {
        "consumer1": [tp(T1, 0), tp(T2, 1)],
        "consumer2": [tp(T1, 1), tp(T2, 2)],
        "consumer3": [tp(T1, 2)],
        "consumer4": [tp(T2, 0)],
    }
    assert assign(cluster, subs) == expected
    del subs["consumer4"]
    subs["consumer5"] = sub(T1, T2)
    expected["consumer5"] = expected.pop("consumer4")
    assert assign(cluster, subs) == expected


def test_static_member_assignment_persists_after_member_id_changes() -> None:
    cluster = Cluster.of({T1: 5, T2: 5})
    subs = {f"consumer{i}": sub(T1, T2, instance=f"instance{i}") for i in (1, 2, 3)}

    def by_instance() -> dict[str | None, list[TopicPartition]]:
        result = assign(cluster, subs)
        return {s.group_instance_id: result[m] for m, s in subs.items()}

    before = by_instance()
    assert before == {
        "instance1": [tp(T1, 0), tp(T1, 3), tp(T2, 1), tp(T2, 4)],
        "instance2": [tp(T1, 1), tp(T1, 4), tp(T2, 2)],
        "instance3": [tp(T1, 2), tp(T2, 0), tp(T2, 3)],
    }
    subs["consumer4"] = subs.pop("consumer3")
    subs["consumer5"] = subs.pop("consumer2")
    assert by_instance() == before
