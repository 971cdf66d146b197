"""decode_to_arrow against decode_batches: every golden file, both sinks (compiled and pure)."""

from __future__ import annotations

import json
import struct
from pathlib import Path
from typing import Any

import pytest

from krafka._codec import implementations
from krafka.arrow import (
    AbortIndex,
    Options,
    Window,
    decode_into,
    decode_to_arrow,
    iter_arrow_batches,
    kafka_rows,
    new_sink,
    scan_headers,
    wide_rows,
)
from krafka.codec import Record, decode_batches, encode_batch
from krafka.errors import CorruptRecordError

pa = pytest.importorskip("pyarrow")

SINKS = sorted(implementations())


def golden_files(testdata: Path) -> list[Path]:
    corpus = testdata / "corpus"
    real = testdata / "real-segments"
    files = [*corpus.glob("*.bin"), *corpus.glob("segments/*/*.log"), *real.glob("*.log")]
    return sorted([*files, *real.glob("kafka-go/*.msgset")])


def expected_rows(buf: bytes, include_control: bool) -> list[tuple[Any, ...]]:
    rows = []
    for b in decode_batches(buf):
        if b.is_control and not include_control:
            continue
        ts_type = (
            None
            if b.timestamp_type is None
            else ("CreateTime", "LogAppendTime")[int(b.timestamp_type)]
        )
        for r in b.records:
            rows.append(
                (r.offset, r.timestamp, ts_type, r.key, r.value,
                 [(k, v) for k, v in r.headers], b.producer_id, b.is_transactional, b.is_control)
            )  # fmt: skip
    return rows


def table_rows(table: Any) -> list[tuple[Any, ...]]:
    ts = table.column("timestamp").cast(pa.int64()).to_pylist()
    cols = {name: table.column(name).to_pylist() for name in table.column_names}
    controls = cols.get("is_control", [False] * table.num_rows)
    return [
        (cols["offset"][i], ts[i], cols["timestamp_type"][i], cols["key"][i], cols["value"][i],
         [(h["key"], h["value"]) for h in cols["headers"][i]], cols["producer_id"][i],
         cols["is_transactional"][i], controls[i])
        for i in range(table.num_rows)
    ]  # fmt: skip


@pytest.mark.parametrize("sink", SINKS)
@pytest.mark.parametrize("include_control", [False, True])
def test_every_golden_file_matches_decode_batches(
    testdata: Path, sink: str, include_control: bool
) -> None:
    files = golden_files(testdata)
    assert len(files) > 70
    for path in files:
        buf = path.read_bytes()
        table = decode_to_arrow(buf, include_control=include_control, implementation=sink)
        assert table_rows(table) == expected_rows(buf, include_control), path.name
        assert table.column("topic").null_count == table.num_rows


@pytest.mark.parametrize("sink", SINKS)
def test_topic_partition_and_schema(testdata: Path, sink: str) -> None:
    buf = (testdata / "corpus" / "rdk-zstd.fetch.bin").read_bytes()
    table = decode_to_arrow(buf, topic="orders", partition=7, timestamp_unit="us",
                            implementation=sink)  # fmt: skip
    assert set(table.column("topic").to_pylist()) == {"orders"}
    assert set(table.column("partition").to_pylist()) == {7}
    assert table.schema.field("timestamp").type == pa.timestamp("us", tz="UTC")
    assert "is_control" not in table.column_names
    ms = decode_to_arrow(buf, implementation=sink).column("timestamp").cast(pa.int64())
    us = table.column("timestamp").cast(pa.int64())
    assert [v * 1000 for v in ms.to_pylist()] == us.to_pylist()


def _txn_entry(testdata: Path) -> dict[str, Any]:
    manifest = json.loads((testdata / "corpus" / "manifest.json").read_text())
    entry: dict[str, Any] = next(
        e for e in manifest["entries"] if e["file"] == "rdk-txn-snappy.fetch.bin"
    )
    return entry


@pytest.mark.parametrize("sink", SINKS)
def test_read_committed_drops_exactly_the_aborted_transaction(testdata: Path, sink: str) -> None:
    entry = _txn_entry(testdata)
    assert "[40:60] aborted" in entry["producer"]["config"]["txn_plan"]
    data = [r["offset"] for r in entry["records"] if "control" not in r]
    controls = [r["control"]["type_name"] for r in entry["records"] if "control" in r]
    assert controls == ["COMMIT", "ABORT", "COMMIT"] and len(data) == 90
    buf = (testdata / "corpus" / entry["file"]).read_bytes()
    everything = decode_to_arrow(buf, implementation=sink)
    committed = decode_to_arrow(buf, read_committed=True, implementation=sink)
    assert everything.column("offset").to_pylist() == data
    assert committed.column("offset").to_pylist() == data[:40] + data[60:]


