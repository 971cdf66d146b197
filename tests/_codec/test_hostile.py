"""Hostile input: only CorruptRecordError, bounded memory and time, never a crash or a hang."""

from __future__ import annotations

import contextlib
import struct
import time
import tracemalloc
from types import ModuleType

import pytest

from krafka._codec import compression
from krafka._codec.crc import crc32, crc32c
from krafka._codec.types import Compression
from krafka.codec import legacy_message_crcs
from krafka.errors import CorruptRecordError


def v2_batch(codec: ModuleType, n: int = 3, comp: str = "none") -> bytes:
    recs = [codec.Record(key=b"k", value=b"v" * 10, headers=[("h", b"x")], timestamp=5)]
    return bytes(codec.encode_batch(recs * n, comp, 0, -1, -1, -1, False))


def refix_crc(blob: bytearray) -> bytes:
    struct.pack_into(">I", blob, 17, crc32c(memoryview(blob)[21:]))
    return bytes(blob)


def test_every_truncation_is_ignored_or_rejected(codec: ModuleType):
    blob = v2_batch(codec, 5) * 2
    for cut in range(len(blob)):
        batches = codec.decode_batches(blob[:cut])
        assert len(batches) == (cut >= len(blob) // 2)


def test_every_single_bit_flip_is_rejected_or_harmless(codec: ModuleType):
    blob = v2_batch(codec, 3, "gzip")
    for i in range(len(blob)):
        for bit in (0, 3, 7):
            flipped = bytearray(blob)
            flipped[i] ^= 1 << bit
            with contextlib.suppress(CorruptRecordError):
                codec.decode_batches(bytes(flipped))


@pytest.mark.parametrize(
    ("where", "value", "fmt"),
    [
        (8, 0x7FFFFFF0, ">i"),  # batch length past the buffer: a truncated tail, ignored
        (8, 10, ">i"),  # batch length below the header size
        (8, -5, ">i"),
        (57, 0x7FFFFFFF, ">i"),  # record count
        (57, -1, ">i"),
        (16, 7, ">b"),  # magic
        (21, 7, ">h"),  # compression codec 7
    ],
)
def test_absurd_header_fields(codec: ModuleType, where: int, value: int, fmt: str):
    blob = bytearray(v2_batch(codec))
    struct.pack_into(fmt, blob, where, value)
    data = refix_crc(blob) if where >= 21 else bytes(blob)
    if where == 8 and value > 1000:
        assert codec.decode_batches(data) == []
        return
    with pytest.raises(CorruptRecordError):
        codec.decode_batches(data)


def test_huge_declared_record_lengths_do_not_allocate(codec: ModuleType):
    blob = bytearray(v2_batch(codec, 1))
    blob[61:66] = b"\xfe\xff\xff\xff\x0f"  # record length varint = 2**31 - 1
    tracemalloc.start()
    with pytest.raises(CorruptRecordError):
        codec.decode_batches(refix_crc(blob))
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 1 << 20


def test_overlong_varint_is_rejected(codec: ModuleType):
    with pytest.raises(CorruptRecordError):
        codec.decode_varint(b"\xff\xff\xff\xff\xff\x01")
    with pytest.raises(CorruptRecordError):
        codec.decode_varlong(b"\xff" * 11)
    with pytest.raises(CorruptRecordError):
        codec.decode_varint(b"\x80")


@pytest.mark.parametrize("comp", [c for c in Compression if c is not Compression.NONE])
def test_decompression_bomb_is_capped(codec: ModuleType, comp: Compression):
    recs = [codec.Record(value=b"\x00" * 1_000_000, timestamp=1)] * 8
    blob = bytes(codec.encode_batch(recs, comp, 0, -1, -1, -1, False))
    assert len(blob) < 500_000
    tracemalloc.start()
    start = time.monotonic()
    with pytest.raises(CorruptRecordError, match="cap"):
        codec.decode_batches(blob, True, 1_000_000)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 8_000_000
    assert time.monotonic() - start < 5
    assert len(codec.decode_batches(blob)[0].records) == 8  # default 128 MiB cap admits it


def legacy_message(offset: int, magic: int, attributes: int, value: bytes | None) -> bytes:
    body = struct.pack(">bb", magic, attributes)
    if magic == 1:
        body += struct.pack(">q", 1000)
    body += struct.pack(">i", -1)
    body += struct.pack(">i", -1) if value is None else struct.pack(">i", len(value)) + value
    return struct.pack(">qiI", offset, len(body) + 4, crc32(body)) + body


def test_nested_legacy_compression_is_rejected(codec: ModuleType):
    inner = legacy_message(0, 1, 0, b"x")
    level1 = legacy_message(0, 1, 1, _gzip(inner))
    level2 = legacy_message(0, 1, 1, _gzip(level1))
    assert len(codec.decode_batches(level1)[0].records) == 1
    with pytest.raises(CorruptRecordError, match="nested"):
        codec.decode_batches(level2)


def _gzip(data: bytes) -> bytes:
    return compression.compress(Compression.GZIP, data)


def test_legacy_bad_crc_and_bad_lengths(codec: ModuleType):
    msg = bytearray(legacy_message(3, 1, 0, b"value"))
    msg[-1] ^= 0xFF
    with pytest.raises(CorruptRecordError, match="CRC"):
        codec.decode_batches(bytes(msg))
    assert codec.decode_batches(bytes(msg), False)[0].records[0].value[:-1] == b"valu"
    bad_len = bytearray(legacy_message(3, 0, 0, b"value"))
    struct.pack_into(">i", bad_len, 22, 1 << 30)
    struct.pack_into(">I", bad_len, 12, crc32(bad_len[16:]))
    with pytest.raises(CorruptRecordError):
        codec.decode_batches(bytes(bad_len))


def test_wrapper_with_null_value_or_garbage_payload(codec: ModuleType):
    with pytest.raises(CorruptRecordError):
        codec.decode_batches(legacy_message(0, 1, 2, None))
    for attr in (1, 2, 3):
        with pytest.raises(CorruptRecordError):
            codec.decode_batches(legacy_message(0, 1, attr, b"\x00garbage-not-compressed"))


def test_invalid_utf8_header_key(codec: ModuleType):
    recs = [codec.Record(value=b"v", headers=[("ab", b"x")], timestamp=1)]
    blob = bytearray(codec.encode_batch(recs, "none", 0, -1, -1, -1, False))
    i = blob.rindex(b"ab")
    blob[i : i + 2] = b"\xff\xfe"
    with pytest.raises(CorruptRecordError, match="UTF-8"):
        codec.decode_batches(refix_crc(blob))


def test_legacy_message_crcs_are_the_stored_ones():
    first, second = legacy_message(0, 1, 0, b"a"), legacy_message(1, 1, 0, b"b")
    wrapper = legacy_message(1, 1, 1, _gzip(first + second))
    plain = legacy_message(2, 0, 0, b"c")
    stored = [struct.unpack_from(">I", m, 12)[0] for m in (first, second, plain)]
    assert legacy_message_crcs(wrapper + plain, 0) == stored[:2]
    assert legacy_message_crcs(wrapper + plain, len(wrapper)) == stored[2:]
    for bad in (wrapper[:20], legacy_message(0, 1, 1, b"garbage")):
        with pytest.raises(CorruptRecordError):
            legacy_message_crcs(bad, 0)
