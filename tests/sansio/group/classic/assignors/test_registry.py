"""Choosing assignors and protocols as Java does, and the leader's check of custom
cooperative assignors (`validateCooperativeAssignment`)."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

import pytest

from krafka.errors import ConfigError, InvalidStateError
from krafka.sansio.group.classic.assignors import (
    BUILT_IN_NAMES,
    Assignment,
    Cluster,
    CooperativeStickyAssignor,
    PartitionAssignor,
    RangeAssignor,
    RebalanceProtocol,
    RoundRobinAssignor,
    StickyAssignor,
    Subscription,
    assignor_for,
    assignors_for,
    choose_rebalance_protocol,
    lookup_assignor,
    needs_cooperative_validation,
    select_group_protocol,
    validate_cooperative_assignment,
    validate_leader_assignment,
)
from krafka.structs import TopicPartition as TP


class Greedy:
    """A custom cooperative assignor that hands everything to one member at once."""

    name = "greedy"

    def supported_protocols(self) -> Sequence[RebalanceProtocol]:
        return [RebalanceProtocol.COOPERATIVE]

    def subscription_user_data(
        self, topics: Collection[str], owned: Sequence[TP], generation: int
    ) -> bytes | None:
        return None

    def assign(
        self, cluster: Cluster, subscriptions: Mapping[str, Subscription]
    ) -> Mapping[str, Assignment]:
        first, *rest = sorted(subscriptions)
        everything = tuple(
            tp for t in sorted(cluster.partitions) for tp in cluster.partitions_for(t)
        )
        return {first: Assignment(everything), **{m: Assignment(()) for m in rest}}

    def on_assignment(self, assignment: Assignment, generation: int) -> None:
        return None


@pytest.mark.parametrize(
    ("spec", "kind"),
    [
        ("range", RangeAssignor),
        ("roundrobin", RoundRobinAssignor),
        ("sticky", StickyAssignor),
        ("cooperative-sticky", CooperativeStickyAssignor),
        ("org.apache.kafka.clients.consumer.RangeAssignor", RangeAssignor),
        ("org.apache.kafka.clients.consumer.RoundRobinAssignor", RoundRobinAssignor),
        ("org.apache.kafka.clients.consumer.StickyAssignor", StickyAssignor),
        (
            " org.apache.kafka.clients.consumer.CooperativeStickyAssignor ",
            CooperativeStickyAssignor,
        ),
    ],
)
def test_assignor_for_names_and_java_class_names(spec: str, kind: type) -> None:
    assert isinstance(assignor_for(spec), kind)


def test_built_in_names() -> None:
    assert BUILT_IN_NAMES == ("range", "roundrobin", "sticky", "cooperative-sticky")
    assert [assignor_for(n).name for n in BUILT_IN_NAMES] == list(BUILT_IN_NAMES)


def test_custom_assignors_pass_through_and_others_are_refused() -> None:
    greedy = Greedy()
    assert assignor_for(greedy) is greedy
    assert isinstance(greedy, PartitionAssignor)
    with pytest.raises(ConfigError, match="unknown partition assignor 'fair'"):
        assignor_for("fair")
    with pytest.raises(ConfigError, match="not a partition assignor"):
        assignor_for(42)  # type: ignore[arg-type]


def test_assignors_for_a_pasted_java_property_or_a_list() -> None:
    pasted = (
        "org.apache.kafka.clients.consumer.RangeAssignor, "
        "org.apache.kafka.clients.consumer.CooperativeStickyAssignor"
    )
    assert [a.name for a in assignors_for(pasted)] == ["range", "cooperative-sticky"]
    greedy = Greedy()
    assert assignors_for(["cooperative-sticky", greedy])[1] is greedy
    assert [a.name for a in assignors_for(greedy)] == ["greedy"]
    with pytest.raises(ConfigError, match="more than once"):
        assignors_for("range,range")
    with pytest.raises(ConfigError, match="names no assignor"):
        assignors_for("")
    with pytest.raises(ConfigError, match="no rebalance protocol in common"):
        assignors_for(["range", greedy])


def test_rebalance_protocol_is_the_highest_all_support() -> None:
    """ConsumerCoordinator's rule: cooperative only if every configured assignor is."""
    assert choose_rebalance_protocol(assignors_for("cooperative-sticky")) is (
        RebalanceProtocol.COOPERATIVE
    )
    assert choose_rebalance_protocol(assignors_for("cooperative-sticky,range")) is (
        RebalanceProtocol.EAGER
    )
    assert choose_rebalance_protocol([Greedy(), CooperativeStickyAssignor()]) is (
        RebalanceProtocol.COOPERATIVE
    )
    with pytest.raises(ConfigError):
        choose_rebalance_protocol([])


