"""krafka's answer to a scenario recorded for Java's assignors (`tools/assignor_oracle`), and how
it is compared with Java's: equal (range: member lists as sets, Java orders them by hash), or,
for cooperative-sticky, Java's minus partitions krafka withholds for one round on purpose (see
`test_java_golden`)."""

from __future__ import annotations

from enum import Enum
from typing import Any

from krafka.sansio.group.classic.assignors import Cluster, Subscription
from krafka.sansio.group.classic.assignors.range_assignor import range_assign
from krafka.sansio.group.classic.assignors.roundrobin_assignor import roundrobin_assign
from krafka.sansio.group.classic.assignors.sticky_assignor import (
    cooperative_sticky_assign,
    sticky_assign,
    sticky_member_data,
)
from krafka.structs import TopicPartition

Result = dict[str, list[TopicPartition]]
Case = dict[str, Any]


def run(case: Case) -> Result:
    """krafka's assignment for one recorded scenario."""
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


def java_answer(case: Case) -> Result:
    expected = {m: [TopicPartition(t, p) for t, p in ps] for m, ps in case["expected"].items()}
    if case["assignor"] == "range":
        return {m: sorted(ps) for m, ps in expected.items()}
    return expected


def _claims(case: Case) -> dict[str, set[TopicPartition]]:
    return {row[0]: {TopicPartition(t, p) for t, p in row[6]} for row in case["members"]}


def withheld_from_java(case: Case, java: Result, actual: Result) -> bool:
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


class Verdict(Enum):
    EQUAL = "equal"
    WITHHELD = "withheld"  # the deliberate cooperative-sticky difference
    DIFFERS = "differs"


def compare(case: Case) -> Verdict:
    """How krafka's answer to `case` compares with Java's."""
    java, actual = java_answer(case), run(case)
    if case["assignor"] == "range":
        actual = {m: sorted(ps) for m, ps in actual.items()}
    if actual == java:
        return Verdict.EQUAL
    if case["assignor"] == "cooperative-sticky" and withheld_from_java(case, java, actual):
        return Verdict.WITHHELD
    return Verdict.DIFFERS
