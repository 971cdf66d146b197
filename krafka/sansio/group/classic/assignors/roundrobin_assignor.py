"""The round-robin assignor (Java's `RoundRobinAssignor`).

All partitions of all subscribed topics, topics in name order, are dealt one by one to the
members in member order (static members by instance id first), skipping a member not
subscribed to the partition's topic. Balanced when every member subscribes to the same topics.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from krafka.sansio.group.classic.assignors.assignor import (
    Cluster,
    EagerAssignor,
    Subscription,
    partitions_per_topic,
    sorted_members,
)
from krafka.structs import TopicPartition


def roundrobin_assign(
    cluster: Cluster, subscriptions: Mapping[str, Subscription]
) -> dict[str, list[TopicPartition]]:
    """Java's `RoundRobinAssignor.assign`."""
    out: dict[str, list[TopicPartition]] = {member: [] for member in subscriptions}
    members = sorted_members(subscriptions)
    topics_of = {m: frozenset(subscriptions[m].topics) for m in members}
    turn = 0
    for topic, count in partitions_per_topic(cluster, subscriptions).items():
        for partition in range(count):
            while topic not in topics_of[members[turn]]:
                turn = (turn + 1) % len(members)
            out[members[turn]].append(TopicPartition(topic, partition))
            turn = (turn + 1) % len(members)
    return out


class RoundRobinAssignor(EagerAssignor):
    """`roundrobin`: partitions dealt in turn; EAGER only."""

    name: Final = "roundrobin"

    def assign_partitions(
        self, cluster: Cluster, subscriptions: Mapping[str, Subscription]
    ) -> dict[str, list[TopicPartition]]:
        return roundrobin_assign(cluster, subscriptions)


__all__ = ["RoundRobinAssignor", "roundrobin_assign"]
