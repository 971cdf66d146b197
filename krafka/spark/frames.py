"""`decode_batches_df`: a DataFrame of raw record batches to one row per record (`mapInArrow`).

Each input row holds a blob of concatenated batches (a Fetch response's records, a segment
slice). Optional `topic`/`partition` columns of the input fill those output columns (else null).
Rows of many blobs share one Arrow sink, so output chunks stay large however small the blobs.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import Any

from krafka.arrow import DEFAULT_MAX_ROWS, Options, decode_into, new_sink
from krafka.spark import rows
from krafka.spark.options import ReadOptions

_RAW, _TOPIC, _PARTITION = "__krafka_raw", "__krafka_topic", "__krafka_partition"


def decode_batches_df(
    df: Any, column: str, *, isolation: str = "read_uncommitted", include_control: bool = False
) -> Any:
    """One row per record of the batches in binary column `column` (schema: `krafka.spark`).

    Control records are left out unless `include_control`; with `isolation="read_committed"`,
    records of transactions aborted within the same blob (or left open at its end) are dropped.
    """
    from pyspark.sql import functions as F

    options = ReadOptions.parse({"isolation": isolation,
                                 "includeControl": str(include_control).lower()})  # fmt: skip
    names = set(df.columns)
    source = df.select(
        F.col(column).alias(_RAW),
        (F.col("topic") if "topic" in names else F.lit(None)).cast("string").alias(_TOPIC),
        (F.col("partition") if "partition" in names else F.lit(None)).cast("int").alias(_PARTITION),
    )

    def decode(batches: Iterator[Any]) -> Iterator[Any]:
        yield from decode_arrow_batches(batches, options)

    return source.mapInArrow(decode, rows.spark_schema(options))


def decode_arrow_batches(batches: Iterator[Any], options: ReadOptions) -> Iterator[Any]:
    """The mapInArrow body: input chunks of (raw, topic, partition) to output chunks."""
    decode = Options(include_control=options.include_control,
                     read_committed=options.read_committed)  # fmt: skip
    sink = new_sink(None, None, None, "us", options.window)
    runs = _Runs()
    for batch in batches:
        raw, topics, partitions = batch.columns
        for i, blob in enumerate(_blobs(raw)):
            before = sink.rows
            if blob is not None:
                for chunk in decode_into(sink, blob, decode, max_rows=sys.maxsize):
                    runs.add(chunk.num_rows - runs.total, topics[i], partitions[i])
                    yield runs.shape(chunk, options)  # a huge blob: flushed by size
                    before = 0
            runs.add(sink.rows - before, topics[i], partitions[i])
            if sink.rows >= DEFAULT_MAX_ROWS:
                yield runs.shape(sink.finish(), options)
    if sink.rows:
        yield runs.shape(sink.finish(), options)


def _blobs(raw: Any) -> Iterator[memoryview | None]:
    """Zero-copy views of a binary array's values."""
    import pyarrow as pa

    if not (pa.types.is_binary(raw.type) or pa.types.is_large_binary(raw.type)):
        raise TypeError(f"expected a binary column, not {raw.type}")
    _, offsets_buf, data_buf = raw.buffers()
    whole = memoryview(offsets_buf)
    wide = whole.cast("q") if pa.types.is_large_binary(raw.type) else whole.cast("i")
    offsets = wide[raw.offset : raw.offset + len(raw) + 1]
    data = memoryview(data_buf) if data_buf is not None else memoryview(b"")
    valid = [True] * len(raw) if raw.null_count == 0 else raw.is_valid().to_pylist()
    for i in range(len(raw)):
        yield data[offsets[i] : offsets[i + 1]] if valid[i] else None


class _Runs:
    """Which input row each output row came from, as runs of (count, topic, partition)."""

    def __init__(self) -> None:
        self.ends: list[int] = []
        self.topics: list[Any] = []
        self.partitions: list[Any] = []
        self.total = 0

    def clear(self) -> None:
        self.ends, self.topics, self.partitions, self.total = [], [], [], 0

    def add(self, count: int, topic: Any, partition: Any) -> None:
        if count == 0:
            return
        self.total += count
        self.ends.append(self.total)
        self.topics.append(topic.as_py())
        self.partitions.append(partition.as_py())

    def shape(self, wide: Any, options: ReadOptions) -> Any:
        import pyarrow as pa
        import pyarrow.compute as pc

        ends = pa.array(self.ends, pa.int32())
        topic = pc.run_end_decode(
            pa.RunEndEncodedArray.from_arrays(ends, pa.array(self.topics, pa.string()))
        )
        partition = pc.run_end_decode(
            pa.RunEndEncodedArray.from_arrays(ends, pa.array(self.partitions, pa.int32()))
        )
        self.clear()
        return rows.shape(wide, options, topic, partition)