def test_lookup_the_protocol_the_coordinator_chose() -> None:
    assignors = assignors_for("range,cooperative-sticky")
    assert lookup_assignor(assignors, "cooperative-sticky") is assignors[1]
    with pytest.raises(InvalidStateError, match="'sticky', not ours"):
        lookup_assignor(assignors, "sticky")


def test_group_protocol_vote() -> None:
    """ClassicGroup.selectProtocol: protocols all members support; each votes its first."""
    assert select_group_protocol([["range", "sticky"], ["sticky", "range"], ["sticky"]]) == (
        "sticky"
    )
    assert select_group_protocol([["cooperative-sticky", "range"]] * 2 + [["range"]]) == "range"
    assert select_group_protocol([["a", "b"], ["b", "a"], ["a", "b"]]) == "a"
    with pytest.raises(InvalidStateError, match="no assignment protocol in common"):
        select_group_protocol([["range"], ["sticky"]])
    with pytest.raises(InvalidStateError, match="empty group"):
        select_group_protocol([])


def test_group_protocol_vote_ties_follow_javas_map_order() -> None:
    """One vote each: Java's HashMap of votes iterates "range" (bucket 5) before
    "roundrobin" (bucket 14), whatever the members' order."""
    assert select_group_protocol([["roundrobin", "range"], ["range", "roundrobin"]]) == "range"
    assert select_group_protocol([["range", "roundrobin"], ["roundrobin", "range"]]) == "range"


def _subs(owned: dict[str, tuple[TP, ...]]) -> dict[str, Subscription]:
    return {m: Subscription(("t",), None, ps, 3) for m, ps in owned.items()}


def test_cooperative_validation_of_custom_assignors() -> None:
    owned = {"a": (TP("t", 0),), "b": (TP("t", 1),)}
    greedy = Greedy()
    result = greedy.assign(Cluster.of({"t": 2}), _subs(owned))
    assert needs_cooperative_validation(greedy, RebalanceProtocol.COOPERATIVE)
    with pytest.raises(InvalidStateError, match="reassigned t-1 while other members still own"):
        validate_leader_assignment(greedy, RebalanceProtocol.COOPERATIVE, _subs(owned), result)
    validate_leader_assignment(greedy, RebalanceProtocol.EAGER, _subs(owned), result)
    revoke_only = {"a": Assignment((TP("t", 0),)), "b": Assignment(())}
    validate_cooperative_assignment(owned, revoke_only, "greedy")
    with pytest.raises(InvalidStateError, match="unknown member 'c'"):
        validate_cooperative_assignment(owned, {"c": Assignment(())}, "greedy")


def test_built_in_cooperative_sticky_is_trusted_as_in_java() -> None:
    cooperative = CooperativeStickyAssignor()
    assert not needs_cooperative_validation(cooperative, RebalanceProtocol.COOPERATIVE)
    assert needs_cooperative_validation(Greedy(), RebalanceProtocol.COOPERATIVE)
    assert not needs_cooperative_validation(Greedy(), RebalanceProtocol.EAGER)
