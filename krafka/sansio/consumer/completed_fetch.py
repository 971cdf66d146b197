"""One partition's data from one Fetch response, decoded lazily as the application reads it.

Batches are decoded one at a time when records are taken, so a large fetch costs nothing until
read and a corrupt batch only fails when reached. Records below the fetch position (batches
are returned whole) are dropped; under read_committed, batches of aborted transactions are
dropped using the response's aborted-transaction list and the abort markers (Java's rule), and
nothing at or past the last stable offset is returned. Control batches are never returned.
Brokers that do not list aborted transactions (Tansu) are covered by a look-ahead: a
transactional batch whose producer's next marker *in the same fetch* is an ABORT is dropped.
An unreadable marker (bad CRC, bad bytes) makes the outcome of the transactions before it
unknown: records are returned up to the first batch it may decide, then the partition fails
with a `CorruptRecordError` naming the marker's offset, as any corrupt batch does.
"""

from __future__ import annotations

import bisect
import copy
import heapq
import operator
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from krafka._codec import impl
from krafka._codec.compression import DEFAULT_MAX_DECOMPRESSED
from krafka.errors import CorruptRecordError, KrafkaError, RecordDeserializationError
from krafka.sansio.consumer.record import ConsumerRecord, FetchedBatch
from krafka.structs import TopicPartition

Deserializer = Callable[[Any], Any]
_new_record = tuple.__new__
_OFFSET = operator.itemgetter(2)


