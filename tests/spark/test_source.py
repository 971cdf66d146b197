"""The krafka-segments data source against the codec, on every golden segment."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from krafka.codec import decode_batches

from .rows import codec_rows, ordered, spark_rows

pytestmark = pytest.mark.spark

SEGMENT = "00000000000000000000.log"


def _log_dir(testdata: Path, root: Path) -> dict[tuple[str, int], Path]:
    """A Kafka-like log dir: every golden segment as `<topic>-<partition>/000...0.log`."""
    real = testdata / "real-segments"
    sources = sorted([*real.glob("*.log"), *real.glob("kafka-go/*.msgset")])
    layout: dict[tuple[str, int], Path] = {}
    for i, src in enumerate(sources):
        topic = "seg-" + src.stem.replace("_", "-").replace(".", "-").lower()
        layout[(topic, i)] = src
    for folder in (testdata / "corpus" / "segments").iterdir():
        topic, _, partition = folder.name.rpartition("-")
        layout[(topic, int(partition))] = folder / SEGMENT
    for (topic, partition), src in layout.items():
        target = root / f"{topic}-{partition}"
        target.mkdir(parents=True)
        (target / SEGMENT).symlink_to(src)
    return layout


@pytest.fixture(scope="module")
def log_dir(testdata: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any]:
    root = tmp_path_factory.mktemp("kafka-logs")
    return root, _log_dir(testdata, root)


def test_every_segment_reads_as_the_codec_decodes_it(spark: Any, log_dir: Any) -> None:
    root, layout = log_dir
    expected = []
    for (topic, partition), src in layout.items():
        expected += codec_rows(src.read_bytes(), topic, partition)
    df = spark.read.format("krafka-segments").load(str(root))
    assert ordered(spark_rows(df)) == ordered(expected)
    assert len(expected) > 5000


def test_small_max_partition_bytes_splits_at_batch_boundaries(spark: Any, log_dir: Any) -> None:
    root, layout = log_dir
    big = next(k for k, v in layout.items() if v.name == "ldi_cluster_metadata-0.log")
    path = str(root / f"{big[0]}-{big[1]}")
    whole = spark.read.format("krafka-segments").load(path)
    split = spark.read.format("krafka-segments").option("maxPartitionBytes", "16k").load(path)
    assert split.rdd.getNumPartitions() > 10
    assert spark_rows(split) == spark_rows(whole)


def test_read_committed_drops_exactly_the_aborted_records(
    spark: Any, testdata: Path, tmp_path: Path
) -> None:
    name = "rdk-txn-snappy.fetch.bin"
    entry = next(
        e
        for e in json.loads((testdata / "corpus" / "manifest.json").read_text())["entries"]
        if e["file"] == name
    )
    data = [r["offset"] for r in entry["records"] if "control" not in r]
    aborted = set(data[40:60])  # txn_plan: records[40:60] aborted
    (tmp_path / "txn-topic-0").mkdir()
    shutil.copy(testdata / "corpus" / name, tmp_path / "txn-topic-0" / SEGMENT)
    buf = (testdata / "corpus" / name).read_bytes()
    reader = spark.read.format("krafka-segments")
    got = spark_rows(reader.option("isolation", "read_committed").load(str(tmp_path)))
    assert got == codec_rows(buf, "txn-topic", 0, skip_offsets=aborted)
    everything = spark_rows(spark.read.format("krafka-segments").load(str(tmp_path)))
    assert len(everything) == 90 and len(got) == 70


def test_offset_and_timestamp_filters_are_exact(spark: Any, testdata: Path) -> None:
    folder = testdata / "corpus" / "segments" / "seg-v2-mixed-0"
    rows = codec_rows((folder / SEGMENT).read_bytes(), "seg-v2-mixed", 0)
    offsets = [r[2] for r in rows]
    lo, hi = offsets[len(rows) // 5], offsets[4 * len(rows) // 5]
    df = (spark.read.format("krafka-segments").option("startingOffset", lo)
          .option("endingOffset", hi).load(str(folder)))  # fmt: skip
    assert spark_rows(df) == [r for r in rows if lo <= r[2] < hi]
    stamps = sorted(r[3] // 1000 for r in rows)
    t0, t1 = stamps[len(stamps) // 3], stamps[2 * len(stamps) // 3]
    df = (spark.read.format("krafka-segments").option("startingTimestamp", t0)
          .option("endingTimestamp", t1).load(str(folder / SEGMENT)))  # fmt: skip
    want = [r for r in rows if t0 <= r[3] // 1000 < t1]
    assert spark_rows(df) == want and want


def test_formats_and_control_records(spark: Any, testdata: Path, tmp_path: Path) -> None:
    (tmp_path / "t-0").mkdir()
    src = testdata / "corpus" / "rdk-txn-snappy.fetch.bin"
    shutil.copy(src, tmp_path / "t-0" / SEGMENT)
    reader = spark.read.format("krafka-segments").option("includeControl", "true")
    df = reader.option("keyFormat", "string").option("valueFormat", "json").load(str(tmp_path))
    got = df.select("offset", "key", "value", "is_control").collect()
    records = [(r.offset, r.key, r.value) for b in decode_batches(src.read_bytes())
               for r in b.records]  # fmt: skip
    assert len(got) == len(records) == 93
    assert sum(r["is_control"] for r in got) == 3
    for row, (offset, key, value) in zip(got, records, strict=True):
        assert row["offset"] == offset
        assert row["key"] == (None if key is None else key.decode("utf-8", "replace"))
        assert row["value"] == (_json_text(value))


def _json_text(value: bytes | None) -> str | None:
    if value is None:
        return None
    try:
        json.loads(value.decode("utf-8"))
    except ValueError:
        return None
    return value.decode("utf-8")


def test_corrupt_bytes_fail_or_become_corrupt_rows(
    spark: Any, testdata: Path, tmp_path: Path
) -> None:
    raw = bytearray((testdata / "corpus" / "kp-v2-none.fetch.bin").read_bytes())
    clean = len(codec_rows(bytes(raw), None, None))
    raw[200] ^= 0xFF
    (tmp_path / "bad-3").mkdir()
    path = tmp_path / "bad-3" / SEGMENT
    path.write_bytes(bytes(raw))
    with pytest.raises(Exception, match=r"00000000000000000000\.log at byte 0: .*CRC"):
        spark.read.format("krafka-segments").load(str(tmp_path)).collect()
    df = spark.read.format("krafka-segments").option("mode", "PERMISSIVE").load(str(tmp_path))
    rows = df.collect()
    corrupt = [r for r in rows if r["_corrupt"] is not None]
    assert len(corrupt) == 1 and "at byte 0" in corrupt[0]["_corrupt"]
    assert corrupt[0]["topic"] == "bad" and corrupt[0]["partition"] == 3
    assert corrupt[0]["offset"] is None
    assert 0 < len(rows) - 1 < clean


def test_nothing_planned_reads_no_rows(spark: Any, testdata: Path) -> None:
    folder = testdata / "corpus" / "segments" / "seg-v2-mixed-0"
    df = spark.read.format("krafka-segments").option("endingOffset", 0).load(str(folder))
    assert df.count() == 0


def test_read_segments_gives_the_data_source_rows(spark: Any, log_dir: Any) -> None:
    from krafka.spark import read_segments

    root, layout = log_dir
    expected = []
    for (topic, partition), src in layout.items():
        expected += codec_rows(src.read_bytes(), topic, partition)
    df = read_segments(spark, str(root), maxPartitionBytes="64k")
    assert ordered(spark_rows(df)) == ordered(expected)
    empty = read_segments(spark, str(root), endingOffset=0)
    assert empty.count() == 0 and empty.columns == df.columns
