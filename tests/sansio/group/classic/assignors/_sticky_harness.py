"""Java's `AbstractStickyAssignorTest` fixture for both sticky assignors: how each builds a
member's subscription (protocol v0, v1, v2+), racks per `RackConfig`, and the cooperative
override of `verifyValidityAndBalance` that plays follow-up rebalances until nothing is revoked.
"""

from __future__ import annotations

from collections.abc import Sequence

from _java_cases import (
    ALL_RACKS,
    RackConfig,
    broker_racks_for,
    replica_racks,
    verify_validity_and_balance,
)

from krafka.sansio.group.classic.assignors import (
    NO_GENERATION,
    Cluster,
    CooperativeStickyAssignor,
    StickyAssignor,
    Subscription,
    encode_cooperative_sticky_user_data,
    encode_sticky_user_data,
)
from krafka.sansio.group.classic.assignors.sticky_assignor import (
    cooperative_member_data,
    cooperative_sticky_assign,
    sticky_assign,
    sticky_member_data,
)
from krafka.structs import TopicPartition

Result = dict[str, list[TopicPartition]]
GENERATION = 1


class StickyHarness:
    def __init__(self, kind: str, config: RackConfig | None = None) -> None:
        self.kind = kind
        self.cooperative = kind == "cooperative-sticky"
        self.assignor = CooperativeStickyAssignor() if self.cooperative else StickyAssignor()
        self.replication = 2
        self.broker_racks = 0
        self.consumer_rack = False
        self.next_index = 0
        self.counts: dict[str, int] = {}
        self.racks: dict[TopicPartition, frozenset[str]] = {}
        if config is not None:
            self.replication = 3
            self.broker_racks = 0 if config is RackConfig.NO_BROKER_RACK else 3
            self.consumer_rack = config is not RackConfig.NO_CONSUMER_RACK

    def topic(self, name: str, count: int) -> None:
        """`partitionsPerTopic.put(name, partitionInfos(name, count))`."""
        brokers = broker_racks_for(self.replication, self.broker_racks)
        self.racks.update(replica_racks(name, count, self.replication, brokers, self.next_index))
        self.next_index += 1
        self.counts[name] = count

    def cluster(self) -> Cluster:
        return Cluster(dict(self.counts), dict(self.racks))

    def rack(self, index: int) -> str | None:
        if not self.consumer_rack:
            return None
        count = self.broker_racks if self.broker_racks > 0 else len(ALL_RACKS)
        return ALL_RACKS[index % count]

    def subscription(self, topics: Sequence[str], index: int) -> Subscription:
        return Subscription(tuple(topics), rack_id=self.rack(index))

    def v0(
        self, topics: Sequence[str], owned: Sequence[TopicPartition], generation: int, index: int
    ) -> Subscription | None:
        if self.cooperative:
            return None
        data = encode_sticky_user_data(owned, generation)
        return Subscription(tuple(topics), data, rack_id=self.rack(index))

    def v1(
        self, topics: Sequence[str], owned: Sequence[TopicPartition], generation: int, index: int
    ) -> Subscription:
        if self.cooperative:
            data = encode_cooperative_sticky_user_data(generation)
        else:
            data = encode_sticky_user_data(owned, generation)
        return Subscription(tuple(topics), data, tuple(owned))

    def v2(
        self, topics: Sequence[str], owned: Sequence[TopicPartition], generation: int, index: int
    ) -> Subscription:
        if self.cooperative:
            data = encode_cooperative_sticky_user_data(NO_GENERATION)
            return Subscription(tuple(topics), data, tuple(owned), generation, self.rack(index))
        data = encode_sticky_user_data(owned, generation)
        return Subscription(tuple(topics), data, tuple(owned), generation)

    def assign(self, subs: dict[str, Subscription]) -> Result:
        """`assignor.assignPartitions`: the cooperative one withholds moving partitions."""
        if self.cooperative:
            return cooperative_sticky_assign(self.cluster(), subs)
        return sticky_assign(self.cluster(), subs, sticky_member_data).assignment

    def transferring(self, subs: dict[str, Subscription]) -> dict[TopicPartition, str] | None:
        """Java's `partitionsTransferringOwnership` after the same call."""
        reader = cooperative_member_data if self.cooperative else sticky_member_data
        return sticky_assign(self.cluster(), subs, reader).transferring

    def verify(self, subs: dict[str, Subscription], assignment: Result) -> Result:
        """`verifyValidityAndBalance`; for the cooperative assignor, first the follow-up
        rebalances (subscriptions updated in place, as Java's test does), checking that no
        partition is revoked and reassigned in the same round."""
        rounds = 0
        while self.cooperative and self._revokes(subs, assignment):
            for member, partitions in assignment.items():
                old = subs[member]
                index = ALL_RACKS.index(old.rack_id) if old.rack_id else -1
                subs[member] = self.v2(old.topics, partitions, GENERATION, index)
            assignment = self.assign(subs)
            rounds += 1
            assert rounds <= 4
        verify_validity_and_balance(subs, assignment)
        return assignment

    @staticmethod
    def _revokes(subs: dict[str, Subscription], assignment: Result) -> bool:
        added: set[TopicPartition] = set()
        revoked: set[TopicPartition] = set()
        for member, partitions in assignment.items():
            owned = set(subs[member].owned_partitions)
            added |= set(partitions) - owned
            revoked |= owned - set(partitions)
        assert not added & revoked, f"moved in one round: {added & revoked}"
        return bool(revoked)


__all__ = ["GENERATION", "Result", "StickyHarness"]
