"""Admin calls on groups: list (every broker), describe (classic, consumer and share groups,
detected), delete."""

from __future__ import annotations

from collections.abc import Iterable

from krafka.errors import KrafkaError
from krafka.io.admin.base import AdminBase, names_of
from krafka.sansio.admin.group_description import DescribeGroups, GroupDescription
from krafka.sansio.admin.groups import DeleteGroups, GroupListing, GroupState, GroupType, ListGroups
from krafka.sansio.admin.results import Results
from krafka.sansio.admin.routing import ToBrokers, ToCoordinators
from krafka.sansio.coordinator import CoordinatorType


class GroupsAdmin(AdminBase):
    def _group_routing(self) -> ToCoordinators[str]:
        return ToCoordinators(CoordinatorType.GROUP, str, self.backoff, self._rand)

    async def list_groups(
        self,
        *,
        states: Iterable[GroupState | str] = (),
        types: Iterable[GroupType | str] = (),
        timeout: float | None = None,
    ) -> list[GroupListing]:
        """Every group of the cluster (asked of every broker), sorted by id; `states` and
        `types` keep only groups in one of those states / of one of those types. Raises if a
        broker could not answer (the listing would be incomplete)."""
        handler = ListGroups(
            [GroupState.parse(s) for s in states], [GroupType.parse(t) for t in types]
        )
        nodes = await self._brokers(timeout)
        routing: ToBrokers[int] = ToBrokers(lambda b: b, nodes=nodes)
        per_broker = await self._run(handler, routing, sorted(nodes), timeout)
        listings: dict[str, GroupListing] = {}
        for value in per_broker.values():
            if isinstance(value, KrafkaError):
                raise value
            listings.update((g.group_id, g) for g in value)
        return [listings[g] for g in sorted(listings)]

    async def describe_groups(
        self,
        group_ids: Iterable[str],
        *,
        include_authorized_operations: bool = False,
        timeout: float | None = None,
    ) -> Results[str, GroupDescription]:
        """`{group id: GroupDescription}`: state, kind, coordinator, members and their
        assignments, for classic, consumer (KIP-848) and share (KIP-932) groups alike. A group
        that does not exist gets `GroupIdNotFoundError`."""
        groups = names_of(group_ids, "describe_groups")
        handler = DescribeGroups(include_authorized_operations)
        return Results(await self._run(handler, self._group_routing(), groups, timeout))

    async def delete_groups(
        self, group_ids: Iterable[str], *, timeout: float | None = None
    ) -> Results[str, None]:
        """Delete groups and their offsets; only empty groups (`NonEmptyGroupError`)."""
        groups = names_of(group_ids, "delete_groups")
        return Results(await self._run(DeleteGroups(), self._group_routing(), groups, timeout))
