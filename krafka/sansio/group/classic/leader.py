"""The group leader's work: read every member's subscription, run the chosen assignor, check
a cooperative result, and encode one assignment per member for SyncGroup.

Pure functions over values (Java's `ConsumerCoordinator.onLeaderElected`). Every member gets
an assignment, empty if the assignor named none for it (an absent one would reach that member as
zero bytes, which no consumer can read).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from krafka.errors import InvalidStateError, KrafkaError
from krafka.protocol.messages.join_group_response import JoinGroupResponseMember
from krafka.sansio.group.classic.assignors import (
    Assignment,
    Cluster,
    PartitionAssignor,
    RebalanceProtocol,
    Subscription,
    validate_leader_assignment,
)
from krafka.sansio.group.classic.consumer_protocol import decode_subscription, encode_assignment


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
    validate_leader_assignment(assignor, protocol, subs, result)
    return LeaderAssignment(
        {member: encode_assignment(a) for member, a in result.items()}, group_topics(subs)
    )


__all__ = ["LeaderAssignment", "assign", "group_topics", "subscriptions"]
