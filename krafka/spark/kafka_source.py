"""The `krafka` data source: live Kafka topics in Spark with no JVM Kafka package.

    spark.read.format("krafka").option("kafka.bootstrap.servers", "host:9092")
        .option("subscribe", "orders").option("startingOffsets", "earliest").load()
    spark.readStream.format("krafka")...        # offsets live in the query's checkpoint
    df.write.format("krafka").option("kafka.bootstrap.servers", ...).option("topic", "out").save()

Options and rows are those of Spark's Kafka source (see `kafka_options`), so changing
`"kafka"` to `"krafka"` is the migration. Offsets are JSON-able dicts in Spark's form,
`{"topic": {"0": 42}}`; a micro-batch reads `[start, end)` of each partition, so a restarted
query re-reads exactly what its checkpoint says was not committed.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from pyspark.sql.datasource import (
    DataSource,
    DataSourceArrowWriter,
    DataSourceReader,
    DataSourceStreamArrowWriter,
    DataSourceStreamReader,
    InputPartition,
    WriterCommitMessage,
)
from pyspark.sql.streaming.datasource import SupportsTriggerAvailableNow

from krafka.spark.group_progress import GroupProgress
from krafka.spark.kafka_options import LATEST, SinkOptions, SourceOptions
from krafka.spark.kafka_plan import OffsetRange, Offsets, Planner, cap, split
from krafka.spark.kafka_read import read_range, spark_schema
from krafka.spark.kafka_write import check_schema, write_batches
from krafka.structs import TopicPartition

NAME = "krafka"


class RangePartition(InputPartition):
    def __init__(self, r: OffsetRange) -> None:
        super().__init__(None)
        self.range = r

    def __repr__(self) -> str:
        r = self.range
        return f"RangePartition({r.topic}-{r.partition} [{r.start}, {r.end}))"


class KafkaSource(DataSource):
    """`format("krafka")`: batch and streaming reads, batch and streaming writes."""

    @classmethod
    def name(cls) -> str:
        return NAME

    def schema(self) -> Any:
        include = str(self.options.get("includeHeaders", "false")).lower() == "true"
        return spark_schema(include)

    def reader(self, schema: Any) -> DataSourceReader:
        return BatchReader(SourceOptions.parse(self.options, streaming=False))

    def streamReader(self, schema: Any) -> DataSourceStreamReader:
        return StreamReader(SourceOptions.parse(self.options, streaming=True))

    def writer(self, schema: Any, overwrite: bool) -> Writer:
        options = SinkOptions.parse(self.options)
        check_schema(schema, options)
        return Writer(options)

    def streamWriter(self, schema: Any, overwrite: bool) -> StreamWriter:
        options = SinkOptions.parse(self.options)
        check_schema(schema, options)
        return StreamWriter(options)


class BatchReader(DataSourceReader):
    def __init__(self, options: SourceOptions) -> None:
        self.options = options

    def partitions(self) -> Sequence[InputPartition]:
        planner = Planner(self.options)
        try:
            tps = planner.partitions()
            starts = planner.resolve(self.options.starting, tps)
            ends = planner.resolve(self.options.ending, tps)
        finally:
            planner.close()
        ranges = [OffsetRange(tp.topic, tp.partition, starts[tp], ends[tp]) for tp in tps]
        return [RangePartition(r) for r in split(ranges, self.options.min_partitions)]

    def read(self, partition: InputPartition) -> Iterator[Any]:
        if not isinstance(partition, RangePartition):  # Spark's stand-in when nothing is planned
            return iter(())
        return read_range(partition.range, self.options)


class StreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """Micro-batches over the partitions the options select, new ones included (from their
    earliest offset, as Spark's Kafka source does). Under `trigger(availableNow=True)` the
    query ends at the latest offsets of when it started, in as many micro-batches as
    `maxOffsetsPerTrigger` makes."""

    def __init__(self, options: SourceOptions) -> None:
        self.options = options
        self.planner = Planner(options)
        self.target: Offsets | None = None
        self.progress = None
        if options.commit_group is not None:
            self.progress = GroupProgress(options.commit_group, self.planner.admin_config)

    def prepareForTriggerAvailableNow(self) -> None:
        self.target = self.planner.latest(self.planner.partitions())

    def initialOffset(self) -> dict[str, Any]:
        tps = self.planner.partitions()
        return _to_json(self.planner.resolve(self.options.starting, tps))

    def getDefaultReadLimit(self) -> Any:
        from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadMaxRows

        limit = self.options.max_offsets_per_trigger
        return ReadAllAvailable() if limit is None else ReadMaxRows(limit)

    def latestOffset(self, start: dict[str, Any], limit: Any) -> dict[str, Any]:
        from pyspark.sql.streaming.datasource import ReadMaxRows

        begin = _from_json(start)
        if self.progress is not None:  # every batch up to `start` has completed
            self.progress.commit(begin)
        tps = self.planner.partitions() if self.target is None else sorted(self.target)
        new = [tp for tp in tps if tp not in begin]
        begin.update(self.planner.earliest(new))
        latest = self.planner.latest(tps) if self.target is None else dict(self.target)
        if isinstance(limit, ReadMaxRows):
            latest = cap(begin, latest, limit.max_rows)
        return _to_json({**begin, **latest})

    def partitions(self, start: dict[str, Any], end: dict[str, Any]) -> Sequence[InputPartition]:
        begin, finish = _from_json(start), _from_json(end)
        earliest = self.planner.earliest([tp for tp in finish if tp not in begin])
        ranges = []
        for tp, stop in sorted(finish.items()):
            first = begin.get(tp, earliest.get(tp, stop))
            if first == LATEST:
                first = stop
            ranges.append(OffsetRange(tp.topic, tp.partition, first, stop))
        return [RangePartition(r) for r in split(ranges, self.options.min_partitions)]

    def read(self, partition: InputPartition) -> Iterator[Any]:
        if not isinstance(partition, RangePartition):
            return iter(())
        return read_range(partition.range, self.options)

    def commit(self, end: dict[str, Any]) -> None:
        """The offsets live in Spark's checkpoint; with `commitOffsetsToGroup` they are
        committed to that group as well (`krafka.spark.group_progress`). Spark calls this only
        when it plans the next batch, so `latestOffset` commits its `start` too: Spark asks for
        it once every batch before `start` is done, at each trigger, and once more when an
        `availableNow` query has read everything."""
        if self.progress is not None:
            self.progress.commit(_from_json(end))

    def stop(self) -> None:
        try:
            if self.progress is not None:
                self.progress.close()
        finally:
            self.planner.close()


class Writer(DataSourceArrowWriter):
    def __init__(self, options: SinkOptions) -> None:
        self.options = options

    def write(self, iterator: Iterator[Any]) -> WriterCommitMessage:
        write_batches(iterator, self.options)
        return WriterCommitMessage()


class StreamWriter(DataSourceStreamArrowWriter):
    def __init__(self, options: SinkOptions) -> None:
        self.options = options

    def write(self, iterator: Iterator[Any]) -> WriterCommitMessage:
        write_batches(iterator, self.options)
        return WriterCommitMessage()

    def commit(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        """Records are acknowledged by the time each task returns."""

    def abort(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        """Kafka has no way to take acknowledged records back (at least once, as Spark's)."""


def _to_json(offsets: Offsets) -> dict[str, Any]:
    out: dict[str, dict[str, int]] = {}
    for tp, offset in sorted(offsets.items()):
        out.setdefault(tp.topic, {})[str(tp.partition)] = int(offset)
    return out


def _from_json(offsets: dict[str, Any]) -> Offsets:
    return {
        TopicPartition(topic, int(p)): int(o)
        for topic, parts in (offsets or {}).items()
        for p, o in parts.items()
    }


__all__ = ["KafkaSource"]
