"""Varints, CRCs and murmur2 against published vectors and independent implementations."""

from __future__ import annotations

import os
from types import ModuleType

import crc32c as crc32c_pkg
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from krafka._codec import varint
from krafka._codec.crc import crc32c, crc32c_reference

# Java's UtilsTest.testMurmur2
JAVA_MURMUR2 = {
    b"21": -973932308,
    b"foobar": -790332482,
    b"a-little-bit-long-string": -985981536,
    b"a-little-bit-longer-string": -1486304829,
    b"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8": -58897971,
    b"abc": 479470107,
}


def test_murmur2_matches_java(codec: ModuleType):
    for data, expected in JAVA_MURMUR2.items():
        assert codec.murmur2(data) == expected


def test_murmur2_matches_kafka_python(codec: ModuleType):
    from kafka.partitioner.default import murmur2 as kp_murmur2

    for n in range(200):
        data = os.urandom(n % 40)
        assert codec.murmur2(data) & 0xFFFFFFFF == kp_murmur2(data) & 0xFFFFFFFF


def test_murmur2_partition(codec: ModuleType):
    assert codec.murmur2_partition(b"21", 7) == (-973932308 & 0x7FFFFFFF) % 7
    with pytest.raises(ValueError):
        codec.murmur2_partition(b"k", 0)


def test_crc32c_vectors():
    assert crc32c(b"123456789") == 0xE3069283
    assert crc32c_reference(b"123456789") == 0xE3069283
    data = os.urandom(4096)
    assert crc32c(data) == crc32c_reference(data) == crc32c_pkg.crc32c(data)


@pytest.mark.parametrize(
    ("value", "encoded"),
    [(0, b"\x00"), (-1, b"\x01"), (1, b"\x02"), (63, b"\x7e"), (-64, b"\x7f"), (64, b"\x80\x01"),
     (2**31 - 1, b"\xfe\xff\xff\xff\x0f"), (-(2**31), b"\xff\xff\xff\xff\x0f")],
)  # fmt: skip
def test_varint_vectors(codec: ModuleType, value: int, encoded: bytes):
    assert codec.encode_varint(value) == encoded
    assert codec.decode_varint(encoded) == (value, len(encoded))


def test_unsigned_varint_and_compact_lengths(codec: ModuleType):
    assert codec.encode_unsigned_varint(300) == b"\xac\x02"
    assert codec.decode_unsigned_varint(b"\xac\x02") == (300, 2)
    assert varint.encode_compact_length(None) == b"\x00"
    assert varint.decode_compact_length(varint.encode_compact_length(5)) == (5, 1)
    with pytest.raises(ValueError):
        codec.encode_unsigned_varint(-1)
    with pytest.raises(ValueError):
        codec.encode_varint(2**31)


@settings(max_examples=100, deadline=None)
@given(st.integers(-(2**63), 2**63 - 1))
def test_varlong_round_trip(value: int):
    encoded = varint.encode_varlong(value)
    assert len(encoded) == varint.size_of_varlong(value)
    assert varint.decode_varlong(encoded) == (value, len(encoded))


def test_a_receive_buffer_is_a_bytearray_of_the_size_asked(codec: ModuleType) -> None:
    buffer = codec.receive_buffer(1 << 20)
    assert type(buffer) is bytearray and len(buffer) == 1 << 20
    buffer[:3] = b"abc"
    assert buffer[:3] == b"abc"
    assert codec.receive_buffer(0) == bytearray()
    with pytest.raises(ValueError, match="-1 bytes"):
        codec.receive_buffer(-1)
