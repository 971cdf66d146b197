"""Admin calls on configs: describe, and change incrementally (SET / DELETE / APPEND /
SUBTRACT)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from krafka.io.admin.base import AdminBase
from krafka.sansio.admin.configs import (
    AlterConfigOp,
    AlterConfigs,
    ConfigEntry,
    ConfigResource,
    DescribeConfigs,
)
from krafka.sansio.admin.results import Results
from krafka.sansio.admin.routing import ToBrokers


def _ops(changes: Iterable[AlterConfigOp] | Mapping[str, str | None]) -> tuple[AlterConfigOp, ...]:
    """A list of ops, or `{name: value}` meaning SET (None: DELETE)."""
    if isinstance(changes, Mapping):
        return tuple(
            AlterConfigOp.delete(k) if v is None else AlterConfigOp.set(k, str(v))
            for k, v in changes.items()
        )
    return tuple(changes)


def _resources(resources: Iterable[ConfigResource]) -> list[ConfigResource]:
    out = list(dict.fromkeys(resources))
    for r in out:
        if not isinstance(r, ConfigResource):
            raise TypeError(f"not a ConfigResource: {r!r} (try ConfigResource.topic(name))")
    return out


class ConfigsAdmin(AdminBase):
    async def describe_configs(
        self,
        resources: Iterable[ConfigResource],
        *,
        names: Sequence[str] | None = None,
        include_synonyms: bool = False,
        include_documentation: bool = False,
        timeout: float | None = None,
    ) -> Results[ConfigResource, dict[str, ConfigEntry]]:
        """`{resource: {config name: ConfigEntry}}`; `names` limits which configs."""
        wanted = _resources(resources)
        handler = DescribeConfigs(names, include_synonyms, include_documentation)
        routing: ToBrokers[ConfigResource] = ToBrokers(lambda r: r.node_id)
        return Results(await self._run(handler, routing, wanted, timeout))

    async def alter_configs(
        self,
        changes: Mapping[ConfigResource, Iterable[AlterConfigOp] | Mapping[str, str | None]],
        *,
        validate_only: bool = False,
        timeout: float | None = None,
    ) -> Results[ConfigResource, None]:
        """Change configs incrementally (IncrementalAlterConfigs): per resource, a list of
        `AlterConfigOp`s or `{name: value}` (SET; None: DELETE, back to the default)."""
        ops = {resource: _ops(change) for resource, change in changes.items()}
        wanted = _resources(ops)
        handler = AlterConfigs(ops, validate_only)
        routing: ToBrokers[ConfigResource] = ToBrokers(lambda r: r.node_id)
        return Results(await self._run(handler, routing, wanted, timeout))
