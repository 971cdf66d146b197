"""Admin calls on client quotas (KIP-546): alter and describe."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

from krafka.io.admin.base import AdminBase
from krafka.sansio.admin.quotas import (
    AlterClientQuotas,
    ClientQuotaEntity,
    ClientQuotaFilter,
    DescribeClientQuotas,
    QuotaAlteration,
    as_entity,
    as_filter,
)
from krafka.sansio.admin.results import Results
from krafka.sansio.admin.routing import ToAnyBroker

_QUOTAS: Final = "client quotas"


class QuotasAdmin(AdminBase):
    async def alter_client_quotas(
        self,
        alterations: Iterable[QuotaAlteration],
        *,
        validate_only: bool = False,
        timeout: float | None = None,
    ) -> Results[ClientQuotaEntity, None]:
        """Set or remove quotas: `[({"client-id": "slow"}, {"producer_byte_rate": 1024.0,
        "consumer_byte_rate": None}), ...]` (None removes a quota; an entity name None is the
        type's default). Returns `{entity: None or error}`; `validate_only` checks without
        changing anything."""
        wanted: dict[ClientQuotaEntity, dict[str, float | None]] = {}
        for entity, ops in alterations:
            wanted.setdefault(as_entity(entity), {}).update(_ops(ops))
        handler = AlterClientQuotas(wanted, validate_only)
        return Results(await self._run(handler, ToAnyBroker(), list(wanted), timeout))

    async def describe_client_quotas(
        self,
        filter: ClientQuotaFilter | Mapping[str, Any] | None = None,
        *,
        timeout: float | None = None,
    ) -> dict[ClientQuotaEntity, dict[str, float]]:
        """`{entity: {quota key: value}}` of the entities `filter` matches (None: all of
        them); a mapping filter is `{"client-id": "slow"}` (that name), `{"user": None}` (the
        default user) or `{"user": ANY}` (any named user); `ClientQuotaFilter` adds strict."""
        handler = DescribeClientQuotas(as_filter(filter))
        quotas: dict[ClientQuotaEntity, dict[str, float]] = await self._run_one(
            handler, ToAnyBroker(), _QUOTAS, timeout
        )
        return quotas


def _ops(ops: Mapping[str, float | None]) -> dict[str, float | None]:
    if not isinstance(ops, Mapping):
        raise TypeError("each alteration is (entity, {quota key: value or None})")
    return {str(k): None if v is None else float(v) for k, v in ops.items()}