class CompletedFetch:
    """Records of `partition` from `start` on, as fetched at subscription epoch `epoch`."""

    __slots__ = (
        "_aborted",
        "_aborted_batches",
        "_aborted_pids",
        "_batches",
        "_check_crc",
        "_epoch",
        "_held",
        "_index",
        "_leader_epoch",
        "_max_decompressed_size",
        "_records",
        "aborted_transactions",
        "data",
        "end_offset",
        "epoch",
        "error",
        "exhausted",
        "high_watermark",
        "last_stable_offset",
        "log_start_offset",
        "next_offset",
        "partition",
        "read_committed",
        "record_count",
        "size",
        "start",
        "started",
    )

    def __init__(
        self,
        partition: TopicPartition,
        data: bytes | memoryview,
        *,
        start: int,
        epoch: int,
        high_watermark: int = -1,
        last_stable_offset: int = -1,
        log_start_offset: int = -1,
        aborted_transactions: tuple[tuple[int, int], ...] = (),
        read_committed: bool = False,
        check_crc: bool = True,
        max_decompressed_size: int = DEFAULT_MAX_DECOMPRESSED,
    ) -> None:
        self.partition = partition
        self.start = self.next_offset = start
        self.epoch = epoch
        self.high_watermark = high_watermark
        self.last_stable_offset = last_stable_offset
        self.log_start_offset = log_start_offset
        self.aborted_transactions = aborted_transactions
        self.read_committed = read_committed
        self.error: KrafkaError | None = None
        self.started = False
        self.exhausted = False
        self.end_offset, self.record_count, complete = _scan(data, start)
        self.data = data[:complete] if complete < len(data) else data
        markers = (
            _read_markers(self.data, check_crc, max_decompressed_size)
            if read_committed and complete
            else _NO_MARKERS
        )
        self._aborted_batches = markers.aborted
        self._held = markers
        self.size = len(self.data)
        self._aborted = sorted((first, pid) for pid, first in aborted_transactions)
        self._aborted_pids: set[int] = set()
        self._check_crc = check_crc
        self._max_decompressed_size = max_decompressed_size
        self._batches: Iterator[Any] | None = _headers(self.data) if complete else None
        self._records: list[ConsumerRecord] = []
        self._index = 0
        self._leader_epoch: int | None = None
        if not complete:
            self.exhausted = True

    @property
    def leader_epoch(self) -> int | None:
        return self._leader_epoch

    def raw(self) -> FetchedBatch:
        """All of it undecoded; the position moves past everything it holds."""
        self.started = self.exhausted = True
        self.next_offset = max(self.start, self.end_offset)
        return FetchedBatch(
            self.partition,
            self.data,
            self.start,
            self.next_offset,
            self.high_watermark,
            self.last_stable_offset,
            self.log_start_offset,
            self.aborted_transactions,
        )

    def take(
        self,
        out: list[ConsumerRecord],
        limit: int,
        key_deserializer: Deserializer | None = None,
        value_deserializer: Deserializer | None = None,
    ) -> int:
        """Append up to `limit` records to `out`; how many. Raises the partition's decode or
        deserializer error when it is reached before any record of this call."""
        self.started = True
        if key_deserializer is not None or value_deserializer is not None:
            taken = self._take_deserialized(out, limit, key_deserializer, value_deserializer)
        else:
            taken = self._take_fast(out, limit)
        if taken == 0 and self.error is not None:
            raise _fresh(self.error)
        return taken

    def _take_fast(self, out: list[ConsumerRecord], limit: int) -> int:
        """Slices of the decoded batches' records (no Python work per record)."""
        taken = 0
        lso = self.last_stable_offset if self.read_committed else -1
        while taken < limit:
            if self._index >= len(self._records) and not self._next_batch():
                break
            records, start, n = self._records, self._index, len(self._records)
            if records[start].offset < self.next_offset:
                start = bisect.bisect_left(records, self.next_offset, start, n, key=_OFFSET)
            end = min(n, start + limit - taken)
            stopped = lso >= 0 and start < end and records[end - 1].offset >= lso
            if stopped:
                end = bisect.bisect_left(records, lso, start, end, key=_OFFSET)
            if start < end:
                out += records if end - start == n else records[start:end]
                taken += end - start
                self.next_offset = records[end - 1].offset + 1
            self._index = end
            if stopped:
                self.exhausted = True
                self._batches, self._records, self._index = None, [], 0
                break
        return taken

    def _take_deserialized(
        self,
        out: list[ConsumerRecord],
        limit: int,
        key_deserializer: Deserializer | None,
        value_deserializer: Deserializer | None,
    ) -> int:
        taken = 0
        topic, part = self.partition
        lso = self.last_stable_offset if self.read_committed else -1
        while taken < limit:
            if self._index >= len(self._records) and not self._next_batch():
                break
            rec = self._records[self._index]
            offset = rec.offset
            if offset < self.next_offset:
                self._index += 1
                continue
            if 0 <= lso <= offset:
                self.exhausted = True
                self._batches, self._records, self._index = None, [], 0
                break
            try:
                key, value = deserialize(self.partition, rec, key_deserializer, value_deserializer)
            except RecordDeserializationError as error:
                if taken:
                    break
                raise error from error.__cause__
            out.append(
                _new_record(
                    ConsumerRecord,
                    (topic, part, offset, rec.timestamp, rec.timestamp_type, key, value,
                     rec.headers, rec.leader_epoch),
                )
            )  # fmt: skip
            self._index += 1
            self.next_offset = offset + 1
            taken += 1
        return taken

    def _next_batch(self) -> bool:
        """Load the next batch with records to return; False when none is left."""
        while self._batches is not None and self.error is None:
            try:
                batch, records = self._decode(next(self._batches))
            except StopIteration:
                break
            except CorruptRecordError as exc:
                topic, part = self.partition
                self.error = _located(
                    f"corrupt fetch data for {topic}-{part} after offset {self.next_offset}: "
                    f"{exc} (seek past it to skip it)",
                    exc,
                )
                break
            if self._undecided(batch):
                self.error = self._held.failure(self.partition)
                break
            if self._skip(batch):
                self.next_offset = max(self.next_offset, batch.last_offset + 1)
                continue
            self._records, self._index = records, 0
            epoch = batch.partition_leader_epoch
            self._leader_epoch = epoch if epoch is not None and epoch >= 0 else None
            if records:
                return True
        self.exhausted = True
        self._records, self._index = [], 0
        if self.error is None:
            end = self.end_offset
            if self.read_committed and self.last_stable_offset >= 0:
                end = min(end, self.last_stable_offset)
            self.next_offset = max(self.next_offset, end)
        return False

    def _decode(self, header: Any) -> tuple[Any, list[ConsumerRecord]]:
        """(what decides whether the entry is returned, its records): a data batch's header and
        its records made straight from its bytes; a control batch or a legacy entry decoded
        whole (a marker's record is read, a legacy wrapper's offsets come from its records)."""
        data, crc, cap = self.data, self._check_crc, self._max_decompressed_size
        topic, part = self.partition
        if header.magic == 2 and not header.is_control:
            return header, impl.consumer_records(
                data, header, crc, cap, topic, part, ConsumerRecord
            )
        batch = impl.decode_entry(data, header, crc, cap)
        if batch.is_control:
            return batch, []
        tstype = int(batch.timestamp_type or 0)
        return batch, [
            _new_record(ConsumerRecord,
                        (topic, part, r.offset, r.timestamp, tstype, r.key, r.value,
                         tuple(r.headers), None))
            for r in batch.records
        ]  # fmt: skip

    def _undecided(self, batch: Any) -> bool:
        """A batch from which on the look-ahead cannot tell committed from aborted."""
        held = self._held.hold_from
        if held is None or batch.last_offset < self.next_offset or batch.base_offset < held:
            return False
        lso = self.last_stable_offset
        return lso < 0 or batch.base_offset < lso

    def _skip(self, batch: Any) -> bool:
        if batch.last_offset < self.next_offset:
            return True
        if self.read_committed and batch.producer_id is not None:
            if batch.base_offset in self._aborted_batches:
                return True
            aborted = self._aborted
            while aborted and aborted[0][0] <= batch.last_offset:
                self._aborted_pids.add(heapq.heappop(aborted)[1])
            pid = batch.producer_id
            if batch.is_control:
                if pid in self._aborted_pids and _is_abort_marker(batch):
                    self._aborted_pids.discard(pid)
                return True
            if batch.is_transactional and pid in self._aborted_pids:
                return True
        return bool(batch.is_control)

    @property
    def drained(self) -> bool:
        """Nothing more to return (a corrupt fetch is never drained: it fails until a seek)."""
        return self.exhausted and self._index >= len(self._records) and self.error is None


