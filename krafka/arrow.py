"""Raw Kafka batches straight to Arrow: `decode_to_arrow` and its streaming form.

    from krafka.codec import decode_to_arrow
    table = decode_to_arrow(fetch_or_segment_bytes, topic="orders", partition=3)

Rows follow Spark's record schema (`topic, partition, offset, timestamp, timestamp_type, key,
value, headers, producer_id, is_transactional`, plus `is_control` when control records are
kept). The compiled codec parses v2 records in C directly into Arrow buffers (no Python object
per record); legacy magic 0/1 entries go through the record decoder. Control records are left
out unless `include_control`; with `read_committed`, records of aborted transactions are dropped
(see `AbortIndex`). Offset and timestamp filters are half-open: `[start, end)`.

pyarrow is needed only when these functions are called.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from krafka._codec import impl, implementations
from krafka._codec.arrow import (
    INT64_MAX,
    INT64_MIN,
    arrow_schema,
)
from krafka._codec.arrow import (
    KAFKA_COLUMNS as KAFKA_COLUMNS,
)
from krafka._codec.arrow import (
    kafka_rows as kafka_rows,
)
from krafka._codec.arrow import (
    kafka_schema as kafka_schema,
)
from krafka._codec.compression import DEFAULT_MAX_DECOMPRESSED
from krafka._codec.records import parse_control
from krafka._codec.types import BatchHeader, ControlType
from krafka._optional import require
from krafka.errors import CorruptRecordError

Buffer = bytes | bytearray | memoryview
OnCorrupt = Callable[[CorruptRecordError, int, int], None]

DEFAULT_MAX_ROWS = 65_536
FLUSH_BYTES = 256 * 1024 * 1024
PUBLIC_DROP = ("is_control",)


@dataclass(slots=True)
class AbortIndex:
    """Aborted transactions of one partition, as Kafka's `.txnindex` records them.

    A transactional data batch of producer P is aborted when P's next control marker after it is
    ABORT. Transactions with no marker in the data seen are treated as aborted too (they are
    above the last stable offset: a read_committed consumer would not see them yet).
    `ranges[P]` lists (first_offset, last_offset) of P's aborted transactions, in offset order.
    """

    ranges: dict[int, list[tuple[int, int]]] = field(default_factory=dict)
    _open: dict[int, int] = field(default_factory=dict)
    _marked: dict[int, int] = field(default_factory=dict)

    def observe(self, buf: Buffer, header: BatchHeader) -> None:
        """Feed batch headers in offset order (control batches are decoded, nothing else)."""
        if header.magic != 2 or not header.is_transactional:
            return
        pid = header.producer_id if header.producer_id is not None else -1
        if not header.is_control:
            self._open.setdefault(pid, header.base_offset)
            return
        self._marked[pid] = header.base_offset
        start = self._open.pop(pid, None)
        if start is None:
            return
        for record in impl.iter_batch_records(buf, header, True, DEFAULT_MAX_DECOMPRESSED):
            if parse_control(record).type is ControlType.ABORT:
                self.ranges.setdefault(pid, []).append((start, header.base_offset))
            break

    @property
    def open_producers(self) -> frozenset[int]:
        """Producers with transactional data seen and no marker yet (undecided so far)."""
        return frozenset(self._open)

    def close(self) -> AbortIndex:
        """End of the partition: transactions still open count as aborted."""
        for pid, start in self._open.items():
            self.ranges.setdefault(pid, []).append((start, INT64_MAX))
        self._open.clear()
        return self

    def settle(self, listed: Iterable[tuple[int, int]]) -> AbortIndex:
        """End of a live read_committed read below the last stable offset, where every
        transaction is decided: one whose marker lies past it (another transaction opened
        before the marker was written) is aborted only if the broker listed it in its Fetch
        answers (`(producer_id, first_offset)` pairs: Java's rule), else committed. A broker
        that lists nothing (Tansu) leaves such a transaction committed, as Java would."""
        aborted = set(listed)
        for pid, start in self._open.items():
            after = self._marked.get(pid, -1)
            if any(p == pid and after < first <= start for p, first in aborted):
                self.ranges.setdefault(pid, []).append((start, INT64_MAX))
        self._open.clear()
        return self

    def is_aborted(self, header: BatchHeader) -> bool:
        if header.magic != 2 or not header.is_transactional or header.is_control:
            return False
        spans = self.ranges.get(header.producer_id if header.producer_id is not None else -1)
        return bool(spans) and any(a <= header.base_offset <= b for a, b in spans or ())

    @classmethod
    def of(cls, buf: Buffer, headers: Iterable[BatchHeader] | None = None) -> AbortIndex:
        index = cls()
        for header in scan_headers(buf) if headers is None else headers:
            index.observe(buf, header)
        return index.close()


def scan_headers(buf: Buffer, on_corrupt: OnCorrupt | None = None) -> list[BatchHeader]:
    """Every complete batch header; a framing error stops the walk there in permissive mode."""
    try:
        return list(impl.scan_batches(buf))
    except CorruptRecordError as exc:
        if on_corrupt is None or exc.offset is None:
            raise
        good = list(impl.scan_batches(memoryview(buf)[: exc.offset]))
        on_corrupt(exc, exc.offset, len(buf) - exc.offset)
        return good


@dataclass(frozen=True, slots=True)
class Window:
    """Row filters, half-open: offsets in [start_offset, end_offset), timestamps likewise (ms)."""

    start_offset: int | None = None
    end_offset: int | None = None
    start_timestamp: int | None = None
    end_timestamp: int | None = None

    def skips(self, header: BatchHeader) -> bool:
        """Whether the whole batch lies outside the offset range (cheap pruning)."""
        if self.end_offset is not None and header.base_offset >= self.end_offset:
            return True
        return self.start_offset is not None and header.last_offset < self.start_offset


def sink_type(implementation: str | None = None) -> Any:
    """The ArrowSink class of the named codec implementation (default: the best one here)."""
    from krafka._codec import arrow

    name = implementation or impl.name
    if name == "pure":
        return arrow.ArrowSink
    if name not in implementations():
        raise ValueError(f"codec implementation {name!r} is not available")
    try:
        from krafka._codec import _arrow  # type: ignore[attr-defined]
    except ImportError:
        if implementation is not None:
            raise
        return arrow.ArrowSink  # the extension did not build: the pure twin takes over
    return _arrow.ArrowSink


def _codec_of(implementation: str | None) -> ModuleType:
    if implementation is None:
        return impl
    found = implementations().get(implementation)
    if found is None:
        raise ValueError(f"codec implementation {implementation!r} is not available")
    return found


def iter_arrow_batches(
    buf: Buffer,
    *,
    topic: str | None = None,
    partition: int | None = None,
    include_control: bool = False,
    read_committed: bool = False,
    aborted: AbortIndex | None = None,
    window: Window = Window(),
    check_crc: bool = True,
    max_decompressed_size: int = DEFAULT_MAX_DECOMPRESSED,
    timestamp_unit: str = "ms",
    max_rows: int = DEFAULT_MAX_ROWS,
    on_corrupt: OnCorrupt | None = None,
    implementation: str | None = None,
) -> Iterator[Any]:
    """Yield wide-schema `pyarrow.RecordBatch`es of at most about `max_rows` rows.

    `aborted` (an `AbortIndex` built over the whole partition) overrides the index built from
    `buf` alone. With `on_corrupt`, a bad batch is reported as (error, byte offset, bytes
    skipped) and skipped instead of raised.
    """
    sink = new_sink(implementation, topic, partition, timestamp_unit, window)
    options = Options(include_control, read_committed, aborted, window, check_crc,
                      max_decompressed_size, on_corrupt, implementation)  # fmt: skip
    yield from decode_into(sink, buf, options, max_rows)
    if sink.rows:
        yield sink.finish()


@dataclass(frozen=True, slots=True)
class Options:
    """What `decode_into` keeps, and how strictly it checks."""

    include_control: bool = False
    read_committed: bool = False
    aborted: AbortIndex | None = None
    window: Window = Window()
    check_crc: bool = True
    max_decompressed_size: int = DEFAULT_MAX_DECOMPRESSED
    on_corrupt: OnCorrupt | None = None
    implementation: str | None = None


def wide_rows(sink: Any) -> Any:
    """A sink's rows in the wide schema (`arrow_schema`)."""
    return sink.finish()


def decode_into(
    sink: Any,
    buf: Buffer,
    options: Options,
    max_rows: int = DEFAULT_MAX_ROWS,
    finish: Callable[[Any], Any] = wide_rows,
) -> Iterator[Any]:
    """Add the rows of every batch of `buf` to `sink`, yielding `finish(sink)` (a chunk)
    whenever it is full.

    Rows left in the sink at the end stay there (the caller finishes it), so rows of several
    buffers can share chunks.
    """
    headers = scan_headers(buf, options.on_corrupt)
    aborted = options.aborted
    if options.read_committed and aborted is None:
        aborted = AbortIndex.of(buf, headers)
    codec = _codec_of(options.implementation)
    check, cap = options.check_crc, options.max_decompressed_size
    for header in headers:
        if _excluded(header, options.include_control,
                     aborted if options.read_committed else None, options.window):  # fmt: skip
            continue
        try:
            if header.magic == 2:
                sink.add_v2(buf, header, check, cap)
            else:
                sink.add_legacy(codec.decode_entry(buf, header, check, cap))
        except CorruptRecordError as exc:
            if options.on_corrupt is None:
                raise
            options.on_corrupt(exc, header.byte_offset, header.byte_length)
        if sink.rows >= max_rows or sink.nbytes >= FLUSH_BYTES:
            yield finish(sink)


def new_sink(
    implementation: str | None,
    topic: str | None,
    partition: int | None,
    unit: str,
    window: Window,
) -> Any:
    require("pyarrow", "decoding to Arrow")
    return sink_type(implementation)(
        topic,
        partition,
        unit,
        INT64_MIN if window.start_offset is None else window.start_offset,
        INT64_MAX if window.end_offset is None else window.end_offset,
        window.start_timestamp,
        window.end_timestamp,
    )


def _excluded(
    header: BatchHeader, include_control: bool, aborted: AbortIndex | None, window: Window
) -> bool:
    if header.is_control and not include_control:
        return True
    if aborted is not None and aborted.is_aborted(header):
        return True
    return window.skips(header)


def decode_to_arrow(
    buf: Buffer,
    *,
    topic: str | None = None,
    partition: int | None = None,
    include_control: bool = False,
    read_committed: bool = False,
    start_offset: int | None = None,
    end_offset: int | None = None,
    start_timestamp: int | None = None,
    end_timestamp: int | None = None,
    check_crc: bool = True,
    max_decompressed_size: int = DEFAULT_MAX_DECOMPRESSED,
    timestamp_unit: str = "ms",
    implementation: str | None = None,
) -> Any:
    """Decode every complete batch of `buf` into one `pyarrow.Table` (one row per record).

    Columns: topic, partition (null unless given), offset, timestamp (`timestamp_unit`, UTC),
    timestamp_type ("CreateTime"/"LogAppendTime", null for magic 0), key, value, headers
    (list of {key, value}), producer_id (null for magic 0/1), is_transactional, and is_control
    when `include_control`. A truncated trailing batch is ignored; anything malformed raises
    `CorruptRecordError`.
    """
    pa = require("pyarrow", "decode_to_arrow")
    batches = list(
        iter_arrow_batches(
            buf,
            topic=topic,
            partition=partition,
            include_control=include_control,
            read_committed=read_committed,
            window=Window(start_offset, end_offset, start_timestamp, end_timestamp),
            check_crc=check_crc,
            max_decompressed_size=max_decompressed_size,
            timestamp_unit=timestamp_unit,
            implementation=implementation,
        )
    )
    table = pa.Table.from_batches(batches, schema=arrow_schema(timestamp_unit))
    return table if include_control else table.drop_columns(list(PUBLIC_DROP))


def live_abort_index(buf: Buffer, listed: Iterable[tuple[int, int]]) -> AbortIndex:
    """The aborted transactions of one fetched buffer under read_committed, below the last
    stable offset: an ABORT marker in the buffer decides its transaction, and one whose marker
    is not in the buffer is aborted only if the broker listed it (`(producer_id,
    first_offset)` pairs: Java's rule)."""
    index = AbortIndex()
    for header in scan_headers(buf):
        index.observe(buf, header)
    return index.settle(listed)


def decode_fetched(
    buf: Buffer,
    *,
    topic: str,
    partition: int,
    start: int,
    end: int,
    aborted: AbortIndex | None = None,
    check_crc: bool = True,
    max_decompressed_size: int = DEFAULT_MAX_DECOMPRESSED,
    timestamp_unit: str = "us",
    max_rows: int = DEFAULT_MAX_ROWS,
    finish: Callable[[Any], Any] = wide_rows,
) -> Iterator[Any]:
    """Wide chunks (or what `finish` makes of a full sink) of the records of one partition's
    fetched batches with offsets in [start, end) (batches come whole: the first may begin
    before the fetch position), control records left out and, when `aborted` is given,
    read_committed filtering by it."""
    window = Window(start, end)
    sink = new_sink(None, topic, partition, timestamp_unit, window)
    options = Options(read_committed=aborted is not None, aborted=aborted, window=window,
                      check_crc=check_crc, max_decompressed_size=max_decompressed_size)  # fmt: skip
    yield from decode_into(sink, buf, options, max_rows, finish)
    if sink.rows:
        yield finish(sink)


def spark_rows(sink: Any) -> Any:
    """A sink's rows in Spark's Kafka source columns with headers (`kafka_schema()`), made by
    the sink itself: `kafka_rows` of its wide rows, without the wide columns in between."""
    return sink.finish_kafka(True)
