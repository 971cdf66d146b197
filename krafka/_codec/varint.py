"""Variable-length integers as Kafka writes them (pure-Python reference).

Signed varints are zigzag-encoded protobuf base-128 varints: `varint` is 32-bit (at most 5
bytes), `varlong` 64-bit (at most 10). Unsigned varints carry compact lengths in flexible
protocol versions (length + 1, 0 meaning null). Decoders take `(buffer, pos)` and return
`(value, new_pos)`; anything over-long or truncated raises `CorruptRecordError`.
"""

from __future__ import annotations

import struct

from krafka.errors import CorruptRecordError

Buffer = bytes | bytearray | memoryview

INT8 = struct.Struct(">b")
INT16 = struct.Struct(">h")
INT32 = struct.Struct(">i")
INT64 = struct.Struct(">q")
UINT32 = struct.Struct(">I")

_MASK32 = 0xFFFFFFFF
_MASK64 = 0xFFFFFFFFFFFFFFFF


def _read_raw(buf: Buffer, pos: int, max_bytes: int, what: str) -> tuple[int, int]:
    result = 0
    shift = 0
    end = len(buf)
    for i in range(max_bytes):
        if pos >= end:
            raise CorruptRecordError(f"truncated {what}", pos - i)
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, pos
        shift += 7
    raise CorruptRecordError(f"{what} longer than {max_bytes} bytes", pos - max_bytes)


def decode_unsigned_varint(buf: Buffer, pos: int = 0) -> tuple[int, int]:
    """An unsigned 32-bit varint."""
    raw, pos = _read_raw(buf, pos, 5, "unsigned varint")
    return raw & _MASK32, pos


def decode_varint(buf: Buffer, pos: int = 0) -> tuple[int, int]:
    """A zigzag-encoded signed 32-bit varint."""
    raw, pos = _read_raw(buf, pos, 5, "varint")
    raw &= _MASK32
    return (raw >> 1) ^ -(raw & 1), pos


def decode_varlong(buf: Buffer, pos: int = 0) -> tuple[int, int]:
    """A zigzag-encoded signed 64-bit varint."""
    raw, pos = _read_raw(buf, pos, 10, "varlong")
    raw &= _MASK64
    return (raw >> 1) ^ -(raw & 1), pos


def encode_unsigned_varint(value: int) -> bytes:
    if not 0 <= value <= _MASK32:
        raise ValueError(f"unsigned varint out of range: {value}")
    return _encode_raw(value)


def encode_varint(value: int) -> bytes:
    if not -(2**31) <= value < 2**31:
        raise ValueError(f"varint out of range: {value}")
    return _encode_raw(((value << 1) ^ (value >> 31)) & _MASK32)


def encode_varlong(value: int) -> bytes:
    if not -(2**63) <= value < 2**63:
        raise ValueError(f"varlong out of range: {value}")
    return _encode_raw(((value << 1) ^ (value >> 63)) & _MASK64)


def _encode_raw(raw: int) -> bytes:
    out = bytearray()
    while raw > 0x7F:
        out.append((raw & 0x7F) | 0x80)
        raw >>= 7
    out.append(raw)
    return bytes(out)


def size_of_varint(value: int) -> int:
    """Encoded size of a signed 32-bit varint."""
    raw = ((value << 1) ^ (value >> 31)) & _MASK32
    return _size_raw(raw)


def size_of_varlong(value: int) -> int:
    raw = ((value << 1) ^ (value >> 63)) & _MASK64
    return _size_raw(raw)


def _size_raw(raw: int) -> int:
    size = 1
    while raw > 0x7F:
        raw >>= 7
        size += 1
    return size


def encode_compact_length(length: int | None) -> bytes:
    """Compact (flexible-version) length: N + 1, or 0 for null."""
    return encode_unsigned_varint(0 if length is None else length + 1)


def decode_compact_length(buf: Buffer, pos: int = 0) -> tuple[int | None, int]:
    raw, pos = decode_unsigned_varint(buf, pos)
    return (None if raw == 0 else raw - 1), pos
