"""Options of the `krafka` data source, spelled as Spark's own Kafka source spells them.

Parsed once on the driver into frozen, picklable values; every mistake is a `ConfigError` that
names the option. `kafka.*` options are client properties in Java spelling (`kafka.` removed),
checked against krafka's consumer or producer property table.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from krafka.config import keywords_from_config
from krafka.errors import ConfigError
from krafka.structs import TopicPartition

#: Offsets as Spark's Kafka source writes them in JSON: -2 earliest, -1 latest.
EARLIEST, LATEST = -2, -1

_SOURCE_OPTIONS = frozenset(
    {
        "subscribe", "subscribepattern", "assign", "startingoffsets", "endingoffsets",
        "startingtimestamp", "endingtimestamp", "startingoffsetsbytimestamp",
        "endingoffsetsbytimestamp", "startingoffsetsbytimestampstrategy",
        "maxoffsetspertrigger", "minoffsetspertrigger", "maxtriggerdelay", "minpartitions",
        "includeheaders", "failondataloss", "kafkaconsumer.polltimeoutms",
        "fetchoffset.numretries", "fetchoffset.retryintervalms", "groupidprefix",
        "commitoffsetstogroup",
    }
)  # fmt: skip
_SINK_OPTIONS = frozenset({"topic", "includeheaders", "checkpointlocation"})
#: Client properties the source sets itself (as Spark's Kafka source refuses them).
_FORBIDDEN = frozenset(
    {
        "auto.offset.reset", "enable.auto.commit", "key.deserializer", "value.deserializer",
        "key.serializer", "value.serializer", "interceptor.classes",
    }
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class Topics:
    """Which partitions: named topics, a pattern over topic names, or fixed partitions."""

    names: tuple[str, ...] = ()
    pattern: str | None = None
    partitions: tuple[TopicPartition, ...] = ()

    def matches(self, topic: str) -> bool:
        if self.pattern is not None:
            return re.fullmatch(self.pattern, topic) is not None
        if self.partitions:
            return any(tp.topic == topic for tp in self.partitions)
        return topic in self.names


@dataclass(frozen=True, slots=True)
class Bound:
    """A starting or ending position: earliest/latest, per-partition offsets (JSON, -2/-1
    allowed), a global timestamp, or per-partition timestamps (ms)."""

    default: int = LATEST
    offsets: Mapping[TopicPartition, int] = field(default_factory=dict)
    timestamp: int | None = None
    timestamps: Mapping[TopicPartition, int] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class SourceOptions:
    """Everything the reader needs, picklable for Spark's executors."""

    client: Mapping[str, str]
    topics: Topics
    starting: Bound
    ending: Bound
    read_committed: bool = False
    include_headers: bool = False
    fail_on_data_loss: bool = True
    max_offsets_per_trigger: int | None = None
    min_partitions: int | None = None
    poll_timeout: float = 120.0
    #: `commitOffsetsToGroup`: the consumer group each finished micro-batch's end offsets are
    #: committed to (streaming only), for lag monitoring.
    commit_group: str | None = None

    @classmethod
    def parse(cls, options: Mapping[str, str], *, streaming: bool) -> SourceOptions:
        o = {k.lower(): v for k, v in options.items()}
        client = client_options(options, "consumer")
        unknown = sorted(k for k in o if not k.startswith("kafka.") and k not in _SOURCE_OPTIONS)
        if unknown:
            raise ConfigError(f"krafka source: unknown option {unknown[0]!r}")
        isolation = client.get("isolation.level", "read_uncommitted").lower()
        if isolation not in ("read_committed", "read_uncommitted"):
            raise ConfigError(f"option kafka.isolation.level: {isolation!r} is not valid")
        ending = _bound(o, "ending", LATEST)
        if streaming and any(k.startswith("ending") for k in o):
            raise ConfigError("option endingOffsets: not allowed in a streaming query")
        if ending.default == EARLIEST or EARLIEST in ending.offsets.values():
            raise ConfigError("option endingOffsets: 'earliest' is not a valid ending offset")
        starting = _bound(o, "starting", LATEST if streaming else EARLIEST)
        if LATEST in starting.offsets.values() and not streaming:
            raise ConfigError("option startingOffsets: -1 (latest) is not allowed in a batch query")
        commit_group = o.get("commitoffsetstogroup")
        if commit_group is not None and not streaming:
            raise ConfigError("option commitOffsetsToGroup: only for streaming queries")
        if commit_group is not None and not commit_group.strip():
            raise ConfigError("option commitOffsetsToGroup: needs a group id")
        return cls(
            client=client,
            topics=_topics(o),
            starting=starting,
            ending=ending,
            read_committed=isolation == "read_committed",
            include_headers=_flag(o, "includeheaders", False),
            fail_on_data_loss=_flag(o, "failondataloss", True),
            max_offsets_per_trigger=_positive(o, "maxoffsetspertrigger"),
            min_partitions=_positive(o, "minpartitions"),
            poll_timeout=(_positive(o, "kafkaconsumer.polltimeoutms") or 120_000) / 1000,
            commit_group=commit_group,
        )


