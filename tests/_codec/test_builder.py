"""`RecordsBuilder`: records written as they are appended frame the very batch `encode_batch`
writes for the same records, in both implementations."""

from __future__ import annotations

from types import ModuleType
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from krafka._codec import implementations
from krafka._codec.types import Compression
from tests._codec.strategies import batch_options, record_fields

#: Records to append: a timestamp of their own only when they have a key.
appended_fields = st.lists(
    record_fields.map(lambda f: {**f, "timestamp": f["timestamp"] if f["key"] else None}),
    min_size=1,
    max_size=20,
)


def built(codec: ModuleType, fields: list[dict[str, Any]], default: int, opts: dict[str, Any]):
    builder = codec.RecordsBuilder(default)
    for f in fields:
        builder.append(f["timestamp"], f["key"], f["value"], f["headers"])
    return builder, builder.build(
        opts["compression"], base_offset=opts["base_offset"], producer_id=opts["producer_id"],
        producer_epoch=opts["producer_epoch"], base_sequence=opts["base_sequence"],
        transactional=opts["transactional"],
    )  # fmt: skip


@settings(max_examples=60, deadline=None)
@given(fields=appended_fields, opts=batch_options)
def test_appended_records_build_the_batch_encode_batch_writes(
    codec: ModuleType, fields: list[dict[str, Any]], opts: dict[str, Any]
) -> None:
    builder, batch = built(codec, fields, 1_700_000_000_000, opts)
    tuples = [(f["key"], f["value"], f["headers"], f["timestamp"]) for f in fields]
    assert batch == codec.encode_batch(
        tuples, opts["compression"], opts["base_offset"], opts["producer_id"],
        opts["producer_epoch"], opts["base_sequence"], opts["transactional"],
        now_ms=1_700_000_000_000,
    )  # fmt: skip
    stamps = [1_700_000_000_000 if f["timestamp"] is None else f["timestamp"] for f in fields]
    assert builder.count == len(fields)
    assert (builder.first_timestamp, builder.max_timestamp) == (stamps[0], max(stamps))
    decoded = builder.records()
    assert [(r.offset, r.timestamp, r.key, r.value) for r in decoded] == [
        (i, ts, f["key"], f["value"]) for i, (ts, f) in enumerate(zip(stamps, fields, strict=True))
    ]
    assert [list(r.headers) for r in decoded] == [list(f["headers"]) for f in fields]


def test_buffers_and_header_sequences_are_converted_as_encode_batch_does(
    codec: ModuleType,
) -> None:
    builder = codec.RecordsBuilder(5)
    builder.append(None, bytearray(b"k"), memoryview(b"v"), (("h", bytearray(b"1")),))
    builder.append(7, None, None, [])
    expected = codec.encode_batch([(b"k", b"v", [("h", b"1")], None), (None, None, None, 7)],
                                  now_ms=5)  # fmt: skip
    assert builder.build() == expected
    assert builder.size == len(expected) - 61


def test_a_builder_grows_past_its_first_buffer_and_keeps_every_byte(codec: ModuleType) -> None:
    builder = codec.RecordsBuilder(0)
    values = [bytes([i % 251]) * (i * 37 % 3000) for i in range(200)]
    for value in values:
        builder.append(None, None, value)
    assert [r.value for r in builder.records()] == values
    assert builder.build(Compression.ZSTD) != builder.build()  # compressed, same records
    assert builder.records()[-1].offset == 199


def test_an_empty_builder_has_no_batch_and_no_records(codec: ModuleType) -> None:
    builder = codec.RecordsBuilder(1_700_000_000_000)
    assert builder.count == 0 and builder.size == 0 and builder.records() == []
    with pytest.raises(ValueError, match="at least one record"):
        builder.build()


