"""Round trips, byte-exact re-encoding, and an independent decoder (kafka-python) for our bytes."""

from __future__ import annotations

from types import ModuleType
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from krafka._codec import implementations
from krafka._codec.types import Compression
from krafka.errors import CorruptRecordError
from tests._codec.helpers import record_tuple
from tests._codec.strategies import batch_options, build, record_fields


def encode(codec: ModuleType, records: list[Any], opts: dict[str, Any]) -> bytes:
    return bytes(
        codec.encode_batch(
            records, opts["compression"], opts["base_offset"], opts["producer_id"],
            opts["producer_epoch"], opts["base_sequence"], opts["transactional"],
        )
    )  # fmt: skip


@settings(max_examples=60, deadline=None)
@given(fields=st.lists(record_fields, min_size=1, max_size=20), opts=batch_options)
def test_encode_decode_encode_is_byte_identical(
    codec: ModuleType, fields: list[dict[str, Any]], opts: dict[str, Any]
):
    records = build(codec, fields)
    blob = encode(codec, records, opts)
    (batch,) = codec.decode_batches(blob)
    assert batch.compression is opts["compression"]
    assert batch.producer_id == opts["producer_id"]
    assert batch.is_transactional == opts["transactional"]
    assert [record_tuple(r)[1:] for r in batch.records] == [
        (f["timestamp"], f["key"], f["value"], [tuple(h) for h in f["headers"]]) for f in fields
    ]
    assert [r.offset for r in batch.records] == [
        opts["base_offset"] + i for i in range(len(fields))
    ]
    assert encode(codec, batch.records, opts) == blob


@pytest.mark.parametrize("compression", list(Compression))
def test_kafka_python_decodes_what_we_encode(codec: ModuleType, compression: Compression):
    from kafka.record.default_records import DefaultRecordBatch

    records = [
        codec.Record(
            key=None if i % 7 == 0 else b"key-%d" % i,
            value=None if i % 11 == 0 else bytes([i % 251]) * (i * 13 % 400),
            headers=[("h", b"v%d" % i), ("null", None)] if i % 3 else [],
            timestamp=1_700_000_000_000 + i * 17,
        )
        for i in range(150)
    ]
    blob = codec.encode_batch(records, compression, 42, 7, 3, 11, True)
    batch = DefaultRecordBatch(bytearray(blob))
    assert batch.validate_crc(), "kafka-python computes a different CRC32C"
    assert batch.compression_type == compression.code
    assert (batch.producer_id, batch.producer_epoch, batch.base_sequence) == (7, 3, 11)
    assert batch.is_transactional
    decoded = list(batch)
    assert [(r.offset, r.timestamp, r.key, r.value, list(r.headers)) for r in decoded] == [
        (42 + i, rec.timestamp, rec.key, rec.value, list(rec.headers))
        for i, rec in enumerate(records)
    ]


def test_default_timestamp_is_now(codec: ModuleType):
    blob = codec.encode_batch([codec.Record(value=b"x")], "none", 0, -1, -1, -1, False, False,
                              0, -1, None, 1234)  # fmt: skip
    (batch,) = codec.decode_batches(blob)
    assert batch.records[0].timestamp == 1234


def test_control_flag_and_leader_epoch(codec: ModuleType):
    rec = codec.Record(key=b"\x00\x00\x00\x01", value=b"\x00\x00\x00\x00\x00\x05", timestamp=9)
    blob = codec.encode_batch([rec], "none", 5, 3, 0, -1, True, True, 0, 17)
    (batch,) = codec.decode_batches(blob)
    assert batch.is_control and batch.is_transactional and batch.partition_leader_epoch == 17


def test_empty_batch_is_refused(codec: ModuleType):
    with pytest.raises(ValueError):
        codec.encode_batch([], "none", 0, -1, -1, -1, False)


def test_lazy_record_iteration(codec: ModuleType):
    records = [codec.Record(key=b"%d" % i, value=b"v", timestamp=i) for i in range(10)]
    blob = bytearray(codec.encode_batch(records, "none", 100, -1, -1, -1, False))
    (header,) = list(codec.scan_batches(bytes(blob)))
    it = codec.iter_batch_records(bytes(blob), header)
    assert next(it).offset == 100
    assert [r.key for r in it] == [b"%d" % i for i in range(1, 10)]
    # a record damaged in the middle: earlier records still come out one by one
    i = blob.index(b"\x026")  # key length 1, key "6"
    blob[i] = 0x7E  # key length 63: past the record's end
    it = codec.iter_batch_records(bytes(blob), header, check_crc=False)
    assert [next(it).key for _ in range(6)] == [b"%d" % i for i in range(6)]
    with pytest.raises(CorruptRecordError):
        next(it)


