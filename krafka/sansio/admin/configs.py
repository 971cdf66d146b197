"""Configs: describe them, and change them incrementally (IncrementalAlterConfigs).

A broker's (and a broker logger's) configs are answered by that broker itself, so requests
about them go to it; every other resource (topics, groups, client metrics, the cluster-wide
broker defaults named "") goes to any broker, all in one request.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import IntEnum
from typing import Any, Final

from krafka.protocol.messages import (
    ApiKey,
    DescribeConfigsRequest,
    DescribeConfigsResponse,
    IncrementalAlterConfigsRequest,
    IncrementalAlterConfigsResponse,
)
from krafka.protocol.messages.describe_configs_request import DescribeConfigsResource
from krafka.protocol.messages.incremental_alter_configs_request import (
    AlterableConfig,
    AlterConfigsResource,
)
from krafka.sansio.actions import Versioned
from krafka.sansio.admin.operation import Call, Handler
from krafka.sansio.admin.outcome import NOTHING_MOVES, Done, ItemResult, for_code
from krafka.sansio.admin.routing import Target

_SYNONYMS_VERSION: Final = 1
_DOCUMENTATION_VERSION: Final = 3


class ConfigResourceType(IntEnum):
    UNKNOWN = 0
    TOPIC = 2
    BROKER = 4
    BROKER_LOGGER = 8
    CLIENT_METRICS = 16
    GROUP = 32


class ConfigSource(IntEnum):
    """Where a config's value comes from."""

    UNKNOWN = 0
    DYNAMIC_TOPIC_CONFIG = 1
    DYNAMIC_BROKER_CONFIG = 2
    DYNAMIC_DEFAULT_BROKER_CONFIG = 3
    STATIC_BROKER_CONFIG = 4
    DEFAULT_CONFIG = 5
    DYNAMIC_BROKER_LOGGER_CONFIG = 6
    CLIENT_METRICS_CONFIG = 7
    GROUP_CONFIG = 8


class ConfigType(IntEnum):
    UNKNOWN = 0
    BOOLEAN = 1
    STRING = 2
    INT = 3
    SHORT = 4
    LONG = 5
    DOUBLE = 6
    LIST = 7
    CLASS = 8
    PASSWORD = 9


class AlterConfigOpType(IntEnum):
    SET = 0
    DELETE = 1
    APPEND = 2
    SUBTRACT = 3


@dataclass(frozen=True, slots=True)
class ConfigResource:
    """Something with configs: `ConfigResource.topic("orders")`, `ConfigResource.broker(1)`."""

    type: ConfigResourceType
    name: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "type", ConfigResourceType(self.type))
        object.__setattr__(self, "name", str(self.name))

    @classmethod
    def topic(cls, name: str) -> ConfigResource:
        return cls(ConfigResourceType.TOPIC, name)

    @classmethod
    def broker(cls, node_id: int | str = "") -> ConfigResource:
        """Broker `node_id`'s configs; `""` is the cluster-wide broker defaults."""
        return cls(ConfigResourceType.BROKER, str(node_id))

    @classmethod
    def group(cls, group_id: str) -> ConfigResource:
        return cls(ConfigResourceType.GROUP, group_id)

    def __str__(self) -> str:
        return f"{self.type.name.lower()} {self.name!r}"

    @property
    def node_id(self) -> int | None:
        """The broker that must answer for this resource (None: any broker)."""
        per_broker = (ConfigResourceType.BROKER, ConfigResourceType.BROKER_LOGGER)
        if self.type in per_broker and self.name.strip():
            return int(self.name)
        return None


@dataclass(frozen=True, slots=True)
class ConfigSynonym:
    name: str
    value: str | None
    source: ConfigSource


@dataclass(frozen=True, slots=True)
class ConfigEntry:
    """One config of a resource. `value` is None for sensitive ones."""

    name: str
    value: str | None
    source: ConfigSource = ConfigSource.UNKNOWN
    is_read_only: bool = False
    is_sensitive: bool = False
    synonyms: tuple[ConfigSynonym, ...] = ()
    type: ConfigType = ConfigType.UNKNOWN
    documentation: str | None = None

    @property
    def is_default(self) -> bool:
        return self.source is ConfigSource.DEFAULT_CONFIG


@dataclass(frozen=True, slots=True)
class AlterConfigOp:
    """One incremental change: `AlterConfigOp.set("retention.ms", "60000")`, `.delete(name)`
    (back to the default), `.append` / `.subtract` (an item of a list config)."""

    name: str
    value: str | None = None
    op: AlterConfigOpType = AlterConfigOpType.SET

    def __post_init__(self) -> None:
        object.__setattr__(self, "op", AlterConfigOpType(self.op))
        if self.op is not AlterConfigOpType.DELETE and self.value is None:
            raise ValueError(f"config {self.name!r}: {self.op.name} needs a value")

    @classmethod
    def set(cls, name: str, value: str) -> AlterConfigOp:
        return cls(name, value, AlterConfigOpType.SET)

    @classmethod
    def delete(cls, name: str) -> AlterConfigOp:
        return cls(name, None, AlterConfigOpType.DELETE)

    @classmethod
    def append(cls, name: str, value: str) -> AlterConfigOp:
        return cls(name, value, AlterConfigOpType.APPEND)

    @classmethod
    def subtract(cls, name: str, value: str) -> AlterConfigOp:
        return cls(name, value, AlterConfigOpType.SUBTRACT)


