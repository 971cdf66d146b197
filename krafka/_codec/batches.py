"""Walking a buffer of record batches: v2 batches and legacy messages, in any mix.

This is the entry point both for Fetch responses and for `.log` segments. A trailing entry that
is cut short is ignored (as Kafka clients do); anything malformed raises `CorruptRecordError`.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator

from krafka._codec import legacy, records
from krafka._codec.compression import DEFAULT_MAX_DECOMPRESSED
from krafka._codec.types import BatchHeader, Record, RecordBatch
from krafka.errors import CorruptRecordError

Buffer = bytes | bytearray | memoryview

LOG_OVERHEAD = 12  # offset int64 + length int32
_OFFSET_LENGTH = struct.Struct(">qi")
_MIN_LENGTH = {0: legacy.MIN_SIZE[0], 1: legacy.MIN_SIZE[1], 2: records.HEADER_SIZE - 12}


def scan_batches(buf: Buffer) -> Iterator[BatchHeader]:
    """Read only the header of every complete entry: no CRC check, no decompression."""
    n = len(buf)
    pos = 0
    while n - pos >= LOG_OVERHEAD + 5:
        _, length = _OFFSET_LENGTH.unpack_from(buf, pos)
        magic = buf[pos + 16]
        minimum = _MIN_LENGTH.get(magic)
        if minimum is None:
            raise CorruptRecordError(f"unknown magic byte {magic}", pos)
        if length < minimum:
            raise CorruptRecordError(f"invalid batch length {length} for magic {magic}", pos)
        if pos + LOG_OVERHEAD + length > n:
            return
        yield records.read_header(buf, pos) if magic == 2 else legacy.read_header(buf, pos)
        pos += LOG_OVERHEAD + length


def decode_entry(
    buf: Buffer,
    header: BatchHeader,
    check_crc: bool = True,
    max_decompressed_size: int = DEFAULT_MAX_DECOMPRESSED,
) -> RecordBatch:
    if header.magic == 2:
        return records.decode_batch(buf, header, check_crc, max_decompressed_size)
    return legacy.decode_entry(buf, header, check_crc, max_decompressed_size)


def iter_batches(
    buf: Buffer,
    check_crc: bool = True,
    max_decompressed_size: int = DEFAULT_MAX_DECOMPRESSED,
) -> Iterator[RecordBatch]:
    """Decode batch by batch, so only one batch's records are alive at a time."""
    for header in scan_batches(buf):
        yield decode_entry(buf, header, check_crc, max_decompressed_size)


def decode_batches(
    buf: Buffer,
    check_crc: bool = True,
    max_decompressed_size: int = DEFAULT_MAX_DECOMPRESSED,
) -> list[RecordBatch]:
    return list(iter_batches(buf, check_crc, max_decompressed_size))


def iter_batch_records(
    buf: Buffer,
    header: BatchHeader,
    check_crc: bool = True,
    max_decompressed_size: int = DEFAULT_MAX_DECOMPRESSED,
) -> Iterator[Record]:
    """The records of one entry, decoded one at a time where the format allows (v2)."""
    if header.magic == 2:
        return records.iter_records(buf, header, check_crc, max_decompressed_size)
    return iter(legacy.decode_entry(buf, header, check_crc, max_decompressed_size).records)
