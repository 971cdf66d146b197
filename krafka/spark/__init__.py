"""PySpark layer: decode raw Kafka batches and archived `.log` segments in bulk, without a broker.

    from krafka.spark import decode_batches_df, register

    rows = decode_batches_df(df, "raw")     # binary column of raw batches -> one row per record
    spark.read.format("krafka-segments").load("/data/kafka-logs")
    spark.read.format("krafka").option("kafka.bootstrap.servers", "host:9092") \
        .option("subscribe", "orders").load()   # live topics: see `krafka.spark.kafka_source`
    spark.readStream.format("krafka-share")...  # a topic as a queue: `krafka.spark.share_source`
    read_segments(spark, "/data/kafka-logs", isolation="read_committed")   # same, via mapInArrow

Row schema: `topic string, partition int, offset long, timestamp timestamp,
timestamp_type string, key binary, value binary, headers array<struct<key:string,value:binary>>,
producer_id long, is_transactional boolean`. Control records are left out; records of aborted
transactions are kept unless `isolation` is `read_committed`.

Data source options (all optional):
- `isolation`: `read_uncommitted` (default) or `read_committed` (drops records of aborted
  transactions, and of transactions with no marker in the partition's segments).
- `startingOffset` / `endingOffset`: keep offsets in [start, end).
- `startingTimestamp` / `endingTimestamp`: keep record timestamps in [start, end); epoch
  milliseconds or ISO-8601 (UTC unless a zone is given). Exact row filters, not seek positions.
- `includeControl`: `true` keeps control records and adds an `is_control boolean` column.
- `keyFormat` / `valueFormat`: `binary` (default); `string` (UTF-8, invalid bytes become
  U+FFFD); `json` (the UTF-8 JSON text, null when not valid JSON; parse it with `from_json`).
- `maxPartitionBytes`: split segments larger than this (bytes, or with k/m/g; default 128m) at
  batch boundaries (from the `.index` file when present, else a header-only scan).
- `mode`: `FAILFAST` (default; corrupt bytes fail the job naming the file and byte offset) or
  `PERMISSIVE` (a corrupt batch is skipped and reported as one row whose `_corrupt string`
  column names the file, byte offset and error; every other column of that row is null).
- `checkCrc`: `true` (default) or `false`.

Paths: a log directory of `<topic>-<partition>` folders, one such folder, a `.log` file, or a
glob. Topic and partition come from the folder name, split on its LAST dash; a file outside such
a folder gets its file stem as topic and a null partition. Folders Kafka set aside
(`<topic>-<partition>.<id>-delete`, `-future`, `-stray`) are skipped unless named directly.

`read_segments(spark, path, **options)` returns the same rows through `mapInArrow`, which costs
Spark less per row than its Python data source machinery: prefer it for bulk jobs.

The data sources need no registering: PySpark 4 finds them in krafka's top-level
`pyspark_krafka*` modules (its static lookup of `pyspark_*` modules' `DefaultSource`).
`register(spark)` registers them by hand, for a Python path without those modules.

Needs pyspark >= 4.0 (Python data sources) and pyarrow, from the `spark` extra; Spark itself
runs on Java 17+ (`JAVA_HOME` or `java` on the PATH), which pip does not install.
"""

from __future__ import annotations

from typing import Any

from krafka._optional import require

__all__ = ["decode_batches_df", "read_segments", "register"]


def decode_batches_df(
    df: Any, column: str, *, isolation: str = "read_uncommitted", include_control: bool = False
) -> Any:
    """One row per record of the raw batches in binary column `column` (see module docs)."""
    require("pyspark", "krafka.spark.decode_batches_df")
    from krafka.spark.frames import decode_batches_df as decode

    return decode(df, column, isolation=isolation, include_control=include_control)


def read_segments(spark: Any, path: str, **options: Any) -> Any:
    """The data source's rows through `mapInArrow`: same options, less overhead per row."""
    require("pyspark", "krafka.spark.read_segments")
    from krafka.spark.scan import read_segments as read

    return read(spark, path, **options)


def register(spark: Any) -> None:
    """Register the `krafka-segments`, `krafka` (live topics) and `krafka-share` (share
    groups) data sources with `spark` (PySpark 4 registers them by itself where krafka is
    installed: see the module docs)."""
    require("pyspark", "krafka.spark.register")
    from krafka.spark.kafka_source import KafkaSource
    from krafka.spark.share_source import ShareSource
    from krafka.spark.source import SegmentSource

    spark.dataSource.register(SegmentSource)
    spark.dataSource.register(KafkaSource)
    spark.dataSource.register(ShareSource)