def _enum_or_unknown(cls: type[IntEnum], value: int) -> Any:
    try:
        return cls(value)
    except ValueError:
        return cls(0)


def _entry(config: Any) -> ConfigEntry:
    source: ConfigSource
    if int(config.config_source) >= 0:
        source = _enum_or_unknown(ConfigSource, int(config.config_source))
    else:  # v0 has only is_default
        source = ConfigSource.DEFAULT_CONFIG if config.is_default else ConfigSource.UNKNOWN
    return ConfigEntry(
        name=str(config.name),
        value=config.value,
        source=source,
        is_read_only=bool(config.read_only),
        is_sensitive=bool(config.is_sensitive),
        synonyms=tuple(
            ConfigSynonym(str(s.name), s.value, _enum_or_unknown(ConfigSource, int(s.source)))
            for s in config.synonyms
        ),
        type=_enum_or_unknown(ConfigType, int(config.config_type)),
        documentation=config.documentation,
    )


def _resource(result: Any) -> ConfigResource:
    return ConfigResource(
        _enum_or_unknown(ConfigResourceType, int(result.resource_type)), str(result.resource_name)
    )


class DescribeConfigs(Handler[ConfigResource]):
    what = "describe configs"

    def __init__(
        self,
        names: Sequence[str] | None = None,
        include_synonyms: bool = False,
        include_documentation: bool = False,
    ) -> None:
        self.names = None if names is None else list(names)
        self.synonyms = include_synonyms
        self.documentation = include_documentation

    def describe(self, key: ConfigResource) -> str:
        return str(key)

    def requests(
        self, target: Target, keys: Sequence[ConfigResource]
    ) -> list[Call[ConfigResource]]:
        names, synonyms, documentation = self.names, self.synonyms, self.documentation
        resources = [
            DescribeConfigsResource(
                resource_type=int(k.type), resource_name=k.name, configuration_keys=names
            )
            for k in keys
        ]

        def build(version: int) -> DescribeConfigsRequest:
            return DescribeConfigsRequest(
                resources=resources,
                include_synonyms=synonyms and version >= _SYNONYMS_VERSION,
                include_documentation=documentation and version >= _DOCUMENTATION_VERSION,
            )

        return [Call(Versioned(ApiKey.DESCRIBE_CONFIGS, build), tuple(keys))]

    def on_response(
        self, call: Call[ConfigResource], target: Target, response: Any
    ) -> Mapping[ConfigResource, ItemResult]:
        assert isinstance(response, DescribeConfigsResponse)
        out: dict[ConfigResource, ItemResult] = {}
        for result in response.results:
            key = _resource(result)
            code = int(result.error_code)
            what = f"describe configs of {key}"
            outcome = for_code(code, what, result.error_message, moved=NOTHING_MOVES)
            out[key] = outcome or Done({str(c.name): _entry(c) for c in result.configs})
        return out


class AlterConfigs(Handler[ConfigResource]):
    what = "alter configs"

    def __init__(
        self, changes: Mapping[ConfigResource, Sequence[AlterConfigOp]], validate_only: bool
    ) -> None:
        self.changes = changes
        self.validate_only = validate_only

    def describe(self, key: ConfigResource) -> str:
        return str(key)

    def requests(
        self, target: Target, keys: Sequence[ConfigResource]
    ) -> list[Call[ConfigResource]]:
        resources = [
            AlterConfigsResource(
                resource_type=int(k.type),
                resource_name=k.name,
                configs=[
                    AlterableConfig(name=c.name, config_operation=int(c.op), value=c.value)
                    for c in self.changes[k]
                ],
            )
            for k in keys
        ]
        request = IncrementalAlterConfigsRequest(
            resources=resources, validate_only=self.validate_only
        )
        return [Call(request, tuple(keys))]

    def on_response(
        self, call: Call[ConfigResource], target: Target, response: Any
    ) -> Mapping[ConfigResource, ItemResult]:
        assert isinstance(response, IncrementalAlterConfigsResponse)
        out: dict[ConfigResource, ItemResult] = {}
        for result in response.responses:
            key = _resource(result)
            code = int(result.error_code)
            what = f"alter configs of {key}"
            outcome = for_code(code, what, result.error_message, moved=NOTHING_MOVES, retry=False)
            out[key] = outcome or Done(None)
        return out


__all__ = [
    "AlterConfigOp",
    "AlterConfigOpType",
    "AlterConfigs",
    "ConfigEntry",
    "ConfigResource",
    "ConfigResourceType",
    "ConfigSource",
    "ConfigSynonym",
    "ConfigType",
    "DescribeConfigs",
]
