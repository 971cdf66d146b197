"""krafka's assignors give exactly the assignment Apache Kafka's Java assignors give.

`data/java_golden.json.gz` holds 1004 scenarios (random groups played through up to five
rebalances: members joining, leaving, changing subscriptions, stale generations, partitions
claimed twice, racks) with the answer of Kafka's own `RangeAssignor`, `RoundRobinAssignor`,
`StickyAssignor` and `CooperativeStickyAssignor` (apache/kafka 1eb7644, 2024-10-25), recorded by
`tools/assignor_oracle/golden.py`. Each round's input was built from Java's previous answer.
Member lists are compared in Java's order (range: as sets, Java orders them by hash).

One deliberate difference: when members' subscriptions differ, Java's cooperative-sticky can
hand a partition to a member holding a stale (older or same-generation duplicate) claim on it
while the member with the newest claim still owns it, so two members consume it until the
owner revokes. krafka withholds such a partition for one round, like any other move. For
those cases the test checks krafka's answer is Java's minus exactly such partitions.
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


Result = dict[str, list[TopicPartition]]


def run(case: dict[str, Any]) -> Result:
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


def _claims(case: dict[str, Any]) -> dict[str, set[TopicPartition]]:
    return {row[0]: {TopicPartition(t, p) for t, p in row[6]} for row in case["members"]}


def _withheld_from_java(case: dict[str, Any], java: Result, actual: Result) -> bool:
    """krafka = Java minus partitions Java gave away while another claimant kept its claim."""
    claims = _claims(case)
    for member, partitions in java.items():
        kept = [p for p in partitions if p in actual[member]]
        if actual[member] != kept:
            return False
        for p in set(partitions) - set(kept):
            others = [m for m, c in claims.items() if m != member and p in c]
            if not any(p not in java[m] for m in others):
                return False
    return True


@pytest.mark.parametrize("name", ["range", "roundrobin", "sticky", "cooperative-sticky"])
def test_assignments_equal_java(name: str) -> None:
    mismatches, safer = [], 0
    for index, case in enumerate(CASES):
        if case["assignor"] != name:
            continue
        expected = {m: [TopicPartition(t, p) for t, p in ps] for m, ps in case["expected"].items()}
        actual = run(case)
        if name == "range":
            expected = {m: sorted(ps) for m, ps in expected.items()}
        if actual == expected:
            continue
        if name == "cooperative-sticky" and _withheld_from_java(case, expected, actual):
            safer += 1
            continue
        mismatches.append((index, case, actual))
    assert not mismatches, mismatches[:1]
    assert safer <= 3
