"""Record batch v2 (magic 2): encode and decode (pure-Python reference).

Layout (KIP-98): baseOffset int64 | batchLength int32 | partitionLeaderEpoch int32 | magic int8 |
crc uint32 | attributes int16 | lastOffsetDelta int32 | baseTimestamp int64 | maxTimestamp int64 |
producerId int64 | producerEpoch int16 | baseSequence int32 | recordCount int32 | records.
The CRC32C covers everything from `attributes` to the end. Each record is varint-framed:
length | attributes int8 | timestampDelta varlong | offsetDelta varint | key | value | headers.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Iterator
from typing import Any, cast

from krafka._codec import compression as _compression
from krafka._codec.crc import crc32c
from krafka._codec.types import (
    BatchHeader,
    Compression,
    ControlRecord,
    ControlType,
    Record,
    RecordBatch,
    RecordLike,
    RecordTuple,
    TimestampType,
)
from krafka._codec.varint import (
    decode_varint,
    decode_varlong,
    encode_varint,
    encode_varlong,
)
from krafka.errors import CorruptRecordError

Buffer = bytes | bytearray | memoryview

HEADER = struct.Struct(">qiibIhiqqqhii")
HEADER_SIZE = HEADER.size  # 61
CRC_START = 21  # attributes start here; the CRC covers [21, end)
MIN_RECORD_SIZE = 7
#: Kafka's timestamp of a record that has none.
NO_TIMESTAMP = -1
_INT64_MIN, _INT64_SPAN = -(2**63), 2**64
_INT32_MIN, _INT32_SPAN = -(2**31), 2**32


def _wrap64(v: int) -> int:
    return (v - _INT64_MIN) % _INT64_SPAN + _INT64_MIN


def _wrap32(v: int) -> int:
    return (v - _INT32_MIN) % _INT32_SPAN + _INT32_MIN


def read_header(buf: Buffer, pos: int) -> BatchHeader:
    """The v2 header at `pos` (the caller checked that the whole batch is in `buf`)."""
    (
        base_offset,
        batch_length,
        leader_epoch,
        magic,
        crc,
        attributes,
        last_offset_delta,
        first_ts,
        max_ts,
        producer_id,
        producer_epoch,
        base_sequence,
        count,
    ) = HEADER.unpack_from(buf, pos)
    return BatchHeader(
        byte_offset=pos,
        byte_length=batch_length + 12,
        base_offset=base_offset,
        magic=magic,
        crc=crc,
        attributes=attributes & 0xFFFF,
        last_offset_delta=last_offset_delta,
        first_timestamp=first_ts,
        max_timestamp=max_ts,
        producer_id=producer_id,
        producer_epoch=producer_epoch,
        base_sequence=base_sequence,
        record_count=count,
        partition_leader_epoch=leader_epoch,
    )


def decode_batch(
    buf: Buffer,
    header: BatchHeader,
    check_crc: bool = True,
    max_decompressed_size: int = _compression.DEFAULT_MAX_DECOMPRESSED,
) -> RecordBatch:
    """Decode the whole v2 batch described by `header`."""
    records = list(iter_records(buf, header, check_crc, max_decompressed_size))
    return make_batch(header, records)


def make_batch(header: BatchHeader, records: list[Record]) -> RecordBatch:
    return RecordBatch(
        base_offset=header.base_offset,
        magic=2,
        crc=header.crc,
        compression=_codec_of(header),
        timestamp_type=TimestampType((header.attributes >> 3) & 1),
        is_transactional=bool(header.attributes & 0x10),
        is_control=bool(header.attributes & 0x20),
        partition_leader_epoch=header.partition_leader_epoch,
        producer_id=header.producer_id,
        producer_epoch=header.producer_epoch,
        base_sequence=header.base_sequence,
        records=records,
        attributes=header.attributes,
        batch_length=header.byte_length - 12,
        last_offset_delta=header.last_offset_delta,
        first_timestamp=header.first_timestamp,
        max_timestamp=header.max_timestamp,
    )


def _codec_of(header: BatchHeader) -> Compression:
    code = header.attributes & 0x07
    if code > 4:
        raise CorruptRecordError(f"unknown compression codec {code}", header.byte_offset)
    return Compression.from_code(code)


def iter_records(
    buf: Buffer,
    header: BatchHeader,
    check_crc: bool = True,
    max_decompressed_size: int = _compression.DEFAULT_MAX_DECOMPRESSED,
) -> Iterator[Record]:
    """Lazily decode the records of one v2 batch (checks happen before the first record)."""
    start = header.byte_offset
    end = start + header.byte_length
    view = memoryview(buf)[start:end]
    codec = _codec_of(header)
    if check_crc:
        actual = crc32c(view[CRC_START:])
        if actual != header.crc:
            raise CorruptRecordError(
                f"record batch CRC mismatch: stored {header.crc:#010x}, computed {actual:#010x}",
                start,
            )
    count = header.record_count or 0
    if count < 0:
        raise CorruptRecordError(f"negative record count {count}", start)
    body: Buffer = view[HEADER_SIZE:]
    if codec is not Compression.NONE:
        body = _compression.decompress(codec, body, max_decompressed_size)
    if count > len(body) // MIN_RECORD_SIZE:
        raise CorruptRecordError(f"record count {count} exceeds what {len(body)} bytes hold", start)
    return _records(body, header, count, start)


def _records(body: Buffer, header: BatchHeader, count: int, where: int) -> Iterator[Record]:
    base_offset = header.base_offset
    base_ts = header.first_timestamp or 0
    append_ts = header.max_timestamp if header.attributes & 0x08 else None  # LogAppendTime
    pos = 0
    n = len(body)
    for i in range(count):
        try:
            record, pos = _decode_record(body, pos, n, base_offset, base_ts, append_ts)
        except CorruptRecordError as exc:
            msg = f"record {i} of batch at offset {base_offset}: {exc}"
            raise CorruptRecordError(msg, where) from None
        yield record
    if pos != n:
        raise CorruptRecordError(
            f"{n - pos} bytes left after {count} records of batch at offset {base_offset}", where
        )


def _decode_record(
    body: Buffer, pos: int, n: int, base_offset: int, base_ts: int, append_ts: int | None
) -> tuple[Record, int]:
    length, pos = decode_varint(body, pos)
    if length < MIN_RECORD_SIZE - 1 or pos + length > n:
        raise CorruptRecordError(f"record length {length} invalid for {n - pos} remaining bytes")
    end = pos + length
    pos += 1  # record attributes: unused
    ts_delta, pos = decode_varlong(body, pos)
    offset_delta, pos = decode_varint(body, pos)
    key, pos = _read_bytes(body, pos, end, "key")
    value, pos = _read_bytes(body, pos, end, "value")
    header_count, pos = decode_varint(body, pos)
    if header_count < 0 or header_count > (end - pos) // 2:
        raise CorruptRecordError(f"invalid header count {header_count}")
    headers = []
    for _ in range(header_count):
        hkey_len, pos = decode_varint(body, pos)
        if hkey_len < 0 or pos + hkey_len > end:
            raise CorruptRecordError(f"invalid header key length {hkey_len}")
        try:
            hkey = bytes(body[pos : pos + hkey_len]).decode("utf-8")
        except UnicodeDecodeError:
            raise CorruptRecordError("header key is not valid UTF-8") from None
        pos += hkey_len
        hval, pos = _read_bytes(body, pos, end, "header value")
        headers.append((hkey, hval))
    if pos != end:
        raise CorruptRecordError(f"record length {length} does not match its fields")
    offset = _wrap64(base_offset + offset_delta)
    ts = _wrap64(base_ts + ts_delta) if append_ts is None else append_ts
    return Record(offset, ts, key, value, headers), pos


def _read_bytes(body: Buffer, pos: int, end: int, what: str) -> tuple[bytes | None, int]:
    length, pos = decode_varint(body, pos)
    if length == -1:
        return None, pos
    if length < 0 or pos + length > end:
        raise CorruptRecordError(f"invalid {what} length {length}")
    return bytes(body[pos : pos + length]), pos + length


def parse_control(record: Record) -> ControlRecord:
    """Parse a control record (transaction marker) of a control batch."""
    key, value = record.key, record.value
    if key is None or len(key) < 4:
        raise CorruptRecordError(f"control record at offset {record.offset} has a short key")
    version, kind = struct.unpack_from(">hh", key)
    if kind not in (0, 1):
        raise CorruptRecordError(f"unknown control record type {kind} at offset {record.offset}")
    epoch = 0
    if value is not None and len(value) >= 6:
        epoch = struct.unpack_from(">hi", value)[1]
    return ControlRecord(version, ControlType(kind), epoch)


def encode_record(out: bytearray, offset_delta: int, ts_delta: int, rec: RecordLike) -> None:
    """Append one varint-framed record to `out`."""
    body = bytearray(b"\x00")
    body += encode_varlong(ts_delta)
    body += encode_varint(offset_delta)
    _write_bytes(body, rec.key)
    _write_bytes(body, rec.value)
    headers = rec.headers or ()
    body += encode_varint(len(headers))
    for hkey, hval in headers:
        raw = hkey.encode("utf-8")
        body += encode_varint(len(raw))
        body += raw
        _write_bytes(body, hval)
    out += encode_varint(len(body))
    out += body


def _write_bytes(out: bytearray, data: bytes | None) -> None:
    if data is None:
        out += b"\x01"  # zigzag(-1)
    else:
        out += encode_varint(len(data))
        out += data


def record_from_tuple(rec: RecordTuple) -> Record:
    """A `(key, value, headers, timestamp)` tuple as the Record `encode_batch` writes for it."""
    if len(rec) != 4:
        msg = f"a record tuple is (key, value, headers, timestamp), got {len(rec)} items"
        raise ValueError(msg)
    key, value, headers, timestamp = rec
    return Record(0, None if timestamp is None else int(timestamp), key, value, headers or ())


def _record_like(rec: RecordLike | RecordTuple) -> RecordLike:
    """Exact tuples are record tuples; anything else (a NamedTuple too) is read by attribute."""
    if type(rec) is tuple:
        return record_from_tuple(rec)
    return cast(RecordLike, rec)


class RecordsBuilder:
    """The records of one v2 batch, encoded as they are appended (Java's
    `MemoryRecordsBuilder`): a producer keeps bytes, not record objects, until it sends the
    batch, and `build` frames them (header, compression, CRC).

    Records without a timestamp get `default_timestamp` (the caller's wall clock: the codec
    reads no clock); deltas are taken from the first record's timestamp, offset deltas are
    positions, as `encode_batch` writes them.
    """

    __slots__ = ("_body", "count", "default_timestamp", "first_timestamp", "max_timestamp")

    def __init__(self, default_timestamp: int) -> None:
        self.default_timestamp = int(default_timestamp)
        self._body = bytearray()
        self.count = 0
        self.first_timestamp = -1
        self.max_timestamp = -1

    @property
    def size(self) -> int:
        """Bytes of the records written so far (the batch header not counted)."""
        return len(self._body)

    def append(
        self,
        timestamp: int | None,
        key: Buffer | None,
        value: Buffer | None,
        headers: Iterable[tuple[str, Buffer | None]] | None = None,
    ) -> None:
        """Write one more record."""
        ts = self.default_timestamp if timestamp is None else int(timestamp)
        hdrs = [(str(k), _blob(v)) for k, v in headers or ()]
        record = Record(0, ts, _blob(key), _blob(value), hdrs)
        if self.count == 0:
            self.first_timestamp = self.max_timestamp = ts
        elif ts > self.max_timestamp:
            self.max_timestamp = ts
        encode_record(self._body, self.count, ts - self.first_timestamp, record)
        self.count += 1

    def build(
        self,
        compression: str | Compression = Compression.NONE,
        *,
        base_offset: int = 0,
        producer_id: int = -1,
        producer_epoch: int = -1,
        base_sequence: int = -1,
        transactional: bool = False,
        control: bool = False,
        timestamp_type: TimestampType = TimestampType.CREATE_TIME,
        partition_leader_epoch: int = -1,
        compression_level: int | None = None,
    ) -> bytes:
        """The record batch: header, (compressed) records, CRC32C."""
        if not self.count:
            raise ValueError("a record batch needs at least one record")
        codec = Compression.parse(compression)
        with memoryview(self._body) as body:
            payload = _compression.compress(codec, body, compression_level)
        attributes = codec.code | (int(timestamp_type) << 3)
        attributes |= 0x10 if transactional else 0
        attributes |= 0x20 if control else 0
        out = bytearray(HEADER_SIZE)
        HEADER.pack_into(
            out, 0, base_offset, HEADER_SIZE - 12 + len(payload), partition_leader_epoch, 2, 0,
            attributes, self.count - 1, self.first_timestamp, self.max_timestamp, producer_id,
            producer_epoch, base_sequence, self.count,
        )  # fmt: skip
        out += payload
        struct.pack_into(">I", out, 17, crc32c(memoryview(out)[CRC_START:]))
        return bytes(out)

    def seal(self, compression: str | Compression = Compression.NONE, **options: Any) -> bytes:
        """The batch `build` makes (`build`'s options), as a producer sends it. The compiled
        twin writes an uncompressed one in place and returns a view of its own buffer."""
        return self.build(compression, **options)

    def records(self) -> list[Record]:
        """The records written so far, decoded again (timestamps filled in)."""
        if not self.count:
            return []
        batch = self.build()
        return list(iter_records(batch, read_header(batch, 0), check_crc=False))


def _blob(data: Buffer | None) -> bytes | None:
    return data if data is None or type(data) is bytes else bytes(data)


def encode_batch(
    records: Iterable[RecordLike | RecordTuple],
    compression: str | Compression = Compression.NONE,
    base_offset: int = 0,
    producer_id: int = -1,
    producer_epoch: int = -1,
    base_sequence: int = -1,
    transactional: bool = False,
    control: bool = False,
    timestamp_type: TimestampType = TimestampType.CREATE_TIME,
    partition_leader_epoch: int = -1,
    compression_level: int | None = None,
    now_ms: int | None = None,
) -> bytes:
    """Encode one v2 record batch with its CRC32C filled in.

    `records` are Records (or any object with their fields) and/or `(key, value, headers,
    timestamp)` tuples. Records without a timestamp get `now_ms` (None: `NO_TIMESTAMP`, -1).
    Offset deltas are the records' positions in the batch.
    """
    builder = RecordsBuilder(NO_TIMESTAMP if now_ms is None else now_ms)
    for rec in map(_record_like, records):
        builder.append(rec.timestamp, rec.key, rec.value, rec.headers)
    return builder.build(
        compression, base_offset=base_offset, producer_id=producer_id,
        producer_epoch=producer_epoch, base_sequence=base_sequence, transactional=transactional,
        control=control, timestamp_type=timestamp_type,
        partition_leader_epoch=partition_leader_epoch, compression_level=compression_level,
    )  # fmt: skip
