"""Framings: xerial and raw snappy, lz4 incl. the Kafka 0.8/0.9 header bug, gzip members."""

from __future__ import annotations

import contextlib
import gzip
import os

import cramjam
import lz4.frame
import pytest

from krafka._codec import compression
from krafka._codec.types import Compression
from krafka.errors import CorruptRecordError

DATA = os.urandom(5000) + b"abc" * 50_000


@pytest.mark.parametrize("codec", list(Compression))
def test_round_trip(codec: Compression):
    assert compression.decompress(codec, compression.compress(codec, DATA)) == DATA


def test_snappy_writes_xerial_and_reads_raw():
    framed = compression.compress(Compression.SNAPPY, DATA)
    assert framed.startswith(compression.XERIAL_HEADER)
    raw = bytes(cramjam.snappy.compress_raw(DATA))
    assert compression.decompress(Compression.SNAPPY, raw) == DATA


def test_kafka_python_reads_our_xerial_snappy():
    from kafka.codec import snappy_decode

    assert snappy_decode(compression.compress(Compression.SNAPPY, DATA)) == DATA


def test_gzip_concatenated_members():
    data = gzip.compress(b"first ") + gzip.compress(b"second")
    assert compression.decompress(Compression.GZIP, data) == b"first second"


def test_legacy_lz4_header_checksum():
    frame = bytearray(lz4.frame.compress(b"hello kafka 0.8", store_size=False))
    # Kafka 0.8/0.9 computed the header checksum over the magic number as well
    frame[6] = (compression.xxh32(bytes(frame[0:6])) >> 8) & 0xFF
    with pytest.raises(CorruptRecordError):
        compression.decompress(Compression.LZ4, bytes(frame))
    assert compression.decompress(Compression.LZ4, bytes(frame), legacy_lz4=True) == (
        b"hello kafka 0.8"
    )


def test_xxh32_vectors():
    assert compression.xxh32(b"") == 0x02CC5D05
    assert compression.xxh32(b"abc") == 0x32D153FF
    assert compression.xxh32(b"Nobody inspects the spammish repetition") == 0xE2293B2F


