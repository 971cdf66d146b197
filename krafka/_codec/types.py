"""Value types shared by both codec implementations.

`Record` here is the pure-Python record; the compiled codec has its own `Record` extension type
with the same fields and behaviour (it is what `krafka.codec.Record` names when the extensions
are loaded). `RecordBatch` and `BatchHeader` are shared: they are built once per batch, so a
dataclass costs nothing that matters.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

Header = tuple[str, "bytes | None"]


class Compression(str, enum.Enum):
    """Record batch compression codecs (attribute bits 0-2). Compares equal to its name."""

    NONE = "none"
    GZIP = "gzip"
    SNAPPY = "snappy"
    LZ4 = "lz4"
    ZSTD = "zstd"

    @property
    def code(self) -> int:
        return _COMPRESSION_CODES[self]

    @classmethod
    def from_code(cls, code: int) -> Compression:
        return _CODE_COMPRESSIONS[code]

    @classmethod
    def parse(cls, value: str | Compression | None) -> Compression:
        if value is None:
            return cls.NONE
        try:
            return cls(value.lower() if isinstance(value, str) else value)
        except ValueError:
            raise ValueError(f"unknown compression {value!r}") from None

    def __str__(self) -> str:
        return self.value


_COMPRESSION_CODES = {
    Compression.NONE: 0,
    Compression.GZIP: 1,
    Compression.SNAPPY: 2,
    Compression.LZ4: 3,
    Compression.ZSTD: 4,
}
_CODE_COMPRESSIONS = {v: k for k, v in _COMPRESSION_CODES.items()}


class TimestampType(enum.IntEnum):
    """Who stamped a record: the producer (CreateTime) or the broker (LogAppendTime)."""

    CREATE_TIME = 0
    LOG_APPEND_TIME = 1


class ControlType(enum.IntEnum):
    """Transaction marker kinds carried by control records."""

    ABORT = 0
    COMMIT = 1


@dataclass(frozen=True, slots=True)
class Record:
    """One Kafka record. Offsets are absolute; `timestamp` is None only for magic 0."""

    offset: int = 0
    timestamp: int | None = None
    key: bytes | None = None
    value: bytes | None = None
    headers: Sequence[Header] = ()


class RecordLike(Protocol):
    """What `encode_batch` reads from each record (duck-typed: either codec's Record works)."""

    @property
    def timestamp(self) -> int | None: ...
    @property
    def key(self) -> bytes | None: ...
    @property
    def value(self) -> bytes | None: ...
    @property
    def headers(self) -> Sequence[Header]: ...


RecordTuple = tuple["bytes | None", "bytes | None", "Sequence[Header] | None", "int | None"]
"""`(key, value, headers, timestamp)`: `encode_batch` writes it as `Record(0, timestamp, key,
value, headers)` (timestamp made an int, None headers meaning none) without building that Record."""


@dataclass(frozen=True, slots=True)
class BatchHeader:
    """A batch's header fields read without decompressing or checking it (for splitting).

    For legacy (magic 0/1) entries, `base_offset`/`last_offset` are the wrapper offset unless the
    entry is uncompressed; the v2-only fields are None.
    """

    byte_offset: int
    byte_length: int
    base_offset: int
    magic: int
    crc: int
    attributes: int
    last_offset_delta: int | None
    first_timestamp: int | None
    max_timestamp: int | None
    producer_id: int | None
    producer_epoch: int | None
    base_sequence: int | None
    record_count: int | None
    partition_leader_epoch: int | None

    @property
    def compression(self) -> Compression:
        return Compression.from_code(self.attributes & 0x07)

    @property
    def timestamp_type(self) -> TimestampType | None:
        if self.magic == 0:
            return None
        return TimestampType((self.attributes >> 3) & 1)

    @property
    def is_transactional(self) -> bool:
        return self.magic >= 2 and bool(self.attributes & 0x10)

    @property
    def is_control(self) -> bool:
        return self.magic >= 2 and bool(self.attributes & 0x20)

    @property
    def last_offset(self) -> int:
        """The last offset this entry covers (for legacy wrappers: the wrapper's offset)."""
        if self.last_offset_delta is None:
            return self.base_offset
        return self.base_offset + self.last_offset_delta


@dataclass(frozen=True, slots=True)
class RecordBatch:
    """A decoded batch: a v2 record batch, or one legacy message / compressed wrapper.

    The v2-only fields (`partition_leader_epoch`, `producer_id`, `producer_epoch`,
    `base_sequence`, `last_offset_delta`, `first_timestamp`, `max_timestamp`) are None for
    magic 0/1; `timestamp_type` is None for magic 0; `wrapper_timestamp` is the legacy
    message's own timestamp (magic 1 only).
    """

    base_offset: int
    magic: int
    crc: int
    compression: Compression
    timestamp_type: TimestampType | None
    is_transactional: bool
    is_control: bool
    partition_leader_epoch: int | None
    producer_id: int | None
    producer_epoch: int | None
    base_sequence: int | None
    records: list[Any] = field(default_factory=list)
    attributes: int = 0
    batch_length: int = 0
    last_offset_delta: int | None = None
    first_timestamp: int | None = None
    max_timestamp: int | None = None
    wrapper_timestamp: int | None = None

    @property
    def last_offset(self) -> int:
        if self.last_offset_delta is not None:
            return self.base_offset + self.last_offset_delta
        return self.records[-1].offset if self.records else self.base_offset

    @property
    def next_offset(self) -> int:
        return self.last_offset + 1


@dataclass(frozen=True, slots=True)
class ControlRecord:
    """A parsed transaction marker (the key and value of a control batch's record)."""

    version: int
    type: ControlType
    coordinator_epoch: int
