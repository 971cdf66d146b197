"""Checksums: CRC32C (v2 record batches) and CRC32 (legacy messages).

CRC32C runs in the `crc32c` package (SSE4.2 / ARMv8 instructions, software fallback); CRC32 in
zlib. The bitwise table below is the readable reference, used only to cross-check in tests.
"""

from __future__ import annotations

import zlib

import crc32c as _crc32c

Buffer = bytes | bytearray | memoryview


def crc32c(data: Buffer, value: int = 0) -> int:
    """CRC32C (Castagnoli) of `data`, continuing from `value`."""
    return int(_crc32c.crc32c(data, value))


def crc32(data: Buffer, value: int = 0) -> int:
    """CRC32 (IEEE) as legacy Kafka messages use it, unsigned."""
    return zlib.crc32(data, value) & 0xFFFFFFFF


def _reference_table() -> list[int]:
    table = []
    for n in range(256):
        c = n
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


def crc32c_reference(data: Buffer) -> int:
    """Slow bytewise CRC32C, independent of the `crc32c` package (tests only)."""
    table = _reference_table()
    crc = 0xFFFFFFFF
    for b in bytes(data):
        crc = table[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF
