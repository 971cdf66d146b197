"""Differential tests: compiled and pure-Python codecs agree on everything, errors included."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from krafka._codec import implementations
from krafka.errors import CorruptRecordError
from tests._codec.helpers import batch_tuple
from tests._codec.strategies import batch_options, record_fields

IMPLS = implementations()
pytestmark = pytest.mark.skipif("compiled" not in IMPLS, reason="extensions not built")
PURE, COMPILED = IMPLS["pure"], IMPLS.get("compiled")
CORPUS = Path(__file__).resolve().parents[3] / "shared" / "testdata" / "corpus"


def outcome(codec: Any, data: bytes) -> Any:
    try:
        return [batch_tuple(b) for b in codec.decode_batches(data)]
    except CorruptRecordError:
        return CorruptRecordError


@settings(max_examples=80, deadline=None)
@given(fields=st.lists(record_fields, min_size=1, max_size=15), opts=batch_options)
def test_same_bytes_and_same_decoding(fields: list[dict[str, Any]], opts: dict[str, Any]):
    args = (opts["compression"], opts["base_offset"], opts["producer_id"],
            opts["producer_epoch"], opts["base_sequence"], opts["transactional"])  # fmt: skip
    a = PURE.encode_batch([PURE.Record(**f) for f in fields], *args)
    b = COMPILED.encode_batch([COMPILED.Record(**f) for f in fields], *args)
    assert a == b
    assert outcome(PURE, a) == outcome(COMPILED, a)


def corpus_files() -> list[Path]:
    return sorted(CORPUS.glob("*.bin")) if CORPUS.is_dir() else []


@pytest.mark.parametrize("path", corpus_files(), ids=lambda p: p.name)
def test_mutated_corpus_same_outcome(path: Path):
    data = path.read_bytes()
    rng = random.Random(path.name)
    for _ in range(40):
        mutated = bytearray(data)
        for _ in range(rng.randint(1, 4)):
            i = rng.randrange(len(mutated))
            mutated[i] = rng.randrange(256)
        cut = rng.choice([len(mutated), rng.randrange(len(mutated) + 1)])
        blob = bytes(mutated[:cut])
        assert outcome(PURE, blob) == outcome(COMPILED, blob)
        no_crc = [PURE, COMPILED]
        results = []
        for codec in no_crc:
            try:
                results.append([batch_tuple(b) for b in codec.decode_batches(blob, False)])
            except CorruptRecordError:
                results.append(CorruptRecordError)
        assert results[0] == results[1]


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=400))
def test_random_bytes_same_outcome(data: bytes):
    assert outcome(PURE, data) == outcome(COMPILED, data)


@settings(max_examples=100, deadline=None)
@given(st.integers(min_value=-(2**31), max_value=2**31 - 1), st.integers(-(2**63), 2**63 - 1))
def test_varints_agree(v32: int, v64: int):
    for codec in (PURE, COMPILED):
        assert codec.decode_varint(codec.encode_varint(v32)) == (v32, len(PURE.encode_varint(v32)))
        assert codec.decode_varlong(codec.encode_varlong(v64))[0] == v64
    assert PURE.encode_varint(v32) == COMPILED.encode_varint(v32)
    assert PURE.encode_varlong(v64) == COMPILED.encode_varlong(v64)


@settings(max_examples=100, deadline=None)
@given(st.binary(max_size=64))
def test_murmur2_agrees(data: bytes):
    assert PURE.murmur2(data) == COMPILED.murmur2(data)


@settings(max_examples=60, deadline=None)
@given(fields=st.lists(record_fields, min_size=1, max_size=15), opts=batch_options)
def test_record_tuples_same_bytes(fields: list[dict[str, Any]], opts: dict[str, Any]):
    args = (opts["compression"], opts["base_offset"], opts["producer_id"],
            opts["producer_epoch"], opts["base_sequence"], opts["transactional"])  # fmt: skip
    tuples = [
        (f["key"], f["value"], tuple(f["headers"]) if i % 2 else f["headers"], f["timestamp"])
        for i, f in enumerate(fields)
    ]
    assert PURE.encode_batch(tuples, *args) == COMPILED.encode_batch(tuples, *args)


@settings(max_examples=60, deadline=None)
@given(fields=st.lists(record_fields, min_size=1, max_size=15), opts=batch_options)
def test_builders_write_the_same_bytes(fields: list[dict[str, Any]], opts: dict[str, Any]):
    out = []
    for codec in (PURE, COMPILED):
        builder = codec.RecordsBuilder(1_600_000_000_000)
        for f in fields:
            builder.append(f["timestamp"], f["key"], f["value"], f["headers"])
        out.append((builder.size, builder.build(opts["compression"], base_sequence=3)))
    assert out[0] == out[1]


def test_mutated_lz4_bodies_same_outcome():
    """The compiled twin decompresses lz4 batches its own way (cramjam, into pooled memory,
    bounded by the frame's block headers); it must take and refuse exactly what the pure one
    (the lz4 binding's streaming decompressor) does."""
    values = [b"value-%d " % i * (1 + i % 40) for i in range(400)]
    records = [PURE.Record(key=b"k%d" % i, value=v, timestamp=i) for i, v in enumerate(values)]
    blob = bytes(PURE.encode_batch(records, "lz4", 0, -1, -1, -1, False))
    rng = random.Random(4)
    for _ in range(300):
        mutated = bytearray(blob)
        for _ in range(rng.randint(1, 3)):
            mutated[rng.randrange(61, len(mutated))] = rng.randrange(256)  # body only
        cut = rng.choice([len(mutated)] * 3 + [rng.randrange(61, len(mutated))])
        data = bytes(mutated[:cut])
        results = []
        for codec in (PURE, COMPILED):
            try:
                results.append([batch_tuple(b) for b in codec.decode_batches(data, False)])
            except CorruptRecordError:
                results.append(CorruptRecordError)
        assert results[0] == results[1]
