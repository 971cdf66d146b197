"""Legacy message sets (magic 0 and 1): decode only (pure-Python reference).

A message: offset int64 | size int32 | crc uint32 | magic int8 | attributes int8 |
[timestamp int64, magic 1] | key bytes (int32 length) | value bytes (int32 length). The CRC32
covers magic..end. A compressed message ("wrapper") carries a whole inner message set in its
value: magic-0 inner offsets are absolute; magic-1 inner offsets are relative to the wrapper,
whose offset is that of the last inner message (a producer-side wrapper carries offset 0 and
decodes to the relative offsets as they are).
"""

import struct
from collections.abc import Callable
from typing import Any

from krafka._codec import compression as _compression
from krafka._codec.crc import crc32
from krafka._codec.types import BatchHeader, Compression, Record, RecordBatch, TimestampType
from krafka.errors import CorruptRecordError

Buffer = bytes | bytearray | memoryview

PREFIX = struct.Struct(">qiIbb")  # offset, size, crc, magic, attributes
TIMESTAMP = struct.Struct(">q")
INT32 = struct.Struct(">i")
MIN_SIZE = {0: 14, 1: 22}  # crc + magic + attributes (+ timestamp) + two lengths


def read_header(buf: Buffer, pos: int) -> BatchHeader:
    offset, size, crc, magic, attributes = PREFIX.unpack_from(buf, pos)
    return BatchHeader(
        byte_offset=pos,
        byte_length=size + 12,
        base_offset=offset,
        magic=magic,
        crc=crc,
        attributes=attributes & 0xFF,
        last_offset_delta=None,
        first_timestamp=None,
        max_timestamp=None,
        producer_id=None,
        producer_epoch=None,
        base_sequence=None,
        record_count=None,
        partition_leader_epoch=None,
    )


def decode_entry(
    buf: Buffer,
    header: BatchHeader,
    check_crc: bool = True,
    max_decompressed_size: int = _compression.DEFAULT_MAX_DECOMPRESSED,
    record_type: Callable[..., Any] = Record,
    batch_type: Callable[..., Any] = RecordBatch,
) -> RecordBatch:
    """Decode one top-level legacy message (plain or compressed wrapper).

    `record_type`/`batch_type` let the compiled codec get its own types from this shared logic.
    """
    start = header.byte_offset
    view = memoryview(buf)[start : start + header.byte_length]
    msg = _parse_message(view, 0, check_crc, start)
    offset, magic, attributes, ts, key, value, crc = msg
    code = attributes & 0x07
    if code > 3:
        raise CorruptRecordError(f"invalid compression codec {code} for magic {magic}", start)
    codec = Compression.from_code(code)
    ts_type = None if magic == 0 else TimestampType((attributes >> 3) & 1)
    if codec is Compression.NONE:
        records = [record_type(offset, ts, key, value, [])]
    else:
        if value is None:
            raise CorruptRecordError("compressed message has a null value", start)
        inner = _compression.decompress(
            codec, value, max_decompressed_size, legacy_lz4=(magic == 0)
        )
        records = _inner_records(
            inner, offset, magic, attributes, ts, check_crc, start, record_type
        )
    batch: RecordBatch = batch_type(
        base_offset=offset,
        magic=magic,
        crc=crc,
        compression=codec,
        timestamp_type=ts_type,
        is_transactional=False,
        is_control=False,
        partition_leader_epoch=None,
        producer_id=None,
        producer_epoch=None,
        base_sequence=None,
        records=records,
        attributes=attributes,
        batch_length=header.byte_length - 12,
        wrapper_timestamp=ts,
    )
    return batch


Message = tuple[int, int, int, "int | None", "bytes | None", "bytes | None", int]


