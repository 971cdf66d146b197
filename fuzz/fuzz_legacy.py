"""atheris harness: legacy magic 0/1 message sets built around fuzzed payloads.

Wraps the fuzzed bytes as the value of a (possibly compressed) wrapper message with a valid CRC,
so the fuzzer reaches the decompression and inner-set parsing instead of stopping at the CRC.
"""

from __future__ import annotations

import struct
import sys
import zlib
from pathlib import Path

import atheris

with atheris.instrument_imports():
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from harness import batches_outcome


def wrap(magic: int, attributes: int, value: bytes) -> bytes:
    body = struct.pack(">bb", magic, attributes)
    if magic == 1:
        body += struct.pack(">q", 1)
    body += struct.pack(">i", -1) + struct.pack(">i", len(value)) + value
    return struct.pack(">qiI", 7, len(body) + 4, zlib.crc32(body) & 0xFFFFFFFF) + body


def test_one_input(data: bytes) -> None:
    if len(data) < 2:
        return
    magic, codec = data[0] & 1, data[1] % 4
    batches_outcome(wrap(magic, codec, data[2:]))


if __name__ == "__main__":
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()
