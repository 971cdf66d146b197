"""The `krafka-segments` Python data source: archived Kafka `.log` segments as a DataFrame.

    spark.read.format("krafka-segments").option("isolation", "read_committed").load(path)

Planning (on the driver) finds the segments, prunes them by offset, splits large ones at batch
boundaries and, for read_committed, scans each partition's control markers once. Reading (on the
executors) decodes a byte range in the compiled codec straight into Arrow.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

from krafka.arrow import AbortIndex, Options, decode_into, new_sink
from krafka.errors import CorruptRecordError
from krafka.spark import rows
from krafka.spark.options import Mode, ReadOptions
from krafka.spark.segments import (
    Split,
    abort_index,
    by_partition,
    find_segments,
    map_range,
    plan_splits,
    prune,
)

NAME = "krafka-segments"
_AT_BYTE = re.compile(r" \(at byte \d+\)$")


class SegmentSplit(InputPartition):
    """One byte range of one segment, with the partition's aborted transactions."""

    def __init__(self, split: Split, aborted: AbortIndex | None) -> None:
        super().__init__(None)
        self.split = split
        self.aborted = aborted

    def __repr__(self) -> str:
        s = self.split
        return f"SegmentSplit({s.segment.path}, {s.start}, {s.end})"


class SegmentSource(DataSource):
    """`spark.read.format("krafka-segments").load(path)`; options: see `ReadOptions`."""

    @classmethod
    def name(cls) -> str:
        return NAME

    def schema(self) -> Any:
        return rows.spark_schema(ReadOptions.parse(self.options))

    def reader(self, schema: Any) -> SegmentReader:
        path = self.options.get("path")
        if not path:
            raise ValueError("krafka-segments needs a path: .load('/path/to/logs')")
        return SegmentReader(path, ReadOptions.parse(self.options))


class SegmentReader(DataSourceReader):
    def __init__(self, path: str, options: ReadOptions) -> None:
        self.path = path
        self.options = options

    def partitions(self) -> list[SegmentSplit]:
        w = self.options.window
        out: list[SegmentSplit] = []
        for segments in by_partition(find_segments(self.path)).values():
            aborted = abort_index(segments) if self.options.read_committed else None
            for segment in prune(segments, w.start_offset, w.end_offset):
                for split in plan_splits(segment, self.options.max_partition_bytes):
                    out.append(SegmentSplit(split, aborted))
        return out

    def read(self, partition: InputPartition) -> Iterator[Any]:
        if not isinstance(partition, SegmentSplit):  # Spark's stand-in when nothing is planned
            return iter(())
        return read_split(partition.split, partition.aborted, self.options)


def read_split(split: Split, aborted: AbortIndex | None, options: ReadOptions) -> Iterator[Any]:
    """Arrow batches of the output schema for one byte range."""
    segment = split.segment
    corrupt: list[str] = []

    def on_corrupt(exc: CorruptRecordError, where: int, skipped: int) -> None:
        corrupt.append(f"{_describe(exc, segment.path, split.start + where)}; "
                       f"{skipped} bytes skipped")  # fmt: skip

    permissive = options.mode is Mode.PERMISSIVE
    decode = Options(
        include_control=options.include_control,
        read_committed=options.read_committed,
        aborted=aborted,
        window=options.window,
        check_crc=options.check_crc,
        on_corrupt=on_corrupt if permissive else None,
    )
    sink = new_sink(None, segment.topic, segment.partition, "us", options.window)
    buf = map_range(split)
    try:
        for chunk in decode_into(sink, buf, decode):
            yield rows.shape(chunk, options)
    except CorruptRecordError as exc:
        position = split.start + (exc.offset or 0)
        raise CorruptRecordError(_describe(exc, segment.path, position), position) from exc
    if sink.rows:
        yield rows.shape(sink.finish(), options)
    if corrupt:
        yield rows.corrupt_rows(options, segment.topic, segment.partition, corrupt)


def _describe(exc: CorruptRecordError, path: str, position: int) -> str:
    return f"{path} at byte {position}: {_AT_BYTE.sub('', str(exc))}"
