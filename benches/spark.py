"""Bulk decoding to Arrow, outside and inside Spark, against aiokafka and Spark's own ceiling.

    python benches/spark.py            # 1,000 batches outside Spark; 10,000 inside (local[2])
    python benches/spark.py --quick    # 1,000 batches inside Spark too
    python benches/spark.py --no-spark

Records: key "key-<i>" (~8 bytes), a 100-byte value, one 8-byte header on every 4th record,
1,000 records per uncompressed v2 batch.

1. One core, no Spark: `krafka.codec.decode_to_arrow` (compiled, CRC checked) beside aiokafka's
   compiled `DefaultRecordBatch` decoding each record into Python lists and then `pa.table`.
2. Spark local[2], output written to the `noop` sink, same run:
   - `krafka.spark.read_segments` (mapInArrow) and the `krafka-segments` data source over the
     batches as `.log` segments on disk, against a mapInArrow job emitting the same number of
     constant rows of the same schema and sizes (Spark's ceiling for Python-produced Arrow rows);
     a data source emitting those constant rows shows what Spark's Python data source machinery
     itself costs;
   - `decode_batches_df` over a DataFrame of generated blobs, against the same generated input
     mapped to the same number of constant rows (isolates decoding from input transfer).
Medians of `--repeat` runs; ratios are krafka / reference.
"""

from __future__ import annotations

import argparse
import os
import statistics
import struct
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benches"))

import pyarrow as pa  # noqa: E402
from _timing import rate, table  # noqa: E402

from krafka.arrow import decode_to_arrow  # noqa: E402
from krafka.codec import IMPLEMENTATION, Record, encode_batch  # noqa: E402

RECORDS_PER_BATCH = 1000


def template_batch() -> bytes:
    records = [
        Record(key=b"key-%d" % i, value=bytes((i + j) % 251 for j in range(100)),
               headers=[("trace-id", b"abcdefgh")] if i % 4 == 0 else [],
               timestamp=1_700_000_000_000 + i)
        for i in range(RECORDS_PER_BATCH)
    ]  # fmt: skip
    return encode_batch(records)


def batches(template: bytes, first: int, count: int) -> bytes:
    """`count` copies of the template with consecutive base offsets (the CRC does not cover it)."""
    out = bytearray(template * count)
    for i in range(count):
        struct.pack_into(">q", out, i * len(template), (first + i) * RECORDS_PER_BATCH)
    return bytes(out)


