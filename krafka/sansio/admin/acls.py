"""ACLs: typed bindings and filters, and the CreateAcls / DescribeAcls / DeleteAcls handlers.

An `AclBinding` is one rule (Kafka's ResourcePattern + AccessControlEntry, flat as in
confluent-kafka): `ALLOW User:alice READ on TOPIC literal 'orders' from *`. An
`AclBindingFilter` matches bindings; its defaults (ANY, None) match everything.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import IntEnum
from typing import Any, Final

from krafka.protocol.error_codes import ErrorCode
from krafka.protocol.messages import (
    CreateAclsRequest,
    CreateAclsResponse,
    DeleteAclsRequest,
    DeleteAclsResponse,
    DescribeAclsRequest,
    DescribeAclsResponse,
)
from krafka.sansio.admin.operation import Call, Handler
from krafka.sansio.admin.outcome import NOTHING_MOVES, Done, ItemResult, for_code
from krafka.sansio.admin.routing import Target

#: ACL requests speak v1+ (Kafka 2.0): v0 knows literal patterns only.
ACL_MIN_VERSION: Final = 1
#: The int32 a response carries when authorized operations were not asked for.
OPERATIONS_OMITTED: Final = -(2**31)


class ResourceType(IntEnum):
    UNKNOWN = 0
    ANY = 1
    TOPIC = 2
    GROUP = 3
    CLUSTER = 4
    TRANSACTIONAL_ID = 5
    DELEGATION_TOKEN = 6
    USER = 7


class PatternType(IntEnum):
    UNKNOWN = 0
    ANY = 1
    MATCH = 2
    LITERAL = 3
    PREFIXED = 4


class AclOperation(IntEnum):
    UNKNOWN = 0
    ANY = 1
    ALL = 2
    READ = 3
    WRITE = 4
    CREATE = 5
    DELETE = 6
    ALTER = 7
    DESCRIBE = 8
    CLUSTER_ACTION = 9
    DESCRIBE_CONFIGS = 10
    ALTER_CONFIGS = 11
    IDEMPOTENT_WRITE = 12
    CREATE_TOKENS = 13
    DESCRIBE_TOKENS = 14
    TWO_PHASE_COMMIT = 15


class AclPermissionType(IntEnum):
    UNKNOWN = 0
    ANY = 1
    DENY = 2
    ALLOW = 3


_NOT_IN_BINDING: Final = frozenset({0, 1})  # UNKNOWN and ANY only match, never describe a rule


def authorized_operations(bits: int) -> frozenset[AclOperation] | None:
    """The operations a 32-bit field grants (None when the broker was not asked for them)."""
    if bits == OPERATIONS_OMITTED:
        return None
    ops = {op for op in AclOperation if bits & (1 << op)}
    return frozenset(ops - {AclOperation.UNKNOWN, AclOperation.ANY, AclOperation.ALL})


def _enum(cls: type[IntEnum], value: Any) -> Any:
    """Enum members, their names (`"read"`) or their codes all name a member."""
    if isinstance(value, str):
        return cls[value.upper()]
    return cls(int(value))


@dataclass(frozen=True, slots=True)
class AclBinding:
    """One ACL rule. `principal` is `"User:alice"`; `host` `"*"` is any host."""

    resource_type: ResourceType
    resource_name: str
    pattern_type: PatternType
    principal: str
    host: str
    operation: AclOperation
    permission_type: AclPermissionType

    def __post_init__(self) -> None:
        for name, cls in _ENUM_FIELDS.items():
            value = _enum(cls, getattr(self, name))
            if value in _NOT_IN_BINDING or (name == "pattern_type" and value == PatternType.MATCH):
                raise ValueError(f"AclBinding.{name} cannot be {value.name}: that is for filters")
            object.__setattr__(self, name, value)

    def __str__(self) -> str:
        return (
            f"{self.permission_type.name} {self.principal} {self.operation.name} on "
            f"{self.resource_type.name} {self.pattern_type.name.lower()} "
            f"{self.resource_name!r} from {self.host}"
        )


@dataclass(frozen=True, slots=True)
class AclBindingFilter:
    """Matches ACL bindings: ANY / None match every value (`AclBindingFilter()` matches all)."""

    resource_type: ResourceType = ResourceType.ANY
    resource_name: str | None = None
    pattern_type: PatternType = PatternType.ANY
    principal: str | None = None
    host: str | None = None
    operation: AclOperation = AclOperation.ANY
    permission_type: AclPermissionType = AclPermissionType.ANY

    def __post_init__(self) -> None:
        for name, cls in _ENUM_FIELDS.items():
            value = _enum(cls, getattr(self, name))
            if value == 0:
                raise ValueError(f"AclBindingFilter.{name} cannot be UNKNOWN")
            object.__setattr__(self, name, value)

    def __str__(self) -> str:
        parts = [f"{k}={getattr(self, k)!s}" for k in _FILTER_FIELDS if getattr(self, k) != 1]
        return "ACL filter(" + ", ".join(p for p in parts if not p.endswith("=None")) + ")"


_ENUM_FIELDS: Final[Mapping[str, type[IntEnum]]] = {
    "resource_type": ResourceType,
    "pattern_type": PatternType,
    "operation": AclOperation,
    "permission_type": AclPermissionType,
}
_FILTER_FIELDS: Final = (
    "resource_type",
    "resource_name",
    "pattern_type",
    "principal",
    "host",
    "operation",
    "permission_type",
)


def _binding(resource: Any, acl: Any) -> AclBinding:
    return AclBinding(
        ResourceType(int(resource.resource_type)),
        str(resource.resource_name),
        PatternType(int(getattr(resource, "pattern_type", PatternType.LITERAL))),
        str(acl.principal),
        str(acl.host),
        AclOperation(int(acl.operation)),
        AclPermissionType(int(acl.permission_type)),
    )


def _filter_fields(f: AclBindingFilter) -> dict[str, Any]:
    return {
        "resource_type_filter": int(f.resource_type),
        "resource_name_filter": f.resource_name,
        "pattern_type_filter": int(f.pattern_type),
        "principal_filter": f.principal,
        "host_filter": f.host,
        "operation": int(f.operation),
        "permission_type": int(f.permission_type),
    }


class CreateAcls(Handler[AclBinding]):
    what = "create ACLs"

    def describe(self, key: AclBinding) -> str:
        return f"ACL {key}"

    def requests(self, target: Target, keys: Sequence[AclBinding]) -> list[Call[AclBinding]]:
        creations = [
            CreateAclsRequest.AclCreation(
                resource_type=int(b.resource_type),
                resource_name=b.resource_name,
                resource_pattern_type=int(b.pattern_type),
                principal=b.principal,
                host=b.host,
                operation=int(b.operation),
                permission_type=int(b.permission_type),
            )
            for b in keys
        ]
        request = CreateAclsRequest(creations=creations)
        return [Call(request, tuple(keys), min_version=ACL_MIN_VERSION)]

    def on_response(
        self, call: Call[AclBinding], target: Target, response: Any
    ) -> Mapping[AclBinding, ItemResult]:
        assert isinstance(response, CreateAclsResponse)
        out: dict[AclBinding, ItemResult] = {}
        for key, result in zip(call.keys, response.results, strict=False):
            what = f"create ACL {key}"
            code = int(result.error_code)
            out[key] = for_code(
                code, what, result.error_message, moved=NOTHING_MOVES, retry=False
            ) or Done(None)
        return out


class DescribeAcls(Handler[AclBindingFilter]):
    what = "describe ACLs"

    def describe(self, key: AclBindingFilter) -> str:
        return str(key)

    def requests(
        self, target: Target, keys: Sequence[AclBindingFilter]
    ) -> list[Call[AclBindingFilter]]:
        return [
            Call(DescribeAclsRequest(**_filter_fields(k)), (k,), min_version=ACL_MIN_VERSION)
            for k in keys
        ]

    def on_response(
        self, call: Call[AclBindingFilter], target: Target, response: Any
    ) -> Mapping[AclBindingFilter, ItemResult]:
        assert isinstance(response, DescribeAclsResponse)
        (key,) = call.keys
        code = int(response.error_code)
        outcome = for_code(code, f"describe {key}", response.error_message, moved=NOTHING_MOVES)
        if outcome is not None:
            return {key: outcome}
        bindings = [_binding(r, acl) for r in response.resources for acl in r.acls]
        return {key: Done(tuple(bindings))}


class DeleteAcls(Handler[AclBindingFilter]):
    what = "delete ACLs"

    def describe(self, key: AclBindingFilter) -> str:
        return str(key)

    def requests(
        self, target: Target, keys: Sequence[AclBindingFilter]
    ) -> list[Call[AclBindingFilter]]:
        filters = [DeleteAclsRequest.DeleteAclsFilter(**_filter_fields(k)) for k in keys]
        return [Call(DeleteAclsRequest(filters=filters), tuple(keys), min_version=ACL_MIN_VERSION)]

    def on_response(
        self, call: Call[AclBindingFilter], target: Target, response: Any
    ) -> Mapping[AclBindingFilter, ItemResult]:
        assert isinstance(response, DeleteAclsResponse)
        out: dict[AclBindingFilter, ItemResult] = {}
        for key, result in zip(call.keys, response.filter_results, strict=False):
            out[key] = _deleted(key, result)
        return out


def _deleted(key: AclBindingFilter, result: Any) -> ItemResult:
    """A filter's deleted bindings; the first error of the filter or of one match fails it."""
    what = f"delete {key}"
    outcome = for_code(
        int(result.error_code), what, result.error_message, moved=NOTHING_MOVES, retry=False
    )
    if outcome is not None:
        return outcome
    deleted: list[AclBinding] = []
    for match in result.matching_acls:
        code = int(match.error_code)
        if code != ErrorCode.NONE:
            binding = _binding(match, match)
            failed = for_code(
                code, f"delete ACL {binding}", match.error_message, moved=NOTHING_MOVES, retry=False
            )
            if failed is not None:
                return failed
        deleted.append(_binding(match, match))
    return Done(tuple(deleted))


__all__ = [
    "AclBinding",
    "AclBindingFilter",
    "AclOperation",
    "AclPermissionType",
    "CreateAcls",
    "DeleteAcls",
    "DescribeAcls",
    "PatternType",
    "ResourceType",
    "authorized_operations",
]
