"""Spark reads the segments Apache Kafka wrote (`tests/_kafka_log.py`) as Kafka's DumpLogSegments
reads them, and read_committed leaves out exactly what Kafka's `.txnindex` says was aborted."""

from __future__ import annotations

import struct
from typing import Any

import pytest

from tests._kafka_log import DELETED, LOG_APPEND_TIME_CODEC, KafkaLog, codec_topic
from tests._kafka_log import kafka_log as write_kafka_log

pytestmark = pytest.mark.spark

Row = tuple[Any, ...]


@pytest.fixture(scope="session")
def kafka_log(kafka_clusters: Any, tmp_path_factory: pytest.TempPathFactory) -> KafkaLog:
    return write_kafka_log(kafka_clusters, tmp_path_factory)


def _dumped_rows(kafka_log: KafkaLog) -> list[Row]:
    """Every record as DumpLogSegments printed it, with the header values its producer sent
    (DumpLogSegments prints header keys only) and control records' marker and epoch."""
    rows = []
    for topic in sorted(kafka_log.sent):
        sent = kafka_log.sent[topic]
        for batch in kafka_log.batches(topic):
            control = batch.flag("isControl")
            for r in batch.records:
                if control:
                    content: Row = (r.marker, r.coordinator_epoch)
                else:
                    headers = list(sent[r.offset].headers)
                    assert [k for k, _ in headers] == list(r.header_keys or ())
                    content = (_ascii(r.key), _ascii(r.payload), headers)
                rows.append((topic, 0, r.offset, r.timestamp * 1000, r.timestamp_type,
                             batch.int("producerId"), batch.flag("isTransactional"), control,
                             content))  # fmt: skip
    return rows


def _ascii(text: str | None) -> bytes | None:
    return None if text is None else text.encode("ascii")


def _spark_rows(df: Any) -> list[Row]:
    from pyspark.sql import functions as F

    selected = df.select(
        "topic", "partition", "offset", F.unix_micros("timestamp").alias("ts_us"),
        "timestamp_type", "key", "value", "headers", "producer_id", "is_transactional",
        "is_control",
    )  # fmt: skip
    rows = []
    for r in selected.collect():
        key, value = _bytes(r["key"]), _bytes(r["value"])
        if r["is_control"]:
            assert key is not None and value is not None
            kind, epoch = struct.unpack_from(">h", key, 2)[0], struct.unpack_from(">i", value, 2)[0]
            content: Row = (("ABORT", "COMMIT")[kind], epoch)
        else:
            headers = [(h["key"], _bytes(h["value"])) for h in r["headers"]]
            content = (key, value, headers)
        rows.append((r["topic"], r["partition"], r["offset"], r["ts_us"], r["timestamp_type"],
                     r["producer_id"], r["is_transactional"], r["is_control"],
                     content))  # fmt: skip
    return sorted(rows, key=lambda row: (row[0], row[2]))


def _bytes(v: Any) -> bytes | None:
    return None if v is None else bytes(v)


def test_read_segments_rows_are_the_dumped_records(spark: Any, kafka_log: KafkaLog) -> None:
    from krafka.spark import read_segments

    df = read_segments(spark, str(kafka_log.root), includeControl=True)
    rows = _spark_rows(df)
    assert rows == _dumped_rows(kafka_log)
    appended = [r for r in rows if r[0] == codec_topic(LOG_APPEND_TIME_CODEC)]
    assert {r[4] for r in appended} == {"LogAppendTime"}


def _committed(kafka_log: KafkaLog) -> list[tuple[str, int]]:
    return [(t, o) for t in sorted(kafka_log.sent) for o in kafka_log.committed_offsets(t)]


def test_read_committed_leaves_out_what_kafka_indexed_as_aborted(
    spark: Any, kafka_log: KafkaLog
) -> None:
    from krafka.spark import read_segments

    df = read_segments(spark, str(kafka_log.root), isolation="read_committed")
    got = sorted((r["topic"], r["offset"]) for r in df.select("topic", "offset").collect())
    assert got == _committed(kafka_log)
    everything = sum(len(b.records) for t in kafka_log.sent for b in kafka_log.batches(t)
                     if not b.flag("isControl"))  # fmt: skip
    assert len(got) < everything


def test_data_source_read_committed(spark: Any, kafka_log: KafkaLog) -> None:
    df = (
        spark.read.format("krafka-segments")
        .option("isolation", "read_committed")
        .load(str(kafka_log.root))
    )
    got = sorted((r["topic"], r["offset"]) for r in df.select("topic", "offset").collect())
    assert got == _committed(kafka_log)


def test_splits_fall_on_the_batches_kafka_wrote(kafka_log: KafkaLog) -> None:
    """Planning reads the broker's own `.index` (an entry per batch here) for cut points."""
    from krafka.spark.segments import find_segments, plan_splits

    for path in kafka_log.segments():
        positions = [b.int("position") for b in kafka_log.dumps[path].batches]
        splits = plan_splits(find_segments(str(path))[0], 1)
        assert [s.start for s in splits] == positions, path
        assert splits[-1].end == path.stat().st_size


def test_a_deleted_topics_folder_is_named_but_not_read(kafka_log: KafkaLog) -> None:
    """Kafka renames a deleted topic's partition `<topic>-<n>.<id>-delete` and removes it later:
    reading the log dir meanwhile leaves it out (the rows above hold no other topic)."""
    from krafka.spark.segments import find_segments, topic_partition

    assert kafka_log.deleted is not None and kafka_log.deleted.name.endswith("-delete")
    segment = next(kafka_log.deleted.glob("*.log"))
    assert topic_partition(str(segment)) == (DELETED, 0)
    assert {s.topic for s in find_segments(str(kafka_log.root))} == set(kafka_log.sent)
    assert [s.topic for s in find_segments(str(kafka_log.deleted))] == [DELETED]
