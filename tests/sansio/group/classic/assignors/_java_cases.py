"""Java's assignor test fixtures, ported: partition replicas spread over racks the way
`AbstractPartitionAssignorTest.partitionInfos` lays them out, `verifyRackAssignment`,
`verifyValidityAndBalance` and `isFullyBalanced`, so the Java test cases read the same here."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from enum import Enum

from krafka.sansio.group.classic.assignors import Cluster, Subscription
from krafka.structs import TopicPartition

ALL_RACKS = ["a", "b", "c", "d", "e", "f"]
Assign = Callable[[Cluster, Mapping[str, Subscription]], Mapping[str, Sequence[TopicPartition]]]


class RackConfig(Enum):
    NO_BROKER_RACK = "no broker rack"
    NO_CONSUMER_RACK = "no consumer rack"
    BROKER_AND_CONSUMER_RACK = "broker and consumer rack"


def tp(topic: str, partition: int) -> TopicPartition:
    return TopicPartition(topic, partition)


def parse(text: str) -> list[TopicPartition]:
    """`"t1-0, t1-3"` -> partitions (Java's `toSortedString` format)."""
    out = []
    for item in filter(None, (part.strip() for part in text.split(","))):
        topic, _, partition = item.rpartition("-")
        out.append(TopicPartition(topic, int(partition)))
    return out


def sorted_string(partitions: Sequence[TopicPartition]) -> str:
    return ", ".join(sorted(str(p) for p in partitions))


def racks(count: int) -> list[str | None]:
    return [ALL_RACKS[i % len(ALL_RACKS)] for i in range(count)]


def null_racks(count: int) -> list[str | None]:
    return [None] * count


def replica_racks(
    topic: str,
    count: int,
    replication_factor: int,
    broker_racks: Sequence[str | None],
    next_node: int,
) -> dict[TopicPartition, frozenset[str]]:
    """Partition `i`'s replicas are brokers `i + j + next_node` (mod brokers), as in Java."""
    out = {}
    for i in range(count):
        replicas = [
            broker_racks[(i + j + next_node) % len(broker_racks)] for j in range(replication_factor)
        ]
        out[TopicPartition(topic, i)] = frozenset(r for r in replicas if r is not None)
    return out


def broker_racks_for(replication_factor: int, num_broker_racks: int) -> list[str | None]:
    """Java's `partitionInfos(topic, n, rf, numBrokerRacks, next)` broker layout."""
    brokers = replication_factor if num_broker_racks <= 0 else num_broker_racks * replication_factor
    return [
        None if num_broker_racks <= 0 else ALL_RACKS[i % num_broker_racks] for i in range(brokers)
    ]


def rack_cluster(
    topics: Mapping[str, int], replication_factor: int, broker_racks: Sequence[str | None]
) -> Cluster:
    """`AbstractPartitionAssignorTest.partitionsPerTopic`: topics in order, each starting its
    replicas where the previous topic's partitions ended."""
    all_racks: dict[TopicPartition, frozenset[str]] = {}
    next_node = 0
    for topic, count in topics.items():
        all_racks.update(replica_racks(topic, count, replication_factor, broker_racks, next_node))
        next_node += count
    return Cluster(dict(topics), all_racks)


def verify_rack_assignment(
    assign: Assign,
    topics: Mapping[str, int],
    replication_factor: int,
    broker_racks: Sequence[str | None],
    consumer_racks: Sequence[str | None],
    consumer_topics: Sequence[Sequence[str]],
    owned: Sequence[str] | None,
    expected: Sequence[str],
    mismatches: int,
) -> None:
    """Java's `verifyRackAssignment`: members `consumer0..`, owned partitions as strings."""
    cluster = rack_cluster(topics, replication_factor, broker_racks)
    consumers = [f"consumer{i}" for i in range(len(consumer_racks))]
    subscriptions = {
        consumer: Subscription(
            tuple(consumer_topics[i]),
            owned_partitions=tuple(parse(owned[i])) if owned and i < len(owned) else (),
            rack_id=consumer_racks[i],
        )
        for i, consumer in enumerate(consumers)
    }
    result = assign(cluster, subscriptions)
    actual = {c: sorted_string(result[c]) for c in consumers}
    assert actual == dict(zip(consumers, expected, strict=True))
    if mismatches >= 0:
        misaligned = [
            p
            for c, rack in zip(consumers, consumer_racks, strict=True)
            if rack is not None
            for p in result[c]
            if rack not in cluster.replica_racks(p)
        ]
        assert len(misaligned) == mismatches, misaligned


def is_fully_balanced(assignment: Mapping[str, Sequence[TopicPartition]]) -> bool:
    sizes = [len(p) for p in assignment.values()]
    return max(sizes) - min(sizes) <= 1


def verify_validity_and_balance(
    subscriptions: Mapping[str, Subscription],
    assignment: Mapping[str, Sequence[TopicPartition]],
) -> None:
    """Java's `verifyValidityAndBalance`: only subscribed topics, no partition twice, and no
    member two or more partitions behind another that holds a topic both subscribe to."""
    assert set(assignment) == set(subscriptions)
    consumers = sorted(assignment)
    for i, consumer in enumerate(consumers):
        mine = assignment[consumer]
        assert all(p.topic in subscriptions[consumer].topics for p in mine), (consumer, mine)
        for other in consumers[i + 1 :]:
            theirs = assignment[other]
            assert not set(mine) & set(theirs), (consumer, other)
            if abs(len(mine) - len(theirs)) <= 1:
                continue
            more, less = (mine, theirs) if len(mine) > len(theirs) else (theirs, mine)
            less_topics = {p.topic for p in less}
            assert not {p.topic for p in more} & less_topics, (consumer, other, assignment)


__all__ = [
    "ALL_RACKS",
    "RackConfig",
    "broker_racks_for",
    "is_fully_balanced",
    "null_racks",
    "parse",
    "rack_cluster",
    "racks",
    "replica_racks",
    "sorted_string",
    "tp",
    "verify_rack_assignment",
    "verify_validity_and_balance",
]
