"""Kafka records into Arrow columns: the pure-Python sink (twin of the compiled `_arrow.pyx`).

A sink accumulates the rows of many batches and hands them out as one `pyarrow.RecordBatch`
with the wide row schema below (`finish`). The batch walk, transaction filtering and chunking
live in `krafka.arrow`; a sink only turns one batch at a time into rows, applying the row
filters (offset and timestamp ranges, both half-open). This twin decodes through the pure codec
and Python lists; it is the readable reference the compiled sink is tested against.

pyarrow is imported lazily: importing this module never requires it.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from krafka._codec import pure
from krafka._codec.compression import DEFAULT_MAX_DECOMPRESSED
from krafka._codec.types import BatchHeader, RecordBatch
from krafka._optional import require

Buffer = bytes | bytearray | memoryview

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1
TIMESTAMP_TYPE_NAMES = ("CreateTime", "LogAppendTime")
UNIT_FACTORS = {"ms": 1, "us": 1000}
COLUMNS = (
    "topic", "partition", "offset", "timestamp", "timestamp_type", "key", "value", "headers",
    "producer_id", "is_transactional", "is_control",
)  # fmt: skip


@cache
def arrow_schema(timestamp_unit: str = "ms") -> Any:
    """The wide row schema every sink produces (Spark's row schema plus `is_control`).

    Field names and nullability match what Spark expects from `mapInArrow`/data sources for
    `topic string, partition int, offset long, timestamp timestamp, timestamp_type string,
    key binary, value binary, headers array<struct<key:string,value:binary>>,
    producer_id long, is_transactional boolean` (with `timestamp_unit="us"`).
    Built once per unit (a schema is immutable): every chunk a sink finishes shares it.
    """
    pa = require("pyarrow", "arrow_schema")
    if timestamp_unit not in UNIT_FACTORS:
        raise ValueError(f"timestamp_unit must be 'ms' or 'us', not {timestamp_unit!r}")
    header = pa.struct([pa.field("key", pa.string()), pa.field("value", pa.binary())])
    return pa.schema(
        [
            pa.field("topic", pa.string()),
            pa.field("partition", pa.int32()),
            pa.field("offset", pa.int64()),
            pa.field("timestamp", pa.timestamp(timestamp_unit, tz="UTC")),
            pa.field("timestamp_type", pa.string()),
            pa.field("key", pa.binary()),
            pa.field("value", pa.binary()),
            pa.field("headers", pa.list_(pa.field("element", header))),
            pa.field("producer_id", pa.int64()),
            pa.field("is_transactional", pa.bool_()),
            pa.field("is_control", pa.bool_()),
        ]
    )


#: Spark's Kafka source columns in its order (then `headers`, when included): the rows of
#: `format("krafka")` and of `Consumer.poll_arrow`.
KAFKA_COLUMNS = ("key", "value", "topic", "partition", "offset", "timestamp", "timestampType")


@cache
def kafka_schema(include_headers: bool = True, timestamp_unit: str = "us") -> Any:
    """The Arrow schema of `kafka_rows` (Spark's Kafka source row, in Spark's Arrow types),
    built once per variant."""
    import pyarrow as pa

    wide = arrow_schema(timestamp_unit)
    fields = [
        pa.field(name, pa.int32()) if name == "timestampType" else wide.field(name)
        for name in KAFKA_COLUMNS
    ]
    if include_headers:
        fields.append(wide.field("headers"))
    return pa.schema(fields)


def kafka_rows(wide: Any, include_headers: bool = True) -> Any:
    """A wide chunk in Spark's Kafka source columns, with its values: `timestampType` 0 for
    CreateTime and 1 for LogAppendTime (null for magic 0 records, which have no timestamp),
    `headers` null for a record without headers."""
    import pyarrow as pa
    import pyarrow.compute as pc

    arrays = [wide.column(name) for name in KAFKA_COLUMNS[:-1]]
    log_append = pc.equal(wide.column("timestamp_type"), "LogAppendTime")
    arrays.append(log_append.cast(pa.int32()))
    if include_headers:
        arrays.append(_null_when_empty(wide.column("headers")))
    return pa.RecordBatch.from_arrays(arrays, schema=kafka_schema(include_headers, _unit(wide)))


def _null_when_empty(headers: Any) -> Any:
    """`headers` with its empty lists made null (a validity bitmap over the same buffers)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    present = pc.not_equal(pc.list_value_length(headers), 0)
    nulls = len(headers) - pc.sum(present).as_py() if len(headers) else 0
    if nulls == 0:
        return headers
    if headers.offset:  # a bitmap of our own starts at bit 0
        headers = pa.concat_arrays([headers])
    return pa.Array.from_buffers(
        headers.type, len(headers), [present.buffers()[1], headers.buffers()[1]],
        null_count=nulls, children=[headers.values],
    )  # fmt: skip


def _unit(wide: Any) -> str:
    return str(wide.schema.field("timestamp").type.unit)


def _wrap64(v: int) -> int:
    return (v - INT64_MIN) % 2**64 + INT64_MIN


class ArrowSink:
    """Accumulates rows from batches; `finish()` returns them as a RecordBatch and resets."""

    def __init__(
        self,
        topic: str | None = None,
        partition: int | None = None,
        timestamp_unit: str = "ms",
        min_offset: int = INT64_MIN,
        max_offset: int = INT64_MAX,
        min_timestamp: int | None = None,
        max_timestamp: int | None = None,
    ) -> None:
        self.topic = topic
        self.partition = partition
        self.timestamp_unit = timestamp_unit
        self._factor = UNIT_FACTORS[timestamp_unit]
        self._offsets = (min_offset, max_offset)
        self._stamps = (min_timestamp, max_timestamp)
        self._rows: list[tuple[Any, ...]] = []
        self._bytes = 0

    @property
    def rows(self) -> int:
        return len(self._rows)

    @property
    def nbytes(self) -> int:
        """Key, value and header bytes held (the driver flushes before int32 offsets overflow)."""
        return self._bytes

    def add_v2(
        self,
        buf: Buffer,
        header: BatchHeader,
        check_crc: bool = True,
        max_decompressed_size: int = DEFAULT_MAX_DECOMPRESSED,
    ) -> int:
        """Decode the v2 batch `header` describes; all or none of its rows are added."""
        records = list(pure.iter_batch_records(buf, header, check_crc, max_decompressed_size))
        attributes = header.attributes
        return self._add(
            records,
            TIMESTAMP_TYPE_NAMES[(attributes >> 3) & 1],
            header.producer_id,
            bool(attributes & 0x10),
            bool(attributes & 0x20),
        )

    def add_legacy(self, batch: RecordBatch) -> int:
        """Add the records of a decoded legacy (magic 0/1) entry."""
        ts_type = batch.timestamp_type
        name = None if ts_type is None else TIMESTAMP_TYPE_NAMES[int(ts_type)]
        return self._add(batch.records, name, None, False, False)

    def _add(
        self,
        records: list[Any],
        ts_type: str | None,
        producer_id: int | None,
        transactional: bool,
        control: bool,
    ) -> int:
        before = len(self._rows)
        for r in records:
            if not self._accepts(r.offset, r.timestamp):
                continue
            ts = None if r.timestamp is None else _wrap64(r.timestamp * self._factor)
            headers = [(k, v) for k, v in r.headers]
            self._rows.append(
                (r.offset, ts, ts_type, r.key, r.value, headers, producer_id, transactional,
                 control)
            )  # fmt: skip
            self._bytes += len(r.key or b"") + len(r.value or b"")
            self._bytes += sum(len(k.encode()) + len(v or b"") for k, v in headers)
        return len(self._rows) - before

    def _accepts(self, offset: int, timestamp: int | None) -> bool:
        lo, hi = self._offsets
        if offset < lo or offset >= hi:
            return False
        ts_lo, ts_hi = self._stamps
        if ts_lo is None and ts_hi is None:
            return True
        if timestamp is None:
            return False
        return (ts_lo is None or timestamp >= ts_lo) and (ts_hi is None or timestamp < ts_hi)

    def finish(self) -> Any:
        """The rows so far as a `pyarrow.RecordBatch` (wide schema); the sink is emptied."""
        import pyarrow as pa

        rows, self._rows, self._bytes = self._rows, [], 0
        n = len(rows)
        cols: list[list[Any]] = [list(c) for c in zip(*rows, strict=True)] if rows else [[]] * 9
        values = [[self.topic] * n, [self.partition] * n, *cols]
        schema = arrow_schema(self.timestamp_unit)
        arrays = [pa.array(v, f.type) for v, f in zip(values, schema, strict=True)]
        return pa.RecordBatch.from_arrays(arrays, schema=schema)

    def finish_kafka(self, include_headers: bool = True) -> Any:
        """The rows so far straight in Spark's Kafka source columns (`kafka_rows` of `finish()`,
        which is what this twin does); the sink is emptied."""
        return kafka_rows(self.finish(), include_headers)
