"""krafka's assignors give exactly the assignment Apache Kafka's Java assignors give.

`data/java_golden.json.gz` holds 1004 scenarios (random groups played through up to five
rebalances: members joining, leaving, changing subscriptions, stale generations, partitions
claimed twice, racks) with the answer of Kafka's own `RangeAssignor`, `RoundRobinAssignor`,
`StickyAssignor` and `CooperativeStickyAssignor` (apache/kafka 1eb7644, 2024-10-25), recorded by
`tools/assignor_oracle/golden.py`. Each round's input was built from Java's previous answer.
Member lists are compared in Java's order (range: as sets, Java orders them by hash).
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from krafka.sansio.group.assignors import Cluster, Subscription
from krafka.sansio.group.assignors.range_assignor import range_assign
from krafka.sansio.group.assignors.roundrobin_assignor import roundrobin_assign
from krafka.sansio.group.assignors.sticky_assignor import (
    cooperative_sticky_assign,
    sticky_assign,
    sticky_member_data,
)
from krafka.structs import TopicPartition

CASES: list[dict[str, Any]] = json.loads(
    gzip.decompress((Path(__file__).parent / "data" / "java_golden.json.gz").read_bytes())
)


def run(case: dict[str, Any]) -> dict[str, list[TopicPartition]]:
    cluster = Cluster.of(
        case["topics"], {TopicPartition(t, p): racks for t, p, racks in case["racks"]}
    )
    subs = {
        member: Subscription(
            tuple(topics),
            None if data is None else bytes.fromhex(data),
            tuple(TopicPartition(t, p) for t, p in owned),
            generation,
            rack,
            instance,
        )
        for member, instance, rack, generation, data, topics, owned in case["members"]
    }
    name = case["assignor"]
    if name == "range":
        return range_assign(cluster, subs)
    if name == "roundrobin":
        return roundrobin_assign(cluster, subs)
    if name == "sticky":
        return sticky_assign(cluster, subs, sticky_member_data).assignment
    return cooperative_sticky_assign(cluster, subs)


def test_the_golden_file_covers_every_assignor() -> None:
    names = [case["assignor"] for case in CASES]
    assert {n: names.count(n) for n in set(names)} == {
        "range": 250,
        "roundrobin": 250,
        "sticky": 252,
        "cooperative-sticky": 252,
    }
    assert not [case for case in CASES if "error" in case]


@pytest.mark.parametrize("name", ["range", "roundrobin", "sticky", "cooperative-sticky"])
def test_assignments_equal_java(name: str) -> None:
    mismatches = []
    for index, case in enumerate(CASES):
        if case["assignor"] != name:
            continue
        expected = {m: [TopicPartition(t, p) for t, p in ps] for m, ps in case["expected"].items()}
        actual = run(case)
        if name == "range":
            expected = {m: sorted(ps) for m, ps in expected.items()}
        if actual != expected:
            mismatches.append((index, case, actual))
    assert not mismatches, mismatches[:1]
