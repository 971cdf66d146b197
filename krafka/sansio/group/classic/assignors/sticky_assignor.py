"""The sticky assignors: `sticky` (eager, Java's `StickyAssignor`, KIP-54) and
`cooperative-sticky` (Java's `CooperativeStickyAssignor`, KIP-429).

Both balance the partitions (counts differ by at most one when every member subscribes to the
same topics) while keeping as many partitions as possible where they were. They differ in where
a member's previous partitions come from and in what they may hand out at once:

- `sticky` reads each member's previous assignment and generation from its user data (eager
  members own nothing while they rejoin), and moves partitions freely.
- `cooperative-sticky` reads the owned partitions from the subscription and their generation
  from the v2 `GenerationId` field, falling back to its user data (`{generation}`); a
  partition moving between members is withheld from its new owner this round (the old owner
  revokes it and rejoins; the next round hands it over), so no partition ever has two owners.

A claim from an older generation loses to a newer one; two claims from one generation void it.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final

from krafka.errors import KrafkaError
from krafka.sansio.group.classic.assignors._constrained import ConstrainedBuilder
from krafka.sansio.group.classic.assignors._general import GeneralBuilder
from krafka.sansio.group.classic.assignors._sticky_common import (
    MemberData,
    MemberDataReader,
    RackInfo,
    resolve_ownership,
)
from krafka.sansio.group.classic.assignors.assignor import (
    NO_GENERATION,
    Assignment,
    Cluster,
    RebalanceProtocol,
    Subscription,
    partitions_per_topic,
)
from krafka.sansio.group.classic.assignors.user_data import (
    decode_cooperative_sticky_user_data,
    decode_sticky_user_data,
    encode_cooperative_sticky_user_data,
    encode_sticky_user_data,
)
from krafka.structs import TopicPartition


@dataclass(frozen=True, slots=True)
class StickyResult:
    """The balanced assignment, and the partitions it gives to a member other than their
    previous owner (None when the general builder ran: computed from the result instead).
    `claims` are the owners that survived the generation checks, `contested` the partitions
    claimed twice in one generation."""

    assignment: dict[str, list[TopicPartition]]
    transferring: dict[TopicPartition, str] | None
    claims: dict[TopicPartition, str] = field(default_factory=dict)
    contested: frozenset[TopicPartition] = frozenset()


def sticky_member_data(subscription: Subscription) -> MemberData:
    """Java's `StickyAssignor.memberData`: everything comes from the user data."""
    if not subscription.user_data:
        return MemberData((), None)
    try:
        decoded = decode_sticky_user_data(subscription.user_data)
    except KrafkaError:
        return MemberData((), NO_GENERATION)
    return MemberData(decoded.previous_assignment, decoded.generation)


def cooperative_member_data(subscription: Subscription) -> MemberData:
    """Java's `CooperativeStickyAssignor.memberData`: owned partitions from the subscription,
    the generation from its v2 field, else from the user data (-1 if unreadable)."""
    owned = subscription.owned_partitions
    if subscription.generation_id >= 0:
        return MemberData(owned, subscription.generation_id)
    if subscription.user_data is None:
        return MemberData(owned, None)
    try:
        return MemberData(owned, decode_cooperative_sticky_user_data(subscription.user_data))
    except KrafkaError:
        return MemberData(owned, NO_GENERATION)


def sticky_assign(
    cluster: Cluster, subscriptions: Mapping[str, Subscription], member_data: MemberDataReader
) -> StickyResult:
    """Java's `AbstractStickyAssignor.assignPartitions`."""
    if not subscriptions:
        return StickyResult({}, {})
    counts = partitions_per_topic(cluster, subscriptions)
    racks = RackInfo(cluster, counts, subscriptions)
    ownership = resolve_ownership(counts, subscriptions, member_data)
    claims = {tp: member for member, tps in ownership.owned.items() for tp in tps}
    contested = frozenset(ownership.multiply_owned)
    if ownership.all_subscriptions_equal:
        constrained = ConstrainedBuilder(counts, racks, ownership.owned, ownership.multiply_owned)
        return StickyResult(constrained.build(), constrained.transferring, claims, contested)
    general = GeneralBuilder(
        counts, racks, ownership.owned, subscriptions, member_data, ownership.max_generation
    )
    return StickyResult(general.build(), None, claims, contested)