@settings(max_examples=40, deadline=None)
@given(fields=st.lists(record_fields, min_size=1, max_size=12), opts=batch_options, data=st.data())
def test_record_tuples_encode_as_records(
    codec: ModuleType, fields: list[dict[str, Any]], opts: dict[str, Any], data: st.DataObject
):
    as_tuple = data.draw(st.lists(st.booleans(), min_size=len(fields), max_size=len(fields)))
    mixed = [
        (f["key"], f["value"], f["headers"], f["timestamp"]) if t else codec.Record(**f)
        for f, t in zip(fields, as_tuple, strict=True)
    ]
    assert encode(codec, mixed, opts) == encode(codec, build(codec, fields), opts)
    assert encode(codec, iter(mixed), opts) == encode(codec, build(codec, fields), opts)


def test_record_tuple_defaults_and_conversions(codec: ModuleType):
    def enc(records: list[Any]) -> bytes:
        return bytes(codec.encode_batch(records, "none", 0, -1, -1, -1, False, False, 0, -1,
                                        None, 99))  # fmt: skip

    assert enc([(b"k", None, None, None)]) == enc([codec.Record(0, 99, b"k", None, [])])
    assert enc([(bytearray(b"k"), memoryview(b"v"), (("h", bytearray(b"x")),), 5)]) == enc(
        [codec.Record(0, 5, b"k", b"v", [("h", b"x")])]
    )
    assert enc([(b"k", b"v", [], 5.9)]) == enc([codec.Record(0, 5, b"k", b"v", [])])
    for bad in [(b"k", b"v"), (b"k", b"v", [], 1, 2), ()]:
        with pytest.raises(ValueError, match="record tuple"):
            enc([codec.Record(value=b"ok"), bad])


def test_encoding_leaves_the_callers_list_alone(codec: ModuleType):
    records: list[Any] = [(bytearray(b"k"), b"v", None, 1), codec.Record(value=bytearray(b"x"))]
    before = list(records)
    codec.encode_batch(records, "none", 0, -1, -1, -1, False)
    assert records == before and records[0] is before[0]


def test_records_changed_while_converting_are_read_again():
    """Converting one record may run Python code that changes another one already read."""
    compiled = implementations().get("compiled")
    if compiled is None:
        pytest.skip("extensions not built")
    hdrs = [("h", b"x")]

    class Growing:
        def __bytes__(self) -> bytes:
            hdrs.extend([("more", b"y" * 1000)] * 50)
            return b"v"

    blob = compiled.encode_batch(
        [compiled.Record(0, 1, b"k", b"v", hdrs), (b"k", Growing(), None, 1)]
    )
    (batch,) = compiled.decode_batches(blob)
    assert batch.records[0].headers == hdrs and len(hdrs) == 51
    assert batch.records[1].value == b"v"


@pytest.mark.parametrize("sizes", [range(0, 40), range(1980, 2020), range(4090, 4100)])
def test_checksums_of_small_and_large_batches(codec: ModuleType, sizes: range):
    """Small batches are checksummed inline, larger ones by the crc32c package: both agree
    with kafka-python, and a flipped bit is caught either way."""
    from kafka.record.default_records import DefaultRecordBatch

    for size in sizes:
        blob = bytearray(codec.encode_batch([(b"k", b"\x5a" * size, None, 1)]))
        assert DefaultRecordBatch(bytearray(blob)).validate_crc(), size
        assert codec.decode_batches(bytes(blob))[0].records[0].value == b"\x5a" * size
        blob[-1] ^= 0x10
        with pytest.raises(CorruptRecordError, match="CRC"):
            codec.decode_batches(bytes(blob))


def test_the_codec_reads_no_clock(codec: ModuleType, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 22: wall-clock timestamps are inputs. A record without a timestamp gets the
    caller's `now_ms` (the builder's `default_timestamp`), else Kafka's "no timestamp", -1."""
    import time

    def clock() -> float:
        raise AssertionError("the codec read the clock")

    monkeypatch.setattr(time, "time", clock)
    record = codec.Record(0, None, b"k", b"v", [])
    for now_ms, stamped in ((1_700_000_000_123, 1_700_000_000_123), (None, -1)):
        blob = codec.encode_batch([record], "none", now_ms=now_ms)
        assert codec.decode_batches(blob)[0].records[0].timestamp == stamped
    builder = codec.RecordsBuilder(1_700_000_000_456)
    builder.append(None, b"k", b"v")
    assert builder.records()[0].timestamp == 1_700_000_000_456
    with pytest.raises(TypeError):
        codec.RecordsBuilder()
