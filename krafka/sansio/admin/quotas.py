"""Client quotas (KIP-546): set, remove and describe the byte-rate, request and mutation
quotas of users, client ids and IPs.

An entity is a mapping of entity type (`"user"`, `"client-id"`, `"ip"`) to a name, or to None
for the type's default (`{"user": None}` is every user without a quota of their own);
`ClientQuotaEntity` is its hashable form, equal to the plain dict. A quota is a key
(`producer_byte_rate`, `consumer_byte_rate`, `request_percentage`,
`controller_mutation_rate`, `connection_creation_rate`) with a float value; None removes it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from enum import IntEnum
from typing import Any

from krafka.protocol.messages import (
    AlterClientQuotasRequest,
    AlterClientQuotasResponse,
    DescribeClientQuotasRequest,
    DescribeClientQuotasResponse,
)
from krafka.protocol.messages.alter_client_quotas_request import EntityData, EntryData, OpData
from krafka.protocol.messages.describe_client_quotas_request import ComponentData
from krafka.sansio.admin.operation import Call, Handler
from krafka.sansio.admin.outcome import NOTHING_MOVES, Done, ItemResult, for_code
from krafka.sansio.admin.routing import Target


class ClientQuotaEntity(Mapping[str, "str | None"]):
    """An entity quotas apply to: entity type -> name (None: that type's default). Hashable,
    and equal to the dict it was made from."""

    __slots__ = ("_items",)

    def __init__(self, entity: Mapping[str, str | None] | None = None, /, **names: str | None):
        items = {**dict(entity or {}), **{k.replace("_", "-"): v for k, v in names.items()}}
        if not items:
            raise ValueError("a quota entity names at least one entity type")
        for kind, name in items.items():
            if not isinstance(kind, str) or not kind:
                raise ValueError(f"bad quota entity type {kind!r}")
            if name is not None and not isinstance(name, str):
                raise TypeError(f"quota entity {kind}: a name (str) or None, not {name!r}")
        self._items: tuple[tuple[str, str | None], ...] = tuple(sorted(items.items()))

    def __getitem__(self, key: str) -> str | None:
        for kind, name in self._items:
            if kind == key:
                return name
        raise KeyError(key)

    def __iter__(self) -> Iterator[str]:
        return (kind for kind, _ in self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __hash__(self) -> int:
        return hash(self._items)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, ClientQuotaEntity):
            return self._items == other._items
        if isinstance(other, Mapping):
            return dict(self._items) == dict(other)
        return NotImplemented

    def __repr__(self) -> str:
        return f"ClientQuotaEntity({dict(self._items)!r})"


def as_entity(entity: Mapping[str, str | None]) -> ClientQuotaEntity:
    return entity if isinstance(entity, ClientQuotaEntity) else ClientQuotaEntity(entity)


class QuotaMatch(IntEnum):
    """How a filter component matches an entity type's name (DescribeClientQuotas)."""

    EXACT = 0  # this name
    DEFAULT = 1  # the type's default entity
    SPECIFIED = 2  # any name (not the default)


@dataclass(frozen=True, slots=True)
class QuotaFilterComponent:
    entity_type: str
    match_type: QuotaMatch
    match: str | None = None

    @classmethod
    def of_entity(cls, entity_type: str, name: str) -> QuotaFilterComponent:
        return cls(entity_type, QuotaMatch.EXACT, name)

    @classmethod
    def of_default_entity(cls, entity_type: str) -> QuotaFilterComponent:
        return cls(entity_type, QuotaMatch.DEFAULT)

    @classmethod
    def of_entity_type(cls, entity_type: str) -> QuotaFilterComponent:
        return cls(entity_type, QuotaMatch.SPECIFIED)


#: In a filter mapping, "any name of this type" (`{"user": ANY}`).
ANY = QuotaMatch.SPECIFIED


@dataclass(frozen=True, slots=True)
class ClientQuotaFilter:
    """Which entities to describe: those matching every component; `strict` also leaves out
    entities with entity types the components do not name. No components: everything."""

    components: tuple[QuotaFilterComponent, ...] = ()
    strict: bool = False

    @classmethod
    def from_mapping(
        cls, spec: Mapping[str, str | QuotaMatch | None], strict: bool = False
    ) -> ClientQuotaFilter:
        """`{"client-id": "slow"}` (that name), `{"user": None}` (the default user),
        `{"user": ANY}` (any named user)."""
        components = []
        for kind, value in spec.items():
            if value is None:
                components.append(QuotaFilterComponent.of_default_entity(kind))
            elif isinstance(value, QuotaMatch):
                components.append(QuotaFilterComponent(kind, value))
            else:
                components.append(QuotaFilterComponent.of_entity(kind, str(value)))
        return cls(tuple(components), strict)


def as_filter(spec: ClientQuotaFilter | Mapping[str, Any] | None) -> ClientQuotaFilter:
    if spec is None:
        return ClientQuotaFilter()
    if isinstance(spec, ClientQuotaFilter):
        return spec
    return ClientQuotaFilter.from_mapping(spec)


QuotaAlteration = tuple[Mapping[str, "str | None"], Mapping[str, "float | None"]]


def _entity_from(entries: Iterable[Any]) -> ClientQuotaEntity:
    return ClientQuotaEntity({str(e.entity_type): e.entity_name for e in entries})


class AlterClientQuotas(Handler[ClientQuotaEntity]):
    """AlterClientQuotas: every entity's changes in one request; each entity succeeds or
    fails on its own."""

    what = "alter client quotas"

    def __init__(
        self,
        alterations: Mapping[ClientQuotaEntity, Mapping[str, float | None]],
        validate_only: bool,
    ) -> None:
        self.alterations = dict(alterations)
        self.validate_only = validate_only

    def describe(self, key: ClientQuotaEntity) -> str:
        return f"quota entity {dict(key)}"

    def requests(
        self, target: Target, keys: Sequence[ClientQuotaEntity]
    ) -> list[Call[ClientQuotaEntity]]:
        entries = [
            EntryData(
                entity=[EntityData(entity_type=t, entity_name=n) for t, n in key.items()],
                ops=[
                    OpData(key=k, value=0.0 if v is None else float(v), remove=v is None)
                    for k, v in self.alterations[key].items()
                ],
            )
            for key in keys
        ]
        request = AlterClientQuotasRequest(entries=entries, validate_only=self.validate_only)
        return [Call(request, tuple(keys))]

    def on_response(
        self, call: Call[ClientQuotaEntity], target: Target, response: Any
    ) -> Mapping[ClientQuotaEntity, ItemResult]:
        assert isinstance(response, AlterClientQuotasResponse)
        out: dict[ClientQuotaEntity, ItemResult] = {}
        for entry in response.entries:
            entity = _entity_from(entry.entity)
            what = f"alter client quotas of {dict(entity)}"
            code = int(entry.error_code)
            out[entity] = for_code(
                code, what, entry.error_message, moved=NOTHING_MOVES, retry=False
            ) or Done(None)
        return out


class DescribeClientQuotas(Handler[str]):
    """DescribeClientQuotas: `{entity: {quota key: value}}` for the entities the filter
    matches."""

    what = "describe client quotas"

    def __init__(self, quota_filter: ClientQuotaFilter) -> None:
        self.filter = quota_filter

    def requests(self, target: Target, keys: Sequence[str]) -> list[Call[str]]:
        components = [
            ComponentData(entity_type=c.entity_type, match_type=int(c.match_type), match=c.match)
            for c in self.filter.components
        ]
        request = DescribeClientQuotasRequest(components=components, strict=self.filter.strict)
        return [Call(request, tuple(keys))]

    def on_response(
        self, call: Call[str], target: Target, response: Any
    ) -> Mapping[str, ItemResult]:
        assert isinstance(response, DescribeClientQuotasResponse)
        code = int(response.error_code)
        failure = for_code(code, self.what, response.error_message, moved=NOTHING_MOVES)
        if failure is not None:
            return dict.fromkeys(call.keys, failure)
        quotas = {
            _entity_from(entry.entity): {str(v.key): float(v.value) for v in entry.values}
            for entry in response.entries or ()
        }
        return dict.fromkeys(call.keys, Done(quotas))


__all__ = [
    "ANY",
    "AlterClientQuotas",
    "ClientQuotaEntity",
    "ClientQuotaFilter",
    "DescribeClientQuotas",
    "QuotaAlteration",
    "QuotaFilterComponent",
    "QuotaMatch",
    "as_entity",
    "as_filter",
]