def _moving_partitions(
    result: StickyResult, subscriptions: Mapping[str, Subscription]
) -> dict[TopicPartition, str]:
    """Partitions to withhold from their new member this round.

    Java's general path compares each member's new partitions with the ones it claimed, so a
    stale claimant (older generation) or one of two same-generation claimants can be handed a
    partition its newest owner still holds. krafka also withholds those: a partition goes only
    to its surviving claimant (or to anyone, if nobody claims it)."""
    if result.transferring is not None:
        return result.transferring
    added: dict[TopicPartition, str] = {}
    revoked: set[TopicPartition] = set()
    for member, assigned in result.assignment.items():
        owned = subscriptions[member].owned_partitions
        owned_set, assigned_set = set(owned), set(assigned)
        added.update((tp, member) for tp in assigned if tp not in owned_set)
        revoked.update(tp for tp in owned if tp not in assigned_set)
    moving = {tp: member for tp, member in added.items() if tp in revoked}
    for member, assigned in result.assignment.items():
        for tp in assigned:
            claimant = result.claims.get(tp)
            if tp in result.contested or (claimant is not None and claimant != member):
                moving[tp] = member
    return moving


def cooperative_sticky_assign(
    cluster: Cluster, subscriptions: Mapping[str, Subscription]
) -> dict[str, list[TopicPartition]]:
    """The sticky assignment minus every partition still owned by another member."""
    result = sticky_assign(cluster, subscriptions, cooperative_member_data)
    for tp, member in _moving_partitions(result, subscriptions).items():
        partitions = result.assignment[member]
        if tp in partitions:
            partitions.remove(tp)
    return result.assignment


def _assignments(
    result: Mapping[str, list[TopicPartition]], members: Iterable[str]
) -> dict[str, Assignment]:
    """One assignment per member, in the members' (JoinGroup) order."""
    return {member: Assignment(tuple(result.get(member, ()))) for member in members}


class StickyAssignor:
    """`sticky`: balanced and sticky, EAGER; user data `{previous_assignment, generation}`."""

    name: Final = "sticky"

    def supported_protocols(self) -> Sequence[RebalanceProtocol]:
        return (RebalanceProtocol.EAGER,)

    def subscription_user_data(
        self,
        topics: Collection[str],
        owned: Sequence[TopicPartition] = (),
        generation: int = NO_GENERATION,
    ) -> bytes | None:
        """The previous assignment and its generation; None before any assignment."""
        if not owned and generation == NO_GENERATION:
            return None
        return encode_sticky_user_data(owned, generation)

    def assign(
        self, cluster: Cluster, subscriptions: Mapping[str, Subscription]
    ) -> dict[str, Assignment]:
        result = sticky_assign(cluster, subscriptions, sticky_member_data)
        return _assignments(result.assignment, subscriptions)

    def on_assignment(self, assignment: Assignment, generation: int) -> None:
        return None

    def __repr__(self) -> str:
        return "StickyAssignor()"


class CooperativeStickyAssignor:
    """`cooperative-sticky`: balanced and sticky, COOPERATIVE (and EAGER, for a rolling
    upgrade from eager assignors); user data `{generation}`."""

    name: Final = "cooperative-sticky"

    def supported_protocols(self) -> Sequence[RebalanceProtocol]:
        return (RebalanceProtocol.COOPERATIVE, RebalanceProtocol.EAGER)

    def subscription_user_data(
        self,
        topics: Collection[str],
        owned: Sequence[TopicPartition] = (),
        generation: int = NO_GENERATION,
    ) -> bytes | None:
        return encode_cooperative_sticky_user_data(generation)

    def assign(
        self, cluster: Cluster, subscriptions: Mapping[str, Subscription]
    ) -> dict[str, Assignment]:
        return _assignments(cooperative_sticky_assign(cluster, subscriptions), subscriptions)

    def on_assignment(self, assignment: Assignment, generation: int) -> None:
        return None

    def __repr__(self) -> str:
        return "CooperativeStickyAssignor()"


__all__ = [
    "CooperativeStickyAssignor",
    "StickyAssignor",
    "StickyResult",
    "cooperative_member_data",
    "cooperative_sticky_assign",
    "sticky_assign",
    "sticky_member_data",
]