def deserialize(
    partition: TopicPartition,
    rec: Any,
    key_deserializer: Deserializer | None,
    value_deserializer: Deserializer | None,
    remedy: str = "seek past it to skip it",
) -> tuple[Any, Any]:
    """A record's key and value through the application's deserializers; a failure raises
    `RecordDeserializationError` naming the partition and offset (and what to do about it)."""
    key, value = rec.key, rec.value
    try:
        if key_deserializer is not None and key is not None:
            key = key_deserializer(key)
        if value_deserializer is not None and value is not None:
            value = value_deserializer(value)
    except Exception as exc:
        topic, part = partition
        raise RecordDeserializationError(
            f"cannot deserialize the record at {topic}-{part} offset {rec.offset}: {exc!r}"
            f" ({remedy})",
            topic,
            part,
            rec.offset,
        ) from exc
    return key, value


def _is_abort_marker(batch: Any) -> bool:
    from krafka._codec.records import parse_control
    from krafka._codec.types import ControlType

    records = batch.records
    return bool(records) and parse_control(records[0]).type is ControlType.ABORT


@dataclass(frozen=True, slots=True)
class _Markers:
    """What the look-ahead learned from a fetch's transaction markers.

    `aborted`: base offsets of transactional batches whose producer's next marker here is an
    ABORT. `hold_from`: the first batch whose outcome is unknown because a marker (or the bytes)
    after it cannot be read; `unreadable` is that marker's offset and `cause` why.
    """

    aborted: frozenset[int] = frozenset()
    hold_from: int | None = None
    unreadable: int | None = None
    cause: CorruptRecordError | None = None

    def failure(self, partition: TopicPartition) -> CorruptRecordError:
        topic, part = partition
        where = f"offset {self.unreadable}"
        if self.unreadable is None:
            where = "the end of the readable data"
        return _located(
            f"corrupt fetch data for {topic}-{part} at {where}: a transaction marker is "
            f"unreadable ({self.cause}), so whether the transactional records from offset "
            f"{self.hold_from} on were committed cannot be told (seek past it to skip it)",
            self.cause,
        )


_NO_MARKERS = _Markers()


def _read_markers(
    data: bytes | memoryview, check_crc: bool, max_decompressed_size: int
) -> _Markers:
    """Read the markers of a fetch backwards: each transactional batch's fate is its
    producer's next marker; a batch whose next marker may be one that cannot be read is held."""
    from krafka._codec.records import parse_control
    from krafka._codec.types import ControlType

    headers: list[Any] = []
    unreadable: int | None = None
    cause: CorruptRecordError | None = None
    try:
        headers.extend(impl.scan_batches(data))
    except CorruptRecordError as exc:
        cause = exc
    aborted: set[int] = set()
    next_marker: dict[int, bool] = {}
    hold_from: int | None = None
    for header in reversed(headers):
        attributes, pid = header.attributes, header.producer_id
        if pid is None or not attributes & 0x10:
            continue
        if attributes & 0x20:
            try:
                records = list(
                    impl.iter_batch_records(data, header, check_crc, max_decompressed_size)
                )
            except CorruptRecordError as exc:
                unreadable, cause = header.base_offset, exc
                next_marker.clear()
                continue
            if records:
                next_marker[pid] = parse_control(records[0]).type is ControlType.ABORT
        elif pid in next_marker:
            if next_marker[pid]:
                aborted.add(header.base_offset)
        elif cause is not None:
            hold_from = header.base_offset
    if cause is None:
        return _Markers(frozenset(aborted))
    return _Markers(frozenset(aborted), hold_from, unreadable, cause)


def _fresh(error: KrafkaError) -> KrafkaError:
    """A copy of a stored error to raise: raising the one object poll after poll would grow
    its traceback each time."""
    raised = copy.copy(error)
    raised.__cause__ = error.__cause__
    return raised


def _located(message: str, cause: CorruptRecordError | None) -> CorruptRecordError:
    """A `CorruptRecordError` with `message` and the byte offset `cause` found it at (the
    message already says where)."""
    error = CorruptRecordError(message)
    error.offset = None if cause is None else cause.offset
    return error


def _headers(data: bytes | memoryview) -> Iterator[Any]:
    """The batch headers of `data`, read when the first is asked for (a corrupt fetch fails
    when it is reached, as a corrupt batch does)."""
    yield from impl.scan_batches(data)


def _scan(data: bytes | memoryview, start: int) -> tuple[int, int, int]:
    """(offset after the last complete batch, records in them, bytes of complete batches)."""
    end, count, complete = start, 0, 0
    try:
        for header in impl.scan_batches(data):
            last = header.base_offset + (header.last_offset_delta or 0)
            end = max(end, last + 1)
            count += header.record_count or 1
            complete = header.byte_offset + header.byte_length
    except CorruptRecordError:
        complete = complete or len(data)
    return end, count, complete


__all__ = ["CompletedFetch", "Deserializer", "deserialize"]
