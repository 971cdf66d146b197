"""Golden data: every corpus file decodes exactly as its manifest says; real segments decode."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from krafka._codec.records import parse_control
from tests._codec.helpers import b64, load_manifest, record_tuple

HERE = Path(__file__).resolve()
SHARED = HERE.parents[3] / "shared" / "testdata"
ENTRIES = load_manifest(SHARED) if SHARED.is_dir() else []
SEGMENTS = (
    sorted(p for p in (SHARED / "real-segments").rglob("*") if p.suffix in (".log", ".msgset"))
    if SHARED.is_dir()
    else []
)
BATCH_FIELDS = (
    "base_offset", "magic", "crc", "attributes", "partition_leader_epoch", "producer_id",
    "producer_epoch", "base_sequence", "last_offset_delta", "first_timestamp", "max_timestamp",
    "is_transactional", "is_control", "wrapper_timestamp",
)  # fmt: skip


@pytest.mark.parametrize("entry", ENTRIES, ids=[e["file"] for e in ENTRIES])
def test_corpus_file_matches_manifest(codec: ModuleType, testdata: Path, entry: dict[str, Any]):
    data = (testdata / "corpus" / entry["file"]).read_bytes()
    batches = codec.decode_batches(data)
    assert len(batches) == entry["batch_count"]
    for batch, expected in zip(batches, entry["batches"], strict=True):
        for field in BATCH_FIELDS:
            assert getattr(batch, field) == expected.get(field), field
        assert batch.compression.value == expected["compression"]
        ts_type = None if batch.timestamp_type is None else int(batch.timestamp_type)
        assert ts_type == expected["timestamp_type"]
        assert batch.batch_length == expected["batch_length"]
        assert len(batch.records) == expected["decoded_record_count"]
    pairs = [(b, r) for b in batches for r in b.records]
    assert len(pairs) == entry["record_count"]
    for (batch, record), exp in zip(pairs, entry["records"], strict=True):
        headers = [(k, b64(v)) for k, v in exp["headers"]]
        assert record_tuple(record) == (
            exp["offset"],
            exp["timestamp"],
            b64(exp["key_b64"]),
            b64(exp["value_b64"]),
            headers,
        )
        assert batches.index(batch) == exp["batch_index"]
        if "control" in exp:
            control = parse_control(record)
            assert control.type.name == exp["control"]["type_name"]
            assert control.version == exp["control"]["key_version"]
            assert control.coordinator_epoch == exp["control"]["coordinator_epoch"]


@pytest.mark.parametrize("entry", ENTRIES, ids=[e["file"] for e in ENTRIES])
def test_scan_finds_the_same_batches(codec: ModuleType, testdata: Path, entry: dict[str, Any]):
    data = (testdata / "corpus" / entry["file"]).read_bytes()
    headers = list(codec.scan_batches(data))
    assert [(h.byte_offset, h.byte_length) for h in headers] == [
        (b["byte_offset"], b["byte_length"]) for b in entry["batches"]
    ]
    consumed = sum(h.byte_length for h in headers)
    assert len(data) - consumed == entry["partial_trailing_bytes"]


@pytest.mark.parametrize("path", SEGMENTS, ids=[p.name for p in SEGMENTS])
def test_real_segment_decodes_with_increasing_offsets(codec: ModuleType, path: Path):
    batches = codec.decode_batches(path.read_bytes())
    assert batches
    offsets = [r.offset for b in batches for r in b.records]
    assert offsets == sorted(set(offsets)), "offsets must strictly increase"
    for b in batches:
        within = [r.offset for r in b.records]
        assert within == list(range(within[0], within[0] + len(within))), "contiguous in a batch"
        if b.magic == 2 and not b.is_control:
            assert within[-1] == b.base_offset + b.last_offset_delta
    # a broker-written segment (not the KRaft metadata log) has no gaps at all
    if "cluster_metadata" not in path.name:
        assert offsets == list(range(offsets[0], offsets[0] + len(offsets)))


def test_truncated_tail_is_ignored(codec: ModuleType, testdata: Path):
    data = (testdata / "corpus" / "kp-v2-none.fetch.bin").read_bytes()
    whole = codec.decode_batches(data)
    for cut in (1, 11, 12, 17, 60, 61, 200):
        part = codec.decode_batches(data[: len(data) - cut])
        assert [len(b.records) for b in part] == [len(b.records) for b in whole[:-1]]
