"""Segment discovery and split planning (no Spark needed)."""

from __future__ import annotations

import itertools
import struct
from pathlib import Path

from krafka.codec import Record, encode_batch, scan_batches
from krafka.spark.segments import (
    Segment,
    abort_index,
    find_segments,
    plan_splits,
    prune,
    read_range,
    topic_partition,
)


def _segment_file(path: Path, batches: int = 50, base: int = 0) -> bytes:
    blob = b"".join(
        encode_batch([Record(value=bytes(200), timestamp=i)] * 5, base_offset=base + 5 * i)
        for i in range(batches)
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(blob)
    return blob


def test_topic_and_partition_come_from_the_folder_split_on_the_last_dash(tmp_path: Path) -> None:
    assert topic_partition(str(tmp_path / "my-topic-with-dashes-12" / "0.log")) == (
        "my-topic-with-dashes", 12)  # fmt: skip
    assert topic_partition(str(tmp_path / "loose" / "dump.log")) == ("dump", None)


def test_find_segments_in_dirs_files_and_globs(tmp_path: Path) -> None:
    _segment_file(tmp_path / "a-b-0" / "00000000000000000000.log")
    _segment_file(tmp_path / "a-b-0" / "00000000000000000250.log", base=250)
    _segment_file(tmp_path / "c-1" / "00000000000000000000.log")
    every = find_segments(str(tmp_path))
    assert [(s.topic, s.partition, s.base_offset) for s in every] == [
        ("a-b", 0, 0), ("a-b", 0, 250), ("c", 1, 0)]  # fmt: skip
    assert len(find_segments(str(tmp_path / "a-b-0"))) == 2
    assert len(find_segments(str(tmp_path / "*" / "00000000000000000000.log"))) == 2
    assert prune(every[:2], 300, None) == [every[1]]
    assert prune(every[:2], None, 250) == [every[0]]


def test_splits_cover_the_file_at_batch_boundaries(tmp_path: Path) -> None:
    path = tmp_path / "t-0" / "00000000000000000000.log"
    blob = _segment_file(path)
    starts = {h.byte_offset for h in scan_batches(blob)}
    segment = find_segments(str(path))[0]
    splits = plan_splits(segment, 4096)
    assert len(splits) > 3
    assert splits[0].start == 0 and splits[-1].end == len(blob)
    assert all(a.end == b.start for a, b in itertools.pairwise(splits))
    assert all(s.start in starts for s in splits)
    assert b"".join(read_range(s) for s in splits) == blob


def test_offset_index_positions_are_used_when_plausible(tmp_path: Path) -> None:
    path = tmp_path / "t-0" / "00000000000000000000.log"
    blob = _segment_file(path)
    headers = list(scan_batches(blob))
    chosen = headers[10::10]
    entries = b"".join(struct.pack(">ii", h.base_offset, h.byte_offset) for h in chosen)
    path.with_suffix(".index").write_bytes(entries + bytes(64))  # preallocated zero tail
    segment = find_segments(str(path))[0]
    cuts = [s.start for s in plan_splits(segment, 1)][1:]
    assert cuts == [h.byte_offset for h in chosen]
    path.with_suffix(".index").write_bytes(struct.pack(">ii", 1, 7))  # not a batch start
    cuts = [s.start for s in plan_splits(segment, 1)][1:]
    assert cuts == [h.byte_offset for h in headers[1:]]


def test_abort_index_spans_segments(tmp_path: Path) -> None:
    folder = tmp_path / "t-0"
    folder.mkdir()
    txn = {"producer_id": 4, "producer_epoch": 0, "base_sequence": 0, "transactional": True}
    data = encode_batch([Record(value=b"x", timestamp=1)], base_offset=0, **txn)
    marker = encode_batch([Record(key=b"\x00\x00\x00\x00", value=bytes(6), timestamp=1)],
                          base_offset=1, control=True, **txn)  # fmt: skip
    (folder / "00000000000000000000.log").write_bytes(data)
    (folder / "00000000000000000001.log").write_bytes(marker)
    segments = find_segments(str(folder))
    assert abort_index(segments).ranges == {4: [(0, 1)]}
    assert isinstance(segments[0], Segment)


def test_folders_kafka_set_aside_are_skipped_unless_named(tmp_path: Path) -> None:
    _segment_file(tmp_path / "t-0" / "00000000000000000000.log")
    for suffix in ("delete", "future", "stray"):
        aside = tmp_path / f"t-0.0123456789abcdef0123456789abcdef-{suffix}"
        _segment_file(aside / "00000000000000000000.log")
        assert topic_partition(str(aside / "00000000000000000000.log")) == ("t", 0)
        assert [s.partition for s in find_segments(str(aside))] == [0]
    assert [s.path for s in find_segments(str(tmp_path))] == [
        str(tmp_path / "t-0" / "00000000000000000000.log")]  # fmt: skip
    assert len(find_segments(str(tmp_path / "*"))) == 1
    assert len(find_segments(str(tmp_path / "*" / "*.log"))) == 1