def median_of(fn: Callable[[], object], repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


# ---------------------------------------------------------------- outside Spark
def aiokafka_to_arrow(buf: bytes) -> Any:
    from aiokafka.record.memory_records import MemoryRecords

    offsets, stamps, ts_types, keys, values, headers, pids, txns = ([] for _ in range(8))
    records = MemoryRecords(buf)
    while (batch := records.next_batch()) is not None:
        ts_type = "LogAppendTime" if batch.timestamp_type else "CreateTime"
        pid, txn = batch.producer_id, batch.is_transactional
        for r in batch:
            offsets.append(r.offset)
            stamps.append(r.timestamp)
            ts_types.append(ts_type)
            keys.append(r.key)
            values.append(r.value)
            headers.append(r.headers)  # (key, value) tuples: pa.array takes them as structs
            pids.append(pid)
            txns.append(txn)
    return pa.table(
        {
            "offset": pa.array(offsets, pa.int64()),
            "timestamp": pa.array(stamps, pa.timestamp("ms", tz="UTC")),
            "timestamp_type": pa.array(ts_types, pa.string()),
            "key": pa.array(keys, pa.binary()),
            "value": pa.array(values, pa.binary()),
            "headers": pa.array(headers, pa.list_(pa.struct([("key", pa.string()),
                                                             ("value", pa.binary())]))),
            "producer_id": pa.array(pids, pa.int64()),
            "is_transactional": pa.array(txns, pa.bool_()),
        }
    )  # fmt: skip


def aiokafka_to_arrow_lean(buf: bytes) -> Any:
    """The lightest aiokafka baseline: offset, timestamp, key and value columns only."""
    from aiokafka.record.memory_records import MemoryRecords

    offsets, stamps, keys, values = [], [], [], []
    records = MemoryRecords(buf)
    while (batch := records.next_batch()) is not None:
        for r in batch:
            offsets.append(r.offset)
            stamps.append(r.timestamp)
            keys.append(r.key)
            values.append(r.value)
    return pa.table(
        {
            "offset": pa.array(offsets, pa.int64()),
            "timestamp": pa.array(stamps, pa.timestamp("ms", tz="UTC")),
            "key": pa.array(keys, pa.binary()),
            "value": pa.array(values, pa.binary()),
        }
    )


def outside_spark(template: bytes, count: int, repeat: int) -> list[list[str]]:
    buf = batches(template, 0, count)
    rows = count * RECORDS_PER_BATCH
    assert decode_to_arrow(buf).num_rows == aiokafka_to_arrow(buf).num_rows == rows
    krafka = median_of(lambda: decode_to_arrow(buf), repeat)
    no_crc = median_of(lambda: decode_to_arrow(buf, check_crc=False), repeat)
    aiokafka = median_of(lambda: aiokafka_to_arrow(buf), repeat)
    lean = median_of(lambda: aiokafka_to_arrow_lean(buf), repeat)
    return [
        ["aiokafka decode + pa.table (same columns)", rate(rows, aiokafka) + " rows/s", "1.00x"],
        ["aiokafka, offset/timestamp/key/value only", rate(rows, lean) + " rows/s",
         f"{aiokafka / lean:.2f}x"],
        [f"krafka decode_to_arrow ({IMPLEMENTATION})", rate(rows, krafka) + " rows/s",
         f"{aiokafka / krafka:.2f}x"],
        ["krafka decode_to_arrow, no CRC check", rate(rows, no_crc) + " rows/s",
         f"{aiokafka / no_crc:.2f}x"],
        ["krafka decode_to_arrow vs the lean aiokafka", "", f"{lean / krafka:.2f}x"],
    ]  # fmt: skip


# ---------------------------------------------------------------- inside Spark
def start_spark(jars: Sequence[Path] = ()) -> Any:
    """Spark local[2] with the krafka data sources registered (and `jars` on its classpath)."""
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p
    )
    from pyspark.sql import SparkSession

    from krafka.spark import register

    spark = (
        SparkSession.builder.master("local[2]")
        .appName("krafka-bench")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.driver.memory", "2g")
        .config("spark.jars", ",".join(map(str, jars)))
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    register(spark)
    return spark


def constant_chunk(template: bytes, rows: int) -> Any:
    """`rows` rows of the output schema with the benchmark's sizes, built once."""
    from krafka.spark.options import ReadOptions
    from krafka.spark.rows import shape

    one = decode_to_arrow(template, topic="bench", partition=0, timestamp_unit="us",
                          include_control=True)  # fmt: skip
    whole = pa.concat_tables([one] * (rows // one.num_rows + 1)).slice(0, rows).combine_chunks()
    return shape(whole.to_batches()[0], ReadOptions())


def write_segments(template: bytes, count: int, root: Path, partitions: int = 2) -> None:
    per = count // partitions
    for p in range(partitions):
        folder = root / f"bench-topic-{p}"
        folder.mkdir()
        with open(folder / "00000000000000000000.log", "wb") as f:
            for start in range(0, per, 500):
                f.write(batches(template, start, min(500, per - start)))


def constant_rows_job(spark: Any, chunk: Any, total: int, tasks: int) -> Any:
    from krafka.spark.options import ReadOptions
    from krafka.spark.rows import spark_schema

    per_task = total // tasks

    def emit(_: Iterator[Any]) -> Iterator[Any]:
        for _batch in _:
            pass
        left = per_task
        while left > 0:
            yield chunk if left >= chunk.num_rows else chunk.slice(0, left)
            left -= chunk.num_rows

    return spark.range(tasks, numPartitions=tasks).mapInArrow(emit, spark_schema(ReadOptions()))


def blob_frame(spark: Any, template: bytes, count: int) -> Any:
    def generate(parts: Iterator[Any]) -> Iterator[Any]:
        for part in parts:
            ids = part.column("id").to_pylist()
            blobs = [batches(template, i, 1) for i in ids]
            yield pa.RecordBatch.from_arrays([pa.array(blobs, pa.binary())], names=["raw"])

    return spark.range(count, numPartitions=2).mapInArrow(generate, "raw binary")


def blob_constant_job(blobs: Any, chunk: Any) -> Any:
    from krafka.spark.options import ReadOptions
    from krafka.spark.rows import spark_schema

    per_blob = chunk.slice(0, RECORDS_PER_BATCH)

    def emit(parts: Iterator[Any]) -> Iterator[Any]:
        for part in parts:
            for _ in range(part.num_rows):
                yield per_blob

    return blobs.mapInArrow(emit, spark_schema(ReadOptions()))


class ConstantSource:
    """A Python data source emitting constant rows: the data source machinery's own ceiling."""

    @staticmethod
    def make(
        chunk: Any, total: int, tasks: int, schema: Any = None, name: str = "krafka-bench-constant"
    ) -> Any:
        """A source named `name` emitting `total` rows of `chunk` over `tasks` tasks; `schema`
        (a Spark StructType) defaults to the segment rows' one."""
        from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

        from krafka.spark.options import ReadOptions
        from krafka.spark.rows import spark_schema

        row_schema = spark_schema(ReadOptions()) if schema is None else schema
        source_name = name
        per_task = total // tasks

        class Reader(DataSourceReader):  # type: ignore[misc]
            def partitions(self) -> list[Any]:
                return [InputPartition(i) for i in range(tasks)]

            def read(self, partition: Any) -> Iterator[Any]:
                left = per_task
                while left > 0:
                    yield chunk if left >= chunk.num_rows else chunk.slice(0, left)
                    left -= chunk.num_rows

        class Source(DataSource):  # type: ignore[misc]
            @classmethod
            def name(cls) -> str:
                return source_name

            def schema(self) -> Any:
                return row_schema

            def reader(self, schema: Any) -> Any:
                return Reader()

        return Source


def run_noop(df: Any) -> None:
    df.write.format("noop").mode("overwrite").save()


def inside_spark(template: bytes, count: int, repeat: int, frames: bool) -> list[list[str]]:
    from krafka.spark import decode_batches_df, read_segments

    spark = start_spark()
    rows = count * RECORDS_PER_BATCH
    chunk = constant_chunk(template, 65_536)
    out = []
    with tempfile.TemporaryDirectory(prefix="krafka-bench-") as tmp:
        write_segments(template, count, Path(tmp))
        source = spark.read.format("krafka-segments").load(tmp)
        scan = read_segments(spark, tmp)
        tasks = source.rdd.getNumPartitions()
        assert source.count() == scan.count() == rows
        ceiling = constant_rows_job(spark, chunk, rows, tasks)
        spark.dataSource.register(ConstantSource.make(chunk, rows, tasks))
        constant_source = spark.read.format("krafka-bench-constant").load()
        run_noop(ceiling)  # warm up the Python workers
        t_ceiling, t_scan, t_const, t_source = _alternate(
            repeat, *(lambda df=df: run_noop(df) for df in (ceiling, scan, constant_source, source))
        )
        out += [
            [f"Spark ceiling: mapInArrow constant rows ({tasks} tasks)",
             rate(rows, t_ceiling) + " rows/s", "1.00x"],
            ["krafka read_segments (mapInArrow)", rate(rows, t_scan) + " rows/s",
             f"{t_ceiling / t_scan:.2f}x"],
            ["Python data source, constant rows", rate(rows, t_const) + " rows/s",
             f"{t_ceiling / t_const:.2f}x"],
            ["krafka-segments data source", rate(rows, t_source) + " rows/s",
             f"{t_ceiling / t_source:.2f}x"],
        ]  # fmt: skip
    if frames:
        blobs = blob_frame(spark, template, count)
        decoded = decode_batches_df(blobs, "raw")
        baseline = blob_constant_job(blobs, chunk)
        assert decoded.count() == rows
        t_base, t_frames = _alternate(repeat, lambda: run_noop(baseline),
                                      lambda: run_noop(decoded))  # fmt: skip
        out += [
            ["generated blobs -> constant rows", rate(rows, t_base) + " rows/s", "1.00x"],
            ["generated blobs -> decode_batches_df", rate(rows, t_frames) + " rows/s",
             f"{t_base / t_frames:.2f}x"],
        ]  # fmt: skip
    spark.stop()
    return out


def _alternate(repeat: int, *jobs: Callable[[], None]) -> list[float]:
    """Median seconds of each job, run in turn so all see the same machine load."""
    samples: list[list[float]] = [[] for _ in jobs]
    for _ in range(repeat):
        for fn, times in zip(jobs, samples, strict=True):
            start = time.perf_counter()
            fn()
            times.append(time.perf_counter() - start)
    return [statistics.median(t) for t in samples]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batches", type=int, default=1000, help="outside Spark")
    parser.add_argument("--spark-batches", type=int, default=10_000)
    parser.add_argument("--quick", action="store_true", help="1,000 batches inside Spark")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--spark-repeat", type=int, default=3)
    parser.add_argument("--no-spark", action="store_true")
    parser.add_argument("--no-frames", action="store_true", help="skip decode_batches_df")
    args = parser.parse_args()
    template = template_batch()
    header = ["path", "median", "ratio"]
    print(table(f"Outside Spark, one core, {args.batches:,} x {RECORDS_PER_BATCH:,} records",
                header, outside_spark(template, args.batches, args.repeat)))  # fmt: skip
    if not args.no_spark:
        count = 1000 if args.quick else args.spark_batches
        rows = inside_spark(template, count, args.spark_repeat, not args.no_frames)
        print(table(f"Spark local[2], {count:,} x {RECORDS_PER_BATCH:,} records, noop sink",
                    header, rows))  # fmt: skip


if __name__ == "__main__":
    main()