def _parse_message(view: memoryview, pos: int, check_crc: bool, where: int) -> Message:
    n = len(view)
    if n - pos < 17:
        raise CorruptRecordError("legacy message is truncated", where + pos)
    offset, size, crc, magic, attributes = PREFIX.unpack_from(view, pos)
    if magic not in (0, 1):
        raise CorruptRecordError(f"invalid magic {magic} in a legacy message set", where + pos)
    if size < MIN_SIZE[magic] or pos + 12 + size > n:
        raise CorruptRecordError(f"invalid legacy message size {size}", where + pos)
    end = pos + 12 + size
    if check_crc:
        actual = crc32(view[pos + 16 : end])
        if actual != crc:
            raise CorruptRecordError(
                f"message CRC mismatch: stored {crc:#010x}, computed {actual:#010x}", where + pos
            )
    p = pos + 18
    ts: int | None = None
    if magic == 1:
        (ts,) = TIMESTAMP.unpack_from(view, p)
        p += 8
    key, p = _read_bytes(view, p, end, "key", where)
    value, p = _read_bytes(view, p, end, "value", where)
    if p != end:
        raise CorruptRecordError(f"legacy message size {size} does not match its fields", where)
    return offset, magic, attributes & 0xFF, ts, key, value, crc


def _read_bytes(
    view: memoryview, pos: int, end: int, what: str, where: int
) -> tuple[bytes | None, int]:
    if pos + 4 > end:
        raise CorruptRecordError(f"legacy message {what} length is truncated", where)
    (length,) = INT32.unpack_from(view, pos)
    pos += 4
    if length == -1:
        return None, pos
    if length < 0 or pos + length > end:
        raise CorruptRecordError(f"invalid legacy message {what} length {length}", where)
    return bytes(view[pos : pos + length]), pos + length


def _inner_messages(inner: bytes, check_crc: bool, where: int) -> list[Message]:
    view = memoryview(inner)
    parsed: list[Message] = []
    pos = 0
    while pos < len(view):
        msg = _parse_message(view, pos, check_crc, where)
        if msg[2] & 0x07:
            raise CorruptRecordError("nested compression in a legacy message set", where)
        parsed.append(msg)
        pos += 12 + INT32.unpack_from(view, pos + 8)[0]
    if not parsed:
        raise CorruptRecordError("compressed legacy message holds no messages", where)
    return parsed


def message_crcs(
    buf: Buffer,
    pos: int,
    check_crc: bool = True,
    max_decompressed_size: int = _compression.DEFAULT_MAX_DECOMPRESSED,
) -> list[int]:
    """The stored CRC of each message of the legacy entry at byte `pos`, in record order: the
    entry's own when it is uncompressed, else those of the messages inside the wrapper."""
    view = memoryview(buf)[pos:]
    _, magic, attributes, _, _, value, crc = _parse_message(view, 0, check_crc, pos)
    code = attributes & 0x07
    if code == 0:
        return [crc]
    if code > 3 or value is None:
        raise CorruptRecordError(f"invalid compressed legacy message (codec {code})", pos)
    codec = Compression.from_code(code)
    inner = _compression.decompress(codec, value, max_decompressed_size, legacy_lz4=(magic == 0))
    return [msg[6] for msg in _inner_messages(inner, check_crc, pos)]


def _inner_records(
    inner: bytes,
    wrapper_offset: int,
    wrapper_magic: int,
    wrapper_attributes: int,
    wrapper_ts: int | None,
    check_crc: bool,
    where: int,
    record_type: Callable[..., Any],
) -> list[Any]:
    parsed = _inner_messages(inner, check_crc, where)
    shift = 0
    if wrapper_magic >= 1:
        base = wrapper_offset - parsed[-1][0]
        shift = base if base >= 0 else 0
    log_append = wrapper_magic >= 1 and bool(wrapper_attributes & 0x08)
    records = []
    for offset, _magic, _attrs, ts, key, value, _crc in parsed:
        stamp = None if wrapper_magic == 0 else (wrapper_ts if log_append else ts)
        records.append(record_type(offset + shift, stamp, key, value, []))
    return records