@dataclass(frozen=True, slots=True)
class SinkOptions:
    client: Mapping[str, str]
    topic: str | None = None

    @classmethod
    def parse(cls, options: Mapping[str, str]) -> SinkOptions:
        o = {k.lower(): v for k, v in options.items()}
        unknown = sorted(k for k in o if not k.startswith("kafka.") and k not in _SINK_OPTIONS)
        if unknown:
            raise ConfigError(f"krafka sink: unknown option {unknown[0]!r}")
        return cls(client_options(options, "producer"), o.get("topic") or None)


def client_options(options: Mapping[str, str], kind: str) -> dict[str, str]:
    client = {k[len("kafka.") :]: v for k, v in options.items() if k.lower().startswith("kafka.")}
    if not client.get("bootstrap.servers"):
        raise ConfigError("option kafka.bootstrap.servers is required")
    for prop in client:
        if prop in _FORBIDDEN:
            raise ConfigError(f"option kafka.{prop}: set by the krafka data source itself")
    checked = {k: v for k, v in client.items() if k != "isolation.level"}
    try:
        keywords_from_config(checked, kind)
    except ConfigError as exc:
        raise ConfigError(f"option kafka.*: {exc}") from None
    return client


def _topics(o: Mapping[str, str]) -> Topics:
    given = [k for k in ("subscribe", "subscribepattern", "assign") if o.get(k)]
    if len(given) != 1:
        raise ConfigError(
            "exactly one of the options subscribe, subscribePattern or assign is required"
        )
    kind, value = given[0], o[given[0]]
    if kind == "subscribe":
        return Topics(names=tuple(t.strip() for t in value.split(",") if t.strip()))
    if kind == "subscribepattern":
        try:
            re.compile(value)
        except re.error as exc:
            raise ConfigError(f"option subscribePattern: {exc}") from None
        return Topics(pattern=value)
    spec = _json(value, "assign")
    try:
        parts = tuple(TopicPartition(str(t), int(p)) for t, ps in spec.items() for p in ps)
    except (AttributeError, TypeError, ValueError):
        raise ConfigError(
            'option assign: expected JSON like {"topicA": [0, 1], "topicB": [2]}'
        ) from None
    return Topics(partitions=parts)


def _bound(o: Mapping[str, str], side: str, default: int) -> Bound:
    """`<side>Offsets`, `<side>Timestamp`, `<side>OffsetsByTimestamp` (one at most)."""
    offsets_key, ts_key = f"{side}offsets", f"{side}timestamp"
    by_ts_key = f"{side}offsetsbytimestamp"
    present = [k for k in (offsets_key, ts_key, by_ts_key) if k in o]
    if len(present) > 1:
        raise ConfigError(f"options {present[0]} and {present[1]} cannot be used together")
    name = side + "Offsets"
    if ts_key in o:
        return Bound(default, timestamp=_int(o[ts_key], side + "Timestamp"))
    if by_ts_key in o:
        return Bound(default, timestamps=_partition_map(o[by_ts_key], name + "ByTimestamp"))
    raw = o.get(offsets_key)
    if raw is None:
        return Bound(default)
    if raw.strip().lower() in ("earliest", "latest"):
        return Bound(EARLIEST if raw.strip().lower() == "earliest" else LATEST)
    offsets = _partition_map(raw, name)
    if any(v < LATEST - 1 for v in offsets.values()):
        raise ConfigError(f"option {name}: offsets must be >= 0, -1 (latest) or -2 (earliest)")
    return Bound(default, offsets=offsets)


def _partition_map(raw: str, name: str) -> dict[TopicPartition, int]:
    spec = _json(raw, name)
    try:
        return {
            TopicPartition(str(t), int(p)): int(v)
            for t, parts in spec.items()
            for p, v in parts.items()
        }
    except (AttributeError, TypeError, ValueError):
        raise ConfigError(
            f'option {name}: expected "earliest", "latest" or JSON like {{"topicA": {{"0": 23}}}}'
        ) from None


def _json(raw: str, name: str) -> Any:
    try:
        value = json.loads(raw)
    except ValueError as exc:
        raise ConfigError(f"option {name}: malformed JSON ({exc})") from None
    if not isinstance(value, dict):
        raise ConfigError(f"option {name}: expected a JSON object")
    return value


def _flag(o: Mapping[str, str], key: str, default: bool) -> bool:
    value = o.get(key)
    if value is None:
        return default
    if value.strip().lower() not in ("true", "false"):
        raise ConfigError(f"option {key}: expected true or false, not {value!r}")
    return value.strip().lower() == "true"


def _int(value: str, name: str) -> int:
    try:
        return int(value)
    except ValueError:
        raise ConfigError(f"option {name}: expected an integer, not {value!r}") from None


def _positive(o: Mapping[str, str], key: str) -> int | None:
    value = o.get(key)
    if value is None:
        return None
    number = _int(value, key)
    if number <= 0:
        raise ConfigError(f"option {key}: must be positive, not {number}")
    return number


__all__ = [
    "EARLIEST", "LATEST", "Bound", "SinkOptions", "SourceOptions", "Topics", "client_options",
]  # fmt: skip
