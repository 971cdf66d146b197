"""Reader options of the `krafka-segments` data source, parsed once into a frozen value."""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone

from krafka.arrow import Window
from krafka.spark.segments import DEFAULT_MAX_PARTITION_BYTES

_SIZE_SUFFIXES = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}


class Format(str, enum.Enum):
    """How key and value columns are presented."""

    BINARY = "binary"  # the raw bytes
    STRING = "string"  # UTF-8 text; invalid sequences become U+FFFD
    JSON = "json"  # UTF-8 JSON text, null when the bytes are not valid JSON


class Mode(str, enum.Enum):
    """What corrupt bytes do: fail the job, or become rows with a `_corrupt` message."""

    FAILFAST = "failfast"
    PERMISSIVE = "permissive"


@dataclass(frozen=True, slots=True)
class ReadOptions:
    """Everything a reader needs, picklable for Spark's executors."""

    read_committed: bool = False
    include_control: bool = False
    key_format: Format = Format.BINARY
    value_format: Format = Format.BINARY
    mode: Mode = Mode.FAILFAST
    window: Window = field(default_factory=Window)
    max_partition_bytes: int = DEFAULT_MAX_PARTITION_BYTES
    check_crc: bool = True

    @classmethod
    def parse(cls, options: Mapping[str, str]) -> ReadOptions:
        """From Spark's case-insensitive string options."""
        o = {k.lower(): v for k, v in options.items()}
        return cls(
            read_committed=_isolation(o.get("isolation", "read_uncommitted")),
            include_control=_flag(o.get("includecontrol", "false")),
            key_format=Format(o.get("keyformat", "binary").lower()),
            value_format=Format(o.get("valueformat", "binary").lower()),
            mode=Mode(o.get("mode", "failfast").lower()),
            window=Window(
                _int(o.get("startingoffset")),
                _int(o.get("endingoffset")),
                _timestamp(o.get("startingtimestamp")),
                _timestamp(o.get("endingtimestamp")),
            ),
            max_partition_bytes=_size(o.get("maxpartitionbytes")),
            check_crc=_flag(o.get("checkcrc", "true")),
        )


def _isolation(value: str) -> bool:
    v = value.lower()
    if v not in ("read_committed", "read_uncommitted"):
        raise ValueError(f"isolation must be read_committed or read_uncommitted, not {value!r}")
    return v == "read_committed"


def _flag(value: str) -> bool:
    v = value.strip().lower()
    if v not in ("true", "false"):
        raise ValueError(f"expected true or false, not {value!r}")
    return v == "true"


def _int(value: str | None) -> int | None:
    return None if value is None or value == "" else int(value)


def _timestamp(value: str | None) -> int | None:
    """Milliseconds since the epoch, or an ISO-8601 time (UTC unless it names a zone)."""
    if value is None or value == "":
        return None
    if value.lstrip("-").isdigit():
        return int(value)
    moment = datetime.fromisoformat(value)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return int(moment.timestamp() * 1000)


def _size(value: str | None) -> int:
    if value is None or value == "":
        return DEFAULT_MAX_PARTITION_BYTES
    v = value.strip().lower().removesuffix("b")
    factor = _SIZE_SUFFIXES.get(v[-1:], 1)
    number = int(v[:-1] if v[-1:] in _SIZE_SUFFIXES else v)
    if number * factor <= 0:
        raise ValueError(f"maxPartitionBytes must be positive, not {value!r}")
    return number * factor
