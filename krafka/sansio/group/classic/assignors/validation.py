"""The leader's check of a custom cooperative assignor (Java's
`ConsumerCoordinator.validateCooperativeAssignment`).

Under COOPERATIVE a partition may not be added to one member while another still owns it: the
owner must give it up first and the next rebalance hands it over. Java trusts its built-in
`cooperative-sticky` (it weighs claims by generation, which this plain check would misread
after a member lost its partitions) and checks every other assignor.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final

from krafka.errors import InvalidStateError
from krafka.sansio.group.classic.assignors.assignor import (
    Assignment,
    PartitionAssignor,
    RebalanceProtocol,
    Subscription,
)
from krafka.structs import TopicPartition

TRUSTED_COOPERATIVE_ASSIGNORS: Final = frozenset({"cooperative-sticky"})


def needs_cooperative_validation(assignor: PartitionAssignor, protocol: RebalanceProtocol) -> bool:
    return (
        protocol is RebalanceProtocol.COOPERATIVE
        and assignor.name not in TRUSTED_COOPERATIVE_ASSIGNORS
    )


def validate_cooperative_assignment(
    owned: Mapping[str, Sequence[TopicPartition]],
    assignments: Mapping[str, Assignment],
    assignor_name: str = "custom",
) -> None:
    """Raise `InvalidStateError` if a partition is both added to a member and revoked from
    another. `owned` maps each member to the partitions its subscription claims."""
    added: set[TopicPartition] = set()
    revoked: set[TopicPartition] = set()
    for member, assignment in assignments.items():
        if member not in owned:
            raise InvalidStateError(
                f"assignor {assignor_name!r} assigned partitions to unknown member {member!r}"
            )
        mine = set(owned[member])
        now = set(assignment.partitions)
        added |= now - mine
        revoked |= mine - now
    moved = sorted(added & revoked)
    if moved:
        raise InvalidStateError(
            f"assignor {assignor_name!r} violates the COOPERATIVE protocol: it reassigned "
            f"{', '.join(map(str, moved))} while other members still own them"
        )


def validate_leader_assignment(
    assignor: PartitionAssignor,
    protocol: RebalanceProtocol,
    subscriptions: Mapping[str, Subscription],
    assignments: Mapping[str, Assignment],
) -> None:
    """What Java's leader checks after `assign`: the cooperative rule, when it applies."""
    if needs_cooperative_validation(assignor, protocol):
        owned = {member: s.owned_partitions for member, s in subscriptions.items()}
        validate_cooperative_assignment(owned, assignments, assignor.name)


__all__ = [
    "TRUSTED_COOPERATIVE_ASSIGNORS",
    "needs_cooperative_validation",
    "validate_cooperative_assignment",
    "validate_leader_assignment",
]