def test_open_transaction_counts_as_aborted() -> None:
    batch = encode_batch([Record(value=b"x", timestamp=1)], producer_id=9, producer_epoch=0,
                         base_sequence=0, transactional=True)  # fmt: skip
    index = AbortIndex.of(batch)
    assert index.ranges == {9: [(0, 2**63 - 1)]}
    assert decode_to_arrow(batch, read_committed=True).num_rows == 0
    assert decode_to_arrow(batch).num_rows == 1


def test_settle_aborts_an_open_transaction_only_if_the_broker_listed_it() -> None:
    def txn(base: int, pid: int, control: bool = False) -> bytes:
        key = struct.pack(">hh", 0, 0) if control else None  # an ABORT marker
        value = struct.pack(">hi", 0, 0) if control else b"x"
        return encode_batch([Record(value=value, key=key, timestamp=1)], "none", base, pid, 0,
                            -1 if control else base, True, control=control)  # fmt: skip

    log = txn(0, 7) + txn(1, 7, control=True) + txn(2, 7) + txn(3, 8)
    listed = [(7, 0)]  # 7's first transaction, closed by the marker seen: not the open one
    assert AbortIndex.of(log).ranges == {7: [(0, 1), (2, 2**63 - 1)], 8: [(3, 2**63 - 1)]}
    index = AbortIndex()
    for header in scan_headers(log):
        index.observe(log, header)
    assert index.settle(listed).ranges == {7: [(0, 1)]}
    index = AbortIndex()
    for header in scan_headers(log):
        index.observe(log, header)
    assert index.settle([*listed, (7, 2), (8, 3)]).ranges == {
        7: [(0, 1), (2, 2**63 - 1)], 8: [(3, 2**63 - 1)],
    }  # fmt: skip


