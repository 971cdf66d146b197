"""The public record codec: encode and decode Kafka record batches without any network.

    from krafka.codec import encode_batch, decode_batches, Record, RecordBatch, Compression

`decode_batches` reads a concatenation of batches as found in a Fetch response or a `.log`
segment: magic 2 record batches and legacy magic 0/1 message sets (including compressed wrapper
messages), every codec, in any mix. A truncated trailing batch is ignored; anything malformed
raises `krafka.errors.CorruptRecordError`. The compiled implementation is used when built
(`KRAFKA_NO_EXTENSIONS=1` forces the pure-Python one).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from krafka._codec import impl
from krafka._codec import legacy as _legacy
from krafka._codec.compression import DEFAULT_MAX_DECOMPRESSED
from krafka._codec.records import parse_control
from krafka._codec.types import BatchHeader as _PureBatchHeader
from krafka._codec.types import (
    Compression,
    ControlRecord,
    ControlType,
    RecordLike,
    RecordTuple,
    TimestampType,
)
from krafka._codec.types import RecordBatch as _PureRecordBatch
from krafka.arrow import decode_to_arrow

Buffer = bytes | bytearray | memoryview

Record: Any = impl.Record
RecordsBuilder: Any = impl.RecordsBuilder
RecordBatch: Any = impl.RecordBatch
BatchHeader: Any = impl.BatchHeader
IMPLEMENTATION: str = impl.name

__all__ = [
    "DEFAULT_MAX_DECOMPRESSED",
    "IMPLEMENTATION",
    "BatchHeader",
    "Compression",
    "ControlRecord",
    "ControlType",
    "Record",
    "RecordBatch",
    "RecordsBuilder",
    "TimestampType",
    "decode_batches",
    "decode_to_arrow",
    "encode_batch",
    "iter_batch_records",
    "iter_batches",
    "legacy_message_crcs",
    "murmur2",
    "murmur2_partition",
    "parse_control",
    "scan_batches",
]


def encode_batch(
    records: Iterable[RecordLike | RecordTuple],
    compression: str | Compression = "none",
    base_offset: int = 0,
    producer_id: int = -1,
    producer_epoch: int = -1,
    base_sequence: int = -1,
    transactional: bool = False,
    *,
    control: bool = False,
    timestamp_type: TimestampType = TimestampType.CREATE_TIME,
    partition_leader_epoch: int = -1,
    compression_level: int | None = None,
    now_ms: int | None = None,
) -> bytes:
    """Encode one magic-2 record batch with its CRC32C filled in.

    `records` are `Record`s (or objects with their fields) and/or `(key, value, headers,
    timestamp)` tuples, each written as `Record(0, timestamp, key, value, headers)` would be
    (headers and timestamp may be None) without building the Record. Records without a timestamp
    are stamped `now_ms` (the caller's wall clock: the codec reads no clock; None leaves them
    without one, Kafka's -1); offset deltas are the records' positions.
    """
    return bytes(
        impl.encode_batch(
            records,
            compression,
            base_offset,
            producer_id,
            producer_epoch,
            base_sequence,
            transactional,
            control,
            timestamp_type,
            partition_leader_epoch,
            compression_level,
            now_ms,
        )
    )


def decode_batches(
    buffer: Buffer,
    *,
    check_crc: bool = True,
    max_decompressed_size: int = DEFAULT_MAX_DECOMPRESSED,
) -> list[_PureRecordBatch]:
    """Decode every complete batch in `buffer` (see the module docstring)."""
    result: list[_PureRecordBatch] = impl.decode_batches(buffer, check_crc, max_decompressed_size)
    return result


def iter_batches(
    buffer: Buffer,
    *,
    check_crc: bool = True,
    max_decompressed_size: int = DEFAULT_MAX_DECOMPRESSED,
) -> Iterator[_PureRecordBatch]:
    """Like `decode_batches`, one batch at a time (bounded memory over large segments)."""
    result: Iterator[_PureRecordBatch] = impl.iter_batches(buffer, check_crc, max_decompressed_size)
    return result


def scan_batches(buffer: Buffer) -> Iterator[_PureBatchHeader]:
    """Batch headers only — no CRC check, no decompression: for splitting segments cheaply."""
    result: Iterator[_PureBatchHeader] = impl.scan_batches(buffer)
    return result


def iter_batch_records(
    buffer: Buffer,
    header: _PureBatchHeader,
    *,
    check_crc: bool = True,
    max_decompressed_size: int = DEFAULT_MAX_DECOMPRESSED,
) -> Iterator[Any]:
    """The records of the one batch `header` (from `scan_batches`) describes."""
    result: Iterator[Any] = impl.iter_batch_records(
        buffer, header, check_crc, max_decompressed_size
    )
    return result


def legacy_message_crcs(
    buffer: Buffer,
    position: int,
    *,
    check_crc: bool = True,
    max_decompressed_size: int = DEFAULT_MAX_DECOMPRESSED,
) -> list[int]:
    """The stored CRC of each record of the legacy (magic 0/1) entry at byte `position`, in
    record order: a compressed wrapper's inner messages have CRCs of their own (Kafka's
    DumpLogSegments prints them per record); an uncompressed entry's is the entry's."""
    return _legacy.message_crcs(buffer, position, check_crc, max_decompressed_size)


def murmur2(data: Buffer) -> int:
    """Kafka's Java-client murmur2 hash (signed 32-bit), as used by the default partitioner."""
    return int(impl.murmur2(data))


def murmur2_partition(key: Buffer, num_partitions: int) -> int:
    """The partition Java's default partitioner picks for a non-null `key`."""
    return int(impl.murmur2_partition(key, num_partitions))
