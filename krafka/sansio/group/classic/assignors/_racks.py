"""When rack-aware assignment applies (KIP-881), shared by the range and sticky assignors.

Java uses it only if some member has a rack that holds replicas, and not every partition is on
the same set of racks (if all are, every member is equally close to every partition).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

from krafka.structs import TopicPartition


def use_rack_aware_assignment(
    consumer_racks: Collection[str],
    partition_racks: Collection[str],
    racks_per_partition: Mapping[TopicPartition, frozenset[str]],
) -> bool:
    if not consumer_racks or set(consumer_racks).isdisjoint(partition_racks):
        return False
    every = frozenset(partition_racks)
    return not all(racks == every for racks in racks_per_partition.values())


__all__ = ["use_rack_aware_assignment"]
