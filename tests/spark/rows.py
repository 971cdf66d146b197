"""Expected rows from the codec, and the same rows read back from Spark, as comparable tuples."""

from __future__ import annotations

from typing import Any

from krafka.codec import decode_batches

Row = tuple[Any, ...]
COLUMNS = ("topic", "partition", "offset", "ts_us", "timestamp_type", "key", "value", "headers",
           "producer_id", "is_transactional")  # fmt: skip


def codec_rows(
    buf: bytes, topic: str | None, partition: int | None, skip_offsets: set[int] = frozenset()
) -> list[Row]:
    rows = []
    for b in decode_batches(buf):
        if b.is_control:
            continue
        ts_type = (
            None
            if b.timestamp_type is None
            else ("CreateTime", "LogAppendTime")[int(b.timestamp_type)]
        )
        for r in b.records:
            if r.offset in skip_offsets:
                continue
            rows.append(
                (topic, partition, r.offset, None if r.timestamp is None else r.timestamp * 1000,
                 ts_type, r.key, r.value, [(k, v) for k, v in r.headers], b.producer_id,
                 b.is_transactional)
            )  # fmt: skip
    return rows


def spark_rows(df: Any) -> list[Row]:
    from pyspark.sql import functions as F

    selected = df.select(
        "topic", "partition", "offset", F.unix_micros("timestamp").alias("ts_us"),
        "timestamp_type", "key", "value", "headers", "producer_id", "is_transactional",
    )  # fmt: skip
    out = []
    for r in selected.collect():
        headers = [(h["key"], None if h["value"] is None else bytes(h["value"]))
                   for h in r["headers"]]  # fmt: skip
        out.append(
            (r["topic"], r["partition"], r["offset"], r["ts_us"], r["timestamp_type"],
             _bytes(r["key"]), _bytes(r["value"]), headers, r["producer_id"],
             r["is_transactional"])
        )  # fmt: skip
    return out


def _bytes(v: Any) -> bytes | None:
    return None if v is None else bytes(v)


def ordered(rows: list[Row]) -> list[Row]:
    return sorted(rows, key=lambda r: (r[0] or "", -1 if r[1] is None else r[1], r[2]))
