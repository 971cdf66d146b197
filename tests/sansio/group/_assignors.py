"""Two small assignors for driving members in tests: an eager round robin and a balancing,
sticky cooperative one (it withholds a partition moving between members for one round, as
KIP-429 asks). They are public `PartitionAssignor`s like any custom one."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

from krafka.sansio.group.classic.assignors import (
    Assignment,
    Cluster,
    RebalanceProtocol,
    Subscription,
)
from krafka.structs import TopicPartition


def _all_partitions(cluster: Cluster, subs: Mapping[str, Subscription]) -> list[TopicPartition]:
    topics = sorted({t for s in subs.values() for t in s.topics})
    return [tp for t in topics for tp in cluster.partitions_for(t)]


class EagerRoundRobin:
    name = "test-eager"

    def __init__(self) -> None:
        self.assignments: list[tuple[Assignment, int]] = []
        self.user_data_asked: list[tuple[frozenset[str], tuple[TopicPartition, ...], int]] = []

    def supported_protocols(self) -> Sequence[RebalanceProtocol]:
        return [RebalanceProtocol.EAGER]

    def subscription_user_data(
        self, topics: Collection[str], owned: Sequence[TopicPartition], generation: int
    ) -> bytes | None:
        self.user_data_asked.append((frozenset(topics), tuple(owned), generation))
        return None

    def assign(
        self, cluster: Cluster, subscriptions: Mapping[str, Subscription]
    ) -> Mapping[str, Assignment]:
        members = sorted(subscriptions)
        out: dict[str, list[TopicPartition]] = {m: [] for m in members}
        for i, tp in enumerate(_all_partitions(cluster, subscriptions)):
            out[members[i % len(members)]].append(tp)
        return {m: Assignment(tuple(ps)) for m, ps in out.items()}

    def on_assignment(self, assignment: Assignment, generation: int) -> None:
        self.assignments.append((assignment, generation))


class CooperativeBalance(EagerRoundRobin):
    """Sticky and balanced; a partition owned by someone else is withheld this round."""

    name = "test-cooperative"

    def supported_protocols(self) -> Sequence[RebalanceProtocol]:
        return [RebalanceProtocol.COOPERATIVE, RebalanceProtocol.EAGER]

    def assign(
        self, cluster: Cluster, subscriptions: Mapping[str, Subscription]
    ) -> Mapping[str, Assignment]:
        members = sorted(subscriptions)
        everything = _all_partitions(cluster, subscriptions)
        valid = set(everything)
        owner: dict[TopicPartition, str] = {}
        claims: dict[TopicPartition, int] = {}
        for member in members:
            sub = subscriptions[member]
            for tp in sub.owned_partitions:
                if tp not in valid:
                    continue
                if tp not in owner or sub.generation_id > claims[tp]:
                    owner[tp], claims[tp] = member, sub.generation_id
        quota_low, extra = divmod(len(everything), len(members))
        by_load = sorted(members, key=lambda m: (-sum(o == m for o in owner.values()), m))
        quota = {m: quota_low + (1 if i < extra else 0) for i, m in enumerate(by_load)}
        kept: dict[str, list[TopicPartition]] = {m: [] for m in members}
        for tp in everything:
            member = owner.get(tp)
            if member is not None and len(kept[member]) < quota[member]:
                kept[member].append(tp)
        taken = {tp for ps in kept.values() for tp in ps}
        for tp in everything:
            if tp in taken:
                continue
            if tp in owner:
                continue  # still owned by a member giving it up: next round
            needy = [m for m in members if len(kept[m]) < quota[m]]
            if needy:
                kept[min(needy, key=lambda m: (len(kept[m]), m))].append(tp)
        return {m: Assignment(tuple(ps)) for m, ps in kept.items()}


class GreedyCooperative(EagerRoundRobin):
    """A broken cooperative assignor: hands every partition to the first member at once."""

    name = "test-greedy"

    def supported_protocols(self) -> Sequence[RebalanceProtocol]:
        return [RebalanceProtocol.COOPERATIVE]

    def assign(
        self, cluster: Cluster, subscriptions: Mapping[str, Subscription]
    ) -> Mapping[str, Assignment]:
        first = min(subscriptions)
        return {first: Assignment(tuple(_all_partitions(cluster, subscriptions)))}