@pytest.mark.parametrize("compression", list(Compression))
def test_every_implementation_builds_the_same_batch_of_a_megabyte_for_every_codec(
    compression: Compression,
) -> None:
    """Compression reads the builder's own buffer (not a copy of it): several lz4 blocks and
    zstd windows' worth of records come out identical from every implementation, and the
    builder stays usable afterwards."""
    values = [bytes([i % 7]) * 1000 + i.to_bytes(4, "big") for i in range(1000)]
    batches = {}
    impls = implementations()
    for name, codec in sorted(impls.items()):
        builder = codec.RecordsBuilder(1_700_000_000_000)
        for value in values:
            builder.append(None, None, value)
        batches[name] = builder.build(compression, compression_level=None)
        assert builder.build(compression) == batches[name]
        builder.append(None, None, b"more")
        assert builder.count == len(values) + 1
    assert len(set(batches.values())) == 1
    (batch,) = impls["pure"].decode_batches(next(iter(batches.values())))
    assert [r.value for r in batch.records] == values


@pytest.mark.skipif("compiled" not in implementations(), reason="extensions not built")
def test_large_buffers_are_recycled_within_a_bound_and_never_leak_old_records() -> None:
    """A builder growing large takes a buffer a dead one left (no fresh pages per batch); what
    that buffer held before never shows in the new batch."""
    compiled = implementations()["compiled"]
    from krafka._codec import _builder

    for round_ in range(12):
        builder = compiled.RecordsBuilder(0)
        values = [bytes([round_]) * (300 + 97 * round_) for _ in range(700 - 50 * round_)]
        for value in values:
            builder.append(None, None, value)
        (batch,) = compiled.decode_batches(builder.build(Compression.LZ4))
        assert [r.value for r in batch.records] == values
        buffers, size = _builder.pooled()
        assert buffers <= 4 and size <= 8 * 1024 * 1024
        del builder
    assert _builder.pooled()[0] >= 1
    kept = [compiled.RecordsBuilder(0) for _ in range(8)]
    for builder in kept:
        builder.append(None, None, b"x" * 200_000)
    assert _builder.pooled() == (0, 0)
    del kept
    buffers, size = _builder.pooled()
    assert 1 <= buffers <= 4 and size <= 8 * 1024 * 1024


@settings(max_examples=40, deadline=None)
@given(fields=appended_fields, opts=batch_options)
def test_a_sealed_batch_is_the_built_batch(
    codec: ModuleType, fields: list[dict[str, Any]], opts: dict[str, Any]
) -> None:
    """`seal` (what a producer sends) gives the bytes `build` gives, for every codec and
    identity; sealed again with another identity, the header follows."""
    builder, batch = built(codec, fields, 1_700_000_000_000, opts)
    identity = {k: opts[k] for k in ("producer_id", "producer_epoch", "base_sequence")}
    sealed = builder.seal(
        opts["compression"], base_offset=opts["base_offset"],
        transactional=opts["transactional"], **identity,
    )  # fmt: skip
    assert bytes(sealed) == batch
    again = builder.seal(opts["compression"], producer_id=9, producer_epoch=1, base_sequence=5)
    assert bytes(again) == builder.build(
        opts["compression"], producer_id=9, producer_epoch=1, base_sequence=5
    )


@pytest.mark.skipif("compiled" not in implementations(), reason="extensions not built")
def test_an_uncompressed_sealed_batch_is_a_view_that_keeps_its_builder() -> None:
    """The compiled builder seals in place: a read-only view of its own buffer, valid after
    the builder's last reference is gone (the view keeps it), which cannot grow while viewed
    and goes back to the pool once the view is dropped."""
    compiled = implementations()["compiled"]
    from krafka._codec import _builder

    holding = []  # take what earlier builders pooled, so the release below shows
    while _builder.pooled()[0]:
        holding.append(compiled.RecordsBuilder(0))
        holding[-1].append(None, None, b"x" * 60_000)
    builder = compiled.RecordsBuilder(0)
    with pytest.raises(BufferError, match="not sealed"):
        memoryview(builder)
    values = [bytes([i % 251]) * 500 for i in range(400)]
    for value in values:
        builder.append(None, None, value)
    view = builder.seal(producer_id=3, base_sequence=0)
    assert isinstance(view, memoryview) and view.readonly
    with pytest.raises(BufferError, match="still viewed"):
        builder.append(None, None, b"y" * 1_000_000)
    del builder
    (batch,) = compiled.decode_batches(view)
    assert [r.value for r in batch.records] == values and batch.producer_id == 3
    assert _builder.pooled()[0] == 0
    view.release()
    assert _builder.pooled()[0] == 1
