"""Admin calls on ACLs: create, describe, delete."""

from __future__ import annotations

from collections.abc import Iterable

from krafka.io.admin.base import AdminBase
from krafka.sansio.admin.acls import (
    AclBinding,
    AclBindingFilter,
    CreateAcls,
    DeleteAcls,
    DescribeAcls,
)
from krafka.sansio.admin.results import Results
from krafka.sansio.admin.routing import ToAnyBroker


class AclsAdmin(AdminBase):
    async def create_acls(
        self, bindings: Iterable[AclBinding], *, timeout: float | None = None
    ) -> Results[AclBinding, None]:
        """Create ACL rules: `{binding: None or error}`."""
        wanted = list(dict.fromkeys(bindings))
        return Results(await self._run(CreateAcls(), ToAnyBroker(), wanted, timeout))

    async def describe_acls(
        self, acl_filter: AclBindingFilter | None = None, *, timeout: float | None = None
    ) -> list[AclBinding]:
        """The ACL rules matching `acl_filter` (default: every rule)."""
        key = acl_filter or AclBindingFilter()
        bindings: tuple[AclBinding, ...] = await self._run_one(
            DescribeAcls(), ToAnyBroker(), key, timeout
        )
        return list(bindings)

    async def delete_acls(
        self, filters: Iterable[AclBindingFilter], *, timeout: float | None = None
    ) -> Results[AclBindingFilter, tuple[AclBinding, ...]]:
        """Delete the rules each filter matches: `{filter: the bindings it deleted}`."""
        wanted = list(dict.fromkeys(filters))
        return Results(await self._run(DeleteAcls(), ToAnyBroker(), wanted, timeout))