@pytest.mark.parametrize("codec", [c for c in Compression if c is not Compression.NONE])
def test_truncated_stream_is_corrupt(codec: Compression):
    blob = compression.compress(codec, DATA)
    with pytest.raises(CorruptRecordError):
        compression.decompress(codec, blob[: len(blob) // 2])


def test_snappy_declared_size_checked_before_decompressing():
    hostile = b"\xff\xff\xff\xff\x07" + b"\x00" * 10  # claims ~2 GiB
    with pytest.raises(CorruptRecordError, match="cap"):
        compression.decompress(Compression.SNAPPY, hostile, max_size=1 << 20)


@pytest.mark.parametrize("codec", [Compression.LZ4, Compression.ZSTD])
def test_concatenated_frames(codec: Compression):
    first, second = compression.compress(codec, b"first " * 999), compression.compress(codec, DATA)
    assert compression.decompress(codec, first + second) == b"first " * 999 + DATA


def test_zstd_frame_without_content_size():
    import zstandard

    streamer = zstandard.ZstdCompressor().compressobj()
    framed = streamer.compress(DATA) + streamer.flush()  # as Java's streaming writer leaves it
    assert zstandard.frame_content_size(framed) == -1
    assert compression.decompress(Compression.ZSTD, framed) == DATA
    with pytest.raises(CorruptRecordError, match="cap"):
        compression.decompress(Compression.ZSTD, framed, max_size=len(DATA) - 1)


def test_lz4_output_well_beyond_the_first_guess():
    zeros = b"\x00" * 20_000_000  # ~240:1, far past the initial 32x output limit
    packed = compression.compress(Compression.LZ4, zeros)
    assert compression.decompress(Compression.LZ4, packed) == zeros


def _compression_twins() -> list[object]:
    twins: list[object] = [compression]
    try:
        from krafka._codec import _compression

        twins.append(_compression)
    except ImportError:  # pragma: no cover - a build without the compiled twin
        pass
    return twins


@pytest.fixture(params=_compression_twins(), ids=lambda m: m.__name__.rsplit(".", 1)[-1])
def twin(request: pytest.FixtureRequest) -> object:
    return request.param


LZ4_FRAMES = {
    "ours": lambda data: compression.compress(Compression.LZ4, data),
    "4 MiB blocks, checksums, size": lambda data: lz4.frame.compress(
        data, block_size=lz4.frame.BLOCKSIZE_MAX4MB, block_checksum=True,
        content_checksum=True, store_size=True,
    ),
    "256 KiB linked blocks": lambda data: lz4.frame.compress(
        data, block_size=lz4.frame.BLOCKSIZE_MAX256KB, block_linked=True, store_size=False
    ),
}  # fmt: skip


@pytest.mark.parametrize("framing", sorted(LZ4_FRAMES))
@pytest.mark.parametrize("data", [b"", b"x", DATA, b"\x00" * 3_000_000], ids=len)
def test_lz4_frames_bound_holds_the_output_and_little_more(twin, framing: str, data: bytes):
    frame = LZ4_FRAMES[framing](data)
    bound = twin.lz4_frames_bound(frame)
    assert len(data) <= bound <= len(data) + (4 << 20)
    assert twin.lz4_frames_bound(frame + LZ4_FRAMES["ours"](DATA)) >= len(data) + len(DATA)


def test_lz4_frames_bound_refuses_what_does_not_parse(twin):
    frame = compression.compress(Compression.LZ4, DATA)
    for broken in (b"", b"garbage", frame[:-4], frame[:-1], frame + b"\x00", frame[:6]):
        assert twin.lz4_frames_bound(broken) == -1


def test_lz4_frames_bound_of_hostile_blocks_stays_near_the_input(twin):
    header = lz4.frame.compress(b"", block_size=lz4.frame.BLOCKSIZE_MAX4MB)[:7]
    blocks = b"\x01\x00\x00\x00\x00" * 100_000  # every 5 bytes claim a 4 MiB block
    hostile = header + blocks + b"\x00\x00\x00\x00"
    bound = twin.lz4_frames_bound(hostile)
    assert 0 <= bound <= 256 * len(hostile) + 65536
    with contextlib.suppress(CorruptRecordError):
        assert len(twin.decompress(Compression.LZ4, hostile)) <= bound


def test_lz4_batches_read_lazily_keep_their_own_bodies(codec):
    """The compiled twin decompresses into pooled memory: a body is reused only once nothing
    reads it, so a batch read lazily is not overwritten by the batches decoded meanwhile."""

    def batch(fill: bytes) -> tuple[bytes, list[bytes]]:
        values = [fill * 1000 + i.to_bytes(2, "big") for i in range(300)]
        records = [codec.Record(value=v, timestamp=1) for v in values]
        return bytes(codec.encode_batch(records, "lz4", 0, -1, -1, -1, False)), values

    (a, a_values), others = batch(b"a"), [batch(b"b"), batch(b"c")]
    lazy = codec.iter_batch_records(a, next(codec.scan_batches(a)))
    first = next(lazy)
    for blob, values in others * 3:
        assert [r.value for r in codec.decode_batches(blob)[0].records] == values
    assert [r.value for r in [first, *lazy]] == a_values


def _zstd_streamed(data: bytes, **options: object) -> bytes:
    import zstandard

    streamer = zstandard.ZstdCompressor(**options).compressobj()  # type: ignore[arg-type]
    return streamer.compress(data) + streamer.flush()  # no content size, as Java writes


ZSTD_FRAMES = {
    "ours": lambda data: compression.compress(Compression.ZSTD, data),
    "streamed": _zstd_streamed,
    "streamed, checksum": lambda data: _zstd_streamed(data, write_checksum=True),
    "skippable first": lambda data: (
        b"\x50\x2a\x4d\x18\x03\x00\x00\x00abc" + compression.compress(Compression.ZSTD, data)
    ),
}


@pytest.mark.parametrize("framing", sorted(ZSTD_FRAMES))
@pytest.mark.parametrize("data", [b"", b"x", DATA, b"\x00" * 3_000_000], ids=len)
def test_zstd_frames_bound_holds_the_output_and_little_more(twin, framing: str, data: bytes):
    frame = ZSTD_FRAMES[framing](data)
    bound = twin.zstd_frames_bound(frame)
    assert len(data) <= bound <= len(data) + (128 << 10) * (len(data) // (128 << 10) + 1)
    both = frame + ZSTD_FRAMES["streamed"](DATA)
    assert twin.zstd_frames_bound(both) >= len(data) + len(DATA)
    assert twin.decompress(Compression.ZSTD, both) == data + DATA


def test_zstd_frames_bound_refuses_what_does_not_parse(twin):
    frame = _zstd_streamed(DATA, write_checksum=True)
    for broken in (b"", b"garbage", frame[:-5], frame[:-1], frame + b"\x00", frame[:4]):
        assert twin.zstd_frames_bound(broken) == -1


def test_a_streamed_zstd_frame_is_capped_by_its_blocks(twin):
    frame = _zstd_streamed(DATA)
    assert twin.decompress(Compression.ZSTD, frame, max_size=len(DATA)) == DATA
    with pytest.raises(CorruptRecordError, match="cap"):
        twin.decompress(Compression.ZSTD, frame, max_size=len(DATA) - 1)


@pytest.mark.parametrize("first", [b"", b"x"], ids=len)
def test_zstd_frames_after_an_empty_or_skippable_one_are_read(twin, first: bytes):
    """An empty frame or a skippable one before the data once ended the output there."""
    skippable = b"\x50\x2a\x4d\x18\x03\x00\x00\x00abc"
    for lead in (compression.compress(Compression.ZSTD, first), _zstd_streamed(first), skippable):
        expected = (b"" if lead is skippable else first) + DATA
        assert twin.decompress(Compression.ZSTD, lead + _zstd_streamed(DATA)) == expected
    with pytest.raises(CorruptRecordError):
        twin.decompress(Compression.ZSTD, b"")
