"""Properties every assignment must have, over random groups (hypothesis).

- every subscribed partition is assigned exactly once, only to a subscriber of its topic;
- with equal subscriptions, partition counts differ by at most one (range: per topic);
- `sticky`: a joining member takes at most ceil(P/C) partitions from the others, a leaving
  member's partitions are the only ones that move;
- `cooperative-sticky`: no partition passes from its owner (the newest claim) to another member
  in one round, and one follow-up round reaches a complete, balanced assignment.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from hypothesis import given, settings
from hypothesis import strategies as st

from krafka.sansio.group.classic.assignors import (
    NO_GENERATION,
    Assignment,
    Cluster,
    CooperativeStickyAssignor,
    PartitionAssignor,
    RangeAssignor,
    RoundRobinAssignor,
    StickyAssignor,
    Subscription,
)
from krafka.structs import TopicPartition

EAGER: list[PartitionAssignor] = [RangeAssignor(), RoundRobinAssignor(), StickyAssignor()]
BALANCED: list[PartitionAssignor] = [RoundRobinAssignor(), StickyAssignor()]
STICKY = StickyAssignor()
COOPERATIVE = CooperativeStickyAssignor()
Result = dict[str, tuple[TopicPartition, ...]]

clusters = st.dictionaries(
    st.sampled_from(["a", "b", "c", "orders"]), st.integers(1, 12), min_size=1
).map(Cluster.of)


@st.composite
def groups(draw: st.DrawFn, equal: bool | None = None) -> tuple[Cluster, dict[str, list[str]]]:
    cluster = draw(clusters)
    topics = sorted(cluster.partitions)
    count = draw(st.integers(1, 8))
    same = draw(st.booleans()) if equal is None else equal
    members: dict[str, list[str]] = {}
    for i in range(count):
        if same:
            members[f"member-{i}"] = topics
        else:
            members[f"member-{i}"] = draw(
                st.lists(st.sampled_from([*topics, "missing"]), min_size=1, unique=True)
            )
    return cluster, members


def all_partitions(cluster: Cluster, members: Mapping[str, Sequence[str]]) -> set[TopicPartition]:
    wanted = {t for topics in members.values() for t in topics}
    return {tp for t in wanted for tp in cluster.partitions_for(t)}


def run(assignor: PartitionAssignor, cluster: Cluster, subs: Mapping[str, Subscription]) -> Result:
    result = assignor.assign(cluster, subs)
    assert set(result) == set(subs)
    return {m: a.partitions for m, a in result.items()}


def fresh(members: Mapping[str, Sequence[str]]) -> dict[str, Subscription]:
    return {m: Subscription(tuple(t)) for m, t in members.items()}


def assert_complete(
    cluster: Cluster, members: Mapping[str, Sequence[str]], result: Mapping[str, Sequence[object]]
) -> None:
    assigned = [tp for partitions in result.values() for tp in partitions]
    assert len(assigned) == len(set(assigned)), "a partition was assigned twice"
    assert set(assigned) == all_partitions(cluster, members)
    for member, partitions in result.items():
        assert all(tp.topic in members[member] for tp in partitions)  # type: ignore[attr-defined]


def spread(result: Mapping[str, Sequence[object]]) -> int:
    sizes = [len(p) for p in result.values()]
    return max(sizes) - min(sizes)


def eager_rejoin(
    assignor: PartitionAssignor,
    members: Mapping[str, Sequence[str]],
    previous: Mapping[str, Sequence[TopicPartition]],
    generation: int,
) -> dict[str, Subscription]:
    """What eager members send: no owned partitions, the last assignment in user data."""
    return {
        m: Subscription(
            tuple(topics),
            assignor.subscription_user_data(topics, previous.get(m, ()), generation),
        )
        for m, topics in members.items()
    }


def cooperative_rejoin(
    members: Mapping[str, Sequence[str]],
    owned: Mapping[str, Sequence[TopicPartition]],
    generation: int,
) -> dict[str, Subscription]:
    return {
        m: Subscription(
            tuple(topics),
            COOPERATIVE.subscription_user_data(topics, owned.get(m, ()), generation),
            tuple(owned.get(m, ())),
            generation if m in owned else NO_GENERATION,
        )
        for m, topics in members.items()
    }


@settings(max_examples=150, deadline=None)
@given(groups())
def test_every_partition_is_assigned_exactly_once(
    group: tuple[Cluster, dict[str, list[str]]],
) -> None:
    cluster, members = group
    for assignor in EAGER:
        first = run(assignor, cluster, fresh(members))
        assert_complete(cluster, members, first)
        again = run(assignor, cluster, eager_rejoin(assignor, members, first, 1))
        assert_complete(cluster, members, again)


@settings(max_examples=150, deadline=None)
@given(groups(equal=True))
def test_equal_subscriptions_are_balanced(group: tuple[Cluster, dict[str, list[str]]]) -> None:
    cluster, members = group
    for assignor in BALANCED:
        assert spread(run(assignor, cluster, fresh(members))) <= 1, assignor.name
    ranged = run(RangeAssignor(), cluster, fresh(members))
    for topic in cluster.partitions:
        per_topic = {m: [tp for tp in ps if tp.topic == topic] for m, ps in ranged.items()}
        assert spread(per_topic) <= 1


@settings(max_examples=150, deadline=None)
@given(groups(equal=True), st.data())
def test_sticky_join_moves_at_most_a_fair_share(
    group: tuple[Cluster, dict[str, list[str]]], data: st.DataObject
) -> None:
    cluster, members = group
    before = run(STICKY, cluster, fresh(members))
    joined = {**members, "newcomer": sorted(cluster.partitions)}
    after = run(STICKY, cluster, eager_rejoin(STICKY, joined, before, 1))
    total = sum(cluster.partitions.values())
    moved = sum(len(set(after[m]) - set(before[m])) for m in members)
    assert moved == 0
    assert len(after["newcomer"]) <= math.ceil(total / len(joined))
    assert spread(after) <= 1
    leaving = data.draw(st.sampled_from(sorted(joined)))
    stayed = {m: t for m, t in joined.items() if m != leaving}
    if stayed:
        final = run(STICKY, cluster, eager_rejoin(STICKY, stayed, after, 2))
        assert all(set(after[m]) <= set(final[m]) for m in stayed)
        assert spread(final) <= 1


@st.composite
def owned_groups(
    draw: st.DrawFn,
) -> tuple[Cluster, dict[str, list[str]], dict[str, list[TopicPartition]], dict[str, int]]:
    """A group whose members own partitions from earlier generations: each partition at most
    one current owner, plus some stale claims (older generation) by other members."""
    cluster, members = draw(groups())
    names = sorted(members)
    owned: dict[str, list[TopicPartition]] = {m: [] for m in names}
    for tp in sorted(all_partitions(cluster, members)):
        owner = draw(st.sampled_from([*names, None]))
        if owner is not None:
            owned[owner].append(tp)
    generations = {m: draw(st.integers(2, 4)) for m in names}
    for member in names:
        if draw(st.booleans()):
            victims = [tp for m, tps in owned.items() if m != member for tp in tps]
            if victims:
                stale = draw(
                    st.lists(st.sampled_from(victims), min_size=1, max_size=3, unique=True)
                )
                holders = [m for m, tps in owned.items() if m != member and set(stale) & set(tps)]
                owned[member] += stale
                newest = max(generations[m] for m in holders)
                generations[member] = min(generations[member], newest - 1)
    return cluster, members, owned, generations


def newest_owner(
    owned: Mapping[str, Sequence[TopicPartition]], generations: Mapping[str, int]
) -> dict[TopicPartition, str | None]:
    """The member whose claim is newest, None when two claims tie."""
    best: dict[TopicPartition, tuple[int, str | None]] = {}
    for member, partitions in owned.items():
        for tp in partitions:
            generation = generations[member]
            current = best.get(tp)
            if current is None or generation > current[0]:
                best[tp] = (generation, member)
            elif generation == current[0]:
                best[tp] = (generation, None)
    return {tp: member for tp, (_, member) in best.items()}


@settings(max_examples=200, deadline=None)
@given(owned_groups())
def test_cooperative_never_moves_a_partition_in_one_round(
    group: tuple[Cluster, dict[str, list[str]], dict[str, list[TopicPartition]], dict[str, int]],
) -> None:
    cluster, members, owned, generations = group
    subs = {
        m: Subscription(
            tuple(members[m]),
            COOPERATIVE.subscription_user_data(members[m], owned[m], generations[m]),
            tuple(owned[m]),
            generations[m],
        )
        for m in members
    }
    result = run(COOPERATIVE, cluster, subs)
    assigned = [tp for ps in result.values() for tp in ps]
    assert len(assigned) == len(set(assigned))
    owners = newest_owner(owned, generations)
    for member, partitions in result.items():
        for tp in partitions:
            assert tp.topic in members[member]
            assert owners.get(tp, member) == member, (tp, member, owners.get(tp))


def _settle(
    cluster: Cluster,
    members: Mapping[str, Sequence[str]],
    owned: Mapping[str, Sequence[TopicPartition]],
    generation: int,
    rounds: int,
) -> tuple[Result, int]:
    """Rebalance until nothing is revoked; returns the result and the rounds it took."""
    current = dict(owned)
    for round_ in range(1, rounds + 1):
        result = run(COOPERATIVE, cluster, cooperative_rejoin(members, current, generation))
        revoked = any(set(current.get(m, ())) - set(result[m]) for m in members)
        current, generation = dict(result), generation + 1
        if not revoked:
            return result, round_
    raise AssertionError(f"still revoking after {rounds} rounds")


@settings(max_examples=150, deadline=None)
@given(groups(equal=True), st.integers(0, 3))
def test_cooperative_converges_in_two_rounds(
    group: tuple[Cluster, dict[str, list[str]]], joining: int
) -> None:
    cluster, members = group
    start, _ = _settle(cluster, members, {}, 1, 1)
    assert_complete(cluster, members, start)
    joined = {**members, **{f"new-{i}": sorted(cluster.partitions) for i in range(joining)}}
    final, rounds = _settle(cluster, joined, start, 2, 2)
    assert rounds <= 2
    assert_complete(cluster, joined, final)
    assert spread(final) <= 1
    total = sum(cluster.partitions.values())
    moved = sum(len(set(start[m]) - set(final[m])) for m in members)
    assert moved <= joining * math.ceil(total / len(joined))


@settings(max_examples=100, deadline=None)
@given(groups(equal=False), st.data())
def test_cooperative_converges_with_unequal_subscriptions(
    group: tuple[Cluster, dict[str, list[str]]], data: st.DataObject
) -> None:
    """Subscriptions change: within Java's four rounds nothing is revoked any more and every
    partition is placed."""
    cluster, members = group
    start, _ = _settle(cluster, members, {}, 1, 1)
    topics = sorted(cluster.partitions)
    changed = {
        m: data.draw(st.lists(st.sampled_from(topics), min_size=1, unique=True)) for m in members
    }
    final, _ = _settle(cluster, changed, start, 2, 4)
    assert_complete(cluster, changed, final)


def test_empty_group_assigns_nothing() -> None:
    for assignor in [*EAGER, COOPERATIVE]:
        assert assignor.assign(Cluster.of({"a": 3}), {}) == {}


def test_assignments_are_values() -> None:
    result = COOPERATIVE.assign(Cluster.of({"a": 2}), {"m": Subscription(("a",))})
    assert result == {"m": Assignment((TopicPartition("a", 0), TopicPartition("a", 1)))}
