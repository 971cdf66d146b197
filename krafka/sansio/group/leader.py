"""The group leader's work: read every member's subscription, run the chosen assignor, check
a cooperative result, and encode one assignment per member for SyncGroup.

Pure functions over values (Java's `ConsumerCoordinator.onLeaderElected`). Every member gets
an assignment, empty if the assignor named none for it (an absent one would reach that member as
zero bytes, which no consumer can read).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from krafka.errors import InvalidStateError, KrafkaError
from krafka.protocol.messages.join_group_response import JoinGroupResponseMember
from krafka.sansio.group.assignor import (
    Assignment,
    Cluster,
    PartitionAssignor,
    RebalanceProtocol,
    Subscription,
    decode_subscription,
    encode_assignment,
)
from krafka.structs import TopicPartition

#: Java trusts its own cooperative-sticky assignor (it weighs claims by generation, which the
#: plain ownership check below would misread) and validates every other cooperative one.
TRUSTED_COOPERATIVE: Final = frozenset({"cooperative-sticky"})


@dataclass(frozen=True, slots=True)
class LeaderAssignment:
    """What SyncGroup carries (member id -> encoded assignment) and the topics it covered."""

    assignments: dict[str, bytes]
    group_topics: frozenset[str]


def subscriptions(members: Sequence[JoinGroupResponseMember]) -> dict[str, Subscription]:
    """Every member's subscription, from JoinGroup's member metadata."""
    out: dict[str, Subscription] = {}
    for member in members:
        try:
            out[member.member_id] = decode_subscription(member.metadata, member.group_instance_id)
        except KrafkaError as exc:
            raise InvalidStateError(
                f"group member {member.member_id!r} sent a subscription krafka cannot read: {exc}"
            ) from exc
    return out


def group_topics(subs: Mapping[str, Subscription]) -> frozenset[str]:
    return frozenset(t for s in subs.values() for t in s.topics)


def assign(
    assignor: PartitionAssignor,
    protocol: RebalanceProtocol,
    cluster: Cluster,
    subs: Mapping[str, Subscription],
) -> LeaderAssignment:
    """Run `assignor` for `subs`; raises `InvalidStateError` if a cooperative result moves a
    partition straight from one owner to another."""
    try:
        result = dict(assignor.assign(cluster, subs))
    except Exception as exc:
        raise InvalidStateError(f"assignor {assignor.name!r} failed: {exc!r}") from exc
    unknown = sorted(set(result) - set(subs))
    if unknown:
        raise InvalidStateError(f"assignor {assignor.name!r} assigned unknown members {unknown}")
    for member in subs:
        result.setdefault(member, Assignment(()))
    if protocol is RebalanceProtocol.COOPERATIVE and assignor.name not in TRUSTED_COOPERATIVE:
        validate_cooperative(assignor.name, subs, result)
    return LeaderAssignment(
        {member: encode_assignment(a) for member, a in result.items()}, group_topics(subs)
    )


def validate_cooperative(
    name: str, subs: Mapping[str, Subscription], result: Mapping[str, Assignment]
) -> None:
    """No partition may be added to one member while another member still gives it up."""
    added: set[TopicPartition] = set()
    revoked: set[TopicPartition] = set()
    for member, assignment in result.items():
        owned = set(subs[member].owned_partitions)
        now = set(assignment.partitions)
        added |= now - owned
        revoked |= owned - now
    moved = sorted(added & revoked)
    if moved:
        raise InvalidStateError(
            f"assignor {name!r} violates the COOPERATIVE protocol: it reassigned partitions "
            f"{[str(tp) for tp in moved]} that other members still own"
        )


__all__ = [
    "TRUSTED_COOPERATIVE",
    "LeaderAssignment",
    "assign",
    "group_topics",
    "subscriptions",
    "validate_cooperative",
]
