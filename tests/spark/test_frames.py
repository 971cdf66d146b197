"""decode_batches_df against the codec, on the corpus blobs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from krafka.spark import decode_batches_df

from .rows import codec_rows, ordered, spark_rows

pytestmark = pytest.mark.spark


def test_decode_batches_df_equals_the_codec(spark: Any, testdata: Path) -> None:
    blobs = sorted((testdata / "corpus").glob("*.bin"))
    table = [(p.read_bytes(), f"topic-{i % 3}", i) for i, p in enumerate(blobs)]
    df = spark.createDataFrame(table, "raw binary, topic string, partition int").repartition(2)
    expected = []
    for raw, topic, partition in table:
        expected += codec_rows(raw, topic, partition)
    assert ordered(spark_rows(decode_batches_df(df, "raw"))) == ordered(expected)


def test_without_topic_columns_and_read_committed(spark: Any, testdata: Path) -> None:
    raw = (testdata / "corpus" / "rdk-txn-snappy.fetch.bin").read_bytes()
    df = spark.createDataFrame([(raw,), (None,)], "blob binary")
    rows = spark_rows(decode_batches_df(df, "blob", isolation="read_committed"))
    assert len(rows) == 70
    assert {(r[0], r[1]) for r in rows} == {(None, None)}
    assert spark_rows(decode_batches_df(df, "blob")) == codec_rows(raw, None, None)


def test_include_control(spark: Any, testdata: Path) -> None:
    raw = (testdata / "corpus" / "rdk-txn-snappy.fetch.bin").read_bytes()
    df = spark.createDataFrame([(raw,)], "raw binary")
    rows = decode_batches_df(df, "raw", include_control=True).select("offset", "is_control")
    got = [(r["offset"], r["is_control"]) for r in rows.collect()]
    assert len(got) == 93 and [o for o, c in got if c] == [40, 61, 92]
