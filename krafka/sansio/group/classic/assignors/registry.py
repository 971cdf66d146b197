"""Choosing assignors: names to objects, the rebalance protocol they allow, and the group
protocol a coordinator picks from its members' preference lists.

- `assignors_for` accepts `"range"`, `"roundrobin"`, `"sticky"`, `"cooperative-sticky"`, Java's
  class names (`org.apache.kafka.clients.consumer.RangeAssignor`, ...), a comma-separated list
  of those (a pasted `partition.assignment.strategy`), or `PartitionAssignor` objects.
- `choose_rebalance_protocol`: the highest protocol every configured assignor supports (Java's
  `ConsumerCoordinator`), so one eager assignor in the list makes the member eager.
- `select_group_protocol`: the coordinator's choice (Java's `ClassicGroup.selectProtocol`):
  among the protocols every member supports, each member votes for its first, most votes win.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Final

from krafka.errors import ConfigError, InvalidStateError
from krafka.sansio.group.classic.assignors._java import JavaHashSet, string_hash
from krafka.sansio.group.classic.assignors.assignor import PartitionAssignor, RebalanceProtocol
from krafka.sansio.group.classic.assignors.range_assignor import RangeAssignor
from krafka.sansio.group.classic.assignors.roundrobin_assignor import RoundRobinAssignor
from krafka.sansio.group.classic.assignors.sticky_assignor import (
    CooperativeStickyAssignor,
    StickyAssignor,
)

_BUILT_IN: Final[dict[str, Callable[[], PartitionAssignor]]] = {
    "range": RangeAssignor,
    "roundrobin": RoundRobinAssignor,
    "sticky": StickyAssignor,
    "cooperative-sticky": CooperativeStickyAssignor,
}
_JAVA_PACKAGE: Final = "org.apache.kafka.clients.consumer."
_JAVA_CLASSES: Final = {
    _JAVA_PACKAGE + "RangeAssignor": "range",
    _JAVA_PACKAGE + "RoundRobinAssignor": "roundrobin",
    _JAVA_PACKAGE + "StickyAssignor": "sticky",
    _JAVA_PACKAGE + "CooperativeStickyAssignor": "cooperative-sticky",
}
BUILT_IN_NAMES: Final = tuple(_BUILT_IN)

AssignorSpec = str | PartitionAssignor


def assignor_for(spec: AssignorSpec) -> PartitionAssignor:
    """One assignor from a name, a Java class name, or a `PartitionAssignor` object."""
    if isinstance(spec, str):
        name = spec.strip()
        factory = _BUILT_IN.get(_JAVA_CLASSES.get(name, name))
        if factory is None:
            known = ", ".join(repr(n) for n in BUILT_IN_NAMES)
            raise ConfigError(f"unknown partition assignor {spec!r}; known: {known}")
        return factory()
    if not isinstance(spec, PartitionAssignor):
        raise ConfigError(
            f"{spec!r} is not a partition assignor (it needs name, supported_protocols, "
            "subscription_user_data, assign and on_assignment)"
        )
    return spec


def _split(specs: AssignorSpec | Iterable[AssignorSpec]) -> list[AssignorSpec]:
    if isinstance(specs, str):
        return [part for part in specs.split(",") if part.strip()]
    if isinstance(specs, PartitionAssignor):
        return [specs]
    out: list[AssignorSpec] = []
    for spec in specs:
        out.extend(_split(spec) if isinstance(spec, str) else [spec])
    return out


def assignors_for(specs: AssignorSpec | Iterable[AssignorSpec]) -> tuple[PartitionAssignor, ...]:
    """The assignors of a `partition_assignment_strategy` setting, in preference order."""
    assignors = tuple(assignor_for(spec) for spec in _split(specs))
    if not assignors:
        raise ConfigError("partition_assignment_strategy names no assignor")
    names = [a.name for a in assignors]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ConfigError(f"partition assignor names used more than once: {duplicates}")
    choose_rebalance_protocol(assignors)
    return assignors


def choose_rebalance_protocol(assignors: Sequence[PartitionAssignor]) -> RebalanceProtocol:
    """The highest rebalance protocol all `assignors` support."""
    if not assignors:
        raise ConfigError("a group member needs at least one partition assignor")
    common = set(assignors[0].supported_protocols())
    for assignor in assignors[1:]:
        common &= set(assignor.supported_protocols())
    if not common:
        names = sorted({a.name for a in assignors})
        raise ConfigError(f"assignors {names} have no rebalance protocol in common")
    return max(common)


def lookup_assignor(assignors: Iterable[PartitionAssignor], name: str) -> PartitionAssignor:
    """The configured assignor the coordinator chose; `InvalidStateError` if there is none."""
    for assignor in assignors:
        if assignor.name == name:
            return assignor
    raise InvalidStateError(f"coordinator selected assignment protocol {name!r}, not ours")


def select_group_protocol(member_protocols: Iterable[Sequence[str]]) -> str:
    """The protocol a coordinator picks; each member lists its protocols in preference order.
    Ties go to the protocol Java's vote map iterates first. Raises `InvalidStateError` if the
    members have no protocol in common (the coordinator refuses such a member with
    INCONSISTENT_GROUP_PROTOCOL)."""
    members = [list(protocols) for protocols in member_protocols]
    if not members:
        raise InvalidStateError("cannot select a protocol for an empty group")
    candidates = set(members[0])
    for protocols in members[1:]:
        candidates &= set(protocols)
    if not candidates:
        raise InvalidStateError("group members have no assignment protocol in common")
    votes: dict[str, int] = {}
    order: JavaHashSet[str] = JavaHashSet(string_hash)
    for protocols in members:
        choice = next(p for p in protocols if p in candidates)
        votes[choice] = votes.get(choice, 0) + 1
        order.add(choice)
    best = max(votes.values())
    return next(p for p in order if votes[p] == best)


__all__ = [
    "BUILT_IN_NAMES",
    "AssignorSpec",
    "assignor_for",
    "assignors_for",
    "choose_rebalance_protocol",
    "lookup_assignor",
    "select_group_protocol",
]