@pytest.mark.parametrize("sink", SINKS)
def test_offset_and_timestamp_windows_are_exact(testdata: Path, sink: str) -> None:
    buf = (testdata / "corpus" / "rdk-lz4.fetch.bin").read_bytes()
    rows = expected_rows(buf, False)
    offsets = [r[0] for r in rows]
    lo, hi = offsets[len(offsets) // 4], offsets[3 * len(offsets) // 4]
    table = decode_to_arrow(buf, start_offset=lo, end_offset=hi, implementation=sink)
    assert table.column("offset").to_pylist() == [o for o in offsets if lo <= o < hi]
    stamps = sorted(r[1] for r in rows)
    t0, t1 = stamps[len(stamps) // 3], stamps[2 * len(stamps) // 3]
    table = decode_to_arrow(buf, start_timestamp=t0, end_timestamp=t1, implementation=sink)
    want = [r[0] for r in rows if t0 <= r[1] < t1]
    assert table.column("offset").to_pylist() == want and want


@pytest.mark.parametrize("sink", SINKS)
def test_small_chunks_give_the_same_rows(testdata: Path, sink: str) -> None:
    buf = (testdata / "real-segments" / "ldi_cluster_metadata-0.log").read_bytes()
    whole = decode_to_arrow(buf, implementation=sink)
    chunks = list(iter_arrow_batches(buf, max_rows=100, implementation=sink))
    assert len(chunks) > 5
    assert pa.Table.from_batches(chunks).drop_columns(["is_control"]).equals(whole)


@pytest.mark.parametrize("sink", SINKS)
def test_corrupt_batches_raise_or_are_skipped(testdata: Path, sink: str) -> None:
    buf = bytearray((testdata / "corpus" / "kp-v2-none.fetch.bin").read_bytes())
    clean = decode_to_arrow(bytes(buf), implementation=sink)
    buf[200] ^= 0xFF  # inside the first batch: CRC mismatch
    with pytest.raises(CorruptRecordError):
        decode_to_arrow(bytes(buf), implementation=sink)
    seen: list[tuple[int, int]] = []
    chunks = list(
        iter_arrow_batches(bytes(buf), implementation=sink,
                           on_corrupt=lambda exc, at, n: seen.append((at, n)))
    )  # fmt: skip
    assert seen and seen[0][0] == 0
    got = sum(c.num_rows for c in chunks)
    assert 0 < got < clean.num_rows


@pytest.mark.parametrize("sink", SINKS)
def test_corrupt_records_roll_back_the_batch(sink: str) -> None:
    good = encode_batch([Record(key=b"k", value=b"v" * 20, timestamp=5)] * 3)
    bad = bytearray(encode_batch([Record(key=b"k", value=b"v" * 20, timestamp=5)] * 3))
    third = 61 + 2 * (len(bad) - 61) // 3
    bad[third] = 0x7E  # the last record's length, after two good ones; no CRC check below
    skipped: list[int] = []
    chunks = list(
        iter_arrow_batches(good + bytes(bad) + good, check_crc=False, implementation=sink,
                           on_corrupt=lambda exc, at, n: skipped.append(at))
    )  # fmt: skip
    assert skipped == [len(good)]
    assert sum(c.num_rows for c in chunks) == 6


def test_window_prunes_whole_batches() -> None:
    batch = encode_batch([Record(value=b"x", timestamp=1)] * 3, base_offset=10)
    header = next(iter(__import__("krafka.codec").codec.scan_batches(batch)))
    assert Window(start_offset=13).skips(header)
    assert Window(end_offset=10).skips(header)
    assert not Window(start_offset=12, end_offset=11).skips(header)


@pytest.mark.parametrize("sink", SINKS)
def test_hostile_bytes_raise_corrupt_record_error_or_decode(testdata: Path, sink: str) -> None:
    """Byte flips and truncations never crash, hang or raise anything but CorruptRecordError."""
    import random

    rng = random.Random(6)
    sources = [testdata / "corpus" / n for n in ("kp-v2-none.fetch.bin", "rdk-zstd.fetch.bin",
                                                 "kp-m1-gzip.produce.1.bin")]  # fmt: skip
    for path in sources:
        clean = path.read_bytes()
        for _ in range(150):
            buf = bytearray(clean[: rng.randrange(len(clean) + 1)])
            for _ in range(rng.randrange(1, 4)):
                if buf:
                    buf[rng.randrange(len(buf))] = rng.randrange(256)
            try:
                pure = table_rows(decode_to_arrow(bytes(buf), implementation="pure"))
            except CorruptRecordError:
                pure = None
            try:
                got = table_rows(decode_to_arrow(bytes(buf), check_crc=False, implementation=sink))
            except CorruptRecordError:
                continue
            assert got is not None
            if pure is not None and sink != "pure":
                assert got == pure


@pytest.mark.parametrize("sink", SINKS)
def test_bytearray_and_memoryview_inputs(testdata: Path, sink: str) -> None:
    raw = (testdata / "corpus" / "aio-zstd-headers.fetch.bin").read_bytes()
    want = table_rows(decode_to_arrow(raw, implementation=sink))
    padded = memoryview(b"xx" + raw)[2:]
    for buf in (bytearray(raw), memoryview(raw), padded):
        assert table_rows(decode_to_arrow(buf, implementation=sink)) == want


def chunks(buf: bytes, sink: str, finish: Any, check_crc: bool = True) -> list[Any]:
    """`buf`'s rows in chunks of 50 as `finish` makes them, from one sink."""
    into = new_sink(sink, "t", 3, "us", Window())
    options = Options(include_control=False, check_crc=check_crc, implementation=sink)
    out = list(decode_into(into, buf, options, 50, finish))
    return [*out, finish(into)] if into.rows else out


@pytest.mark.parametrize("sink", SINKS)
@pytest.mark.parametrize("include_headers", [True, False])
def test_spark_rows_made_by_the_sink_are_kafka_rows_of_its_wide_rows(
    testdata: Path, sink: str, include_headers: bool
) -> None:
    for path in golden_files(testdata):
        buf = path.read_bytes()
        want = [kafka_rows(c, include_headers) for c in chunks(buf, sink, wide_rows)]
        got = chunks(buf, sink, lambda s: s.finish_kafka(include_headers))
        assert [c.schema for c in got] == [c.schema for c in want], path.name
        assert [c.to_pylist() for c in got] == [c.to_pylist() for c in want], path.name


def log_append_time(batch: bytes) -> bytes:
    """`batch` with its LogAppendTime attribute set (its CRC left stale)."""
    out = bytearray(batch)
    out[22] |= 0x08
    return bytes(out)


@pytest.mark.parametrize("include_headers", [True, False])
def test_spark_rows_mixing_headers_nulls_and_timestamp_types_match_between_sinks(
    include_headers: bool,
) -> None:
    """Rows with and without headers, null keys and values, CreateTime and LogAppendTime in
    one chunk."""
    with_headers = [
        Record(i, 1_700_000_000_000 + i, None if i % 3 == 0 else b"k%d" % i,
               None if i % 4 == 0 else b"v" * i, [("h", b"x"), ("n", None)] if i % 2 else [])
        for i in range(40)
    ]  # fmt: skip
    plain = [Record(i, 1_700_000_000_100 + i, b"p", b"q", []) for i in range(40)]
    buf = (
        encode_batch(with_headers, "none", 0, -1, -1, -1, False)
        + log_append_time(encode_batch(plain, "none", 40, -1, -1, -1, False))
        + encode_batch(with_headers, "none", 80, -1, -1, -1, False)
    )
    got = {
        sink: chunks(buf, sink, lambda s: s.finish_kafka(include_headers), check_crc=False)
        for sink in SINKS
    }
    rows = {sink: [r for c in cs for r in c.to_pylist()] for sink, cs in got.items()}
    assert len({json.dumps(r, default=repr) for r in rows.values()}) == 1
    sample = rows["pure"]
    assert [r["timestampType"] for r in sample[:80:40]] == [0, 1]
    if include_headers:
        assert sample[1]["headers"] == [{"key": "h", "value": b"x"}, {"key": "n", "value": None}]
        assert sample[0]["headers"] is None and sample[40]["headers"] is None
        assert sample[81]["headers"] == sample[1]["headers"]
