"""Compression codecs for record batches, with a cap on decompressed size (bomb protection).

Decoding is streamed where the library allows it so that a small hostile payload can never make
us allocate more than `max_size` bytes: gzip via zlib's `max_length`, lz4 via the frame
decompressor's `max_length`, zstd via a bounded stream reader, snappy by checking each block's
declared length before decompressing it. Every failure becomes `CorruptRecordError`.

Formats written: gzip (RFC 1952), snappy in the xerial framing Java clients write (and that every
Kafka client reads), lz4 frames with independent 64 KiB blocks (as Java's
KafkaLZ4BlockOutputStream), zstd frames. Read additionally: raw snappy, and the broken lz4
framing of Kafka 0.8/0.9 (magic 0).
"""

import struct
import zlib
from collections.abc import Callable

import cramjam
import lz4.frame
import zstandard

from krafka._codec.types import Compression
from krafka.errors import CorruptRecordError

Buffer = bytes | bytearray | memoryview

DEFAULT_MAX_DECOMPRESSED = 128 * 1024 * 1024
XERIAL_HEADER = b"\x82SNAPPY\x00"
_XERIAL_PREAMBLE = XERIAL_HEADER + struct.pack(">ii", 1, 1)
_XERIAL_BLOCK = 32 * 1024
_ZSTD_COMPRESSORS: dict[int, zstandard.ZstdCompressor] = {}
_LZ4_MAGIC = b"\x04\x22\x4d\x18"
_U32LE = struct.Struct("<I")
_ZSTD_MAGIC = 0xFD2FB528
_ZSTD_SKIPPABLE = 0x184D2A50
_ZSTD_BLOCK_MAX = 128 * 1024


def compress(codec: Compression, data: Buffer, level: int | None = None) -> bytes:
    """Compress a batch's records section with `codec`."""
    if codec is Compression.NONE:
        return bytes(data)
    if codec is Compression.GZIP:
        c = zlib.compressobj(6 if level is None else level, zlib.DEFLATED, 31)
        return c.compress(data) + c.flush()
    if codec is Compression.SNAPPY:
        return _xerial_compress(data)
    if codec is Compression.LZ4:
        return bytes(
            lz4.frame.compress(
                data,
                compression_level=0 if level is None else level,
                block_size=lz4.frame.BLOCKSIZE_MAX64KB,
                block_linked=False,
                content_checksum=False,
                store_size=False,
            )
        )
    if codec is Compression.ZSTD:
        lvl = 3 if level is None else level
        comp = _ZSTD_COMPRESSORS.get(lvl)
        if comp is None:
            comp = _ZSTD_COMPRESSORS[lvl] = zstandard.ZstdCompressor(level=lvl)
        return bytes(comp.compress(data))
    raise ValueError(f"unknown codec {codec!r}")


def decompress(
    codec: Compression,
    data: Buffer,
    max_size: int = DEFAULT_MAX_DECOMPRESSED,
    legacy_lz4: bool = False,
) -> bytes:
    """Decompress `data`; more than `max_size` output bytes raises CorruptRecordError."""
    try:
        if codec is Compression.GZIP:
            return _gunzip(data, max_size)
        if codec is Compression.SNAPPY:
            return _snappy_decompress(data, max_size)
        if codec is Compression.LZ4:
            return _lz4_decompress(_fix_legacy_lz4(data) if legacy_lz4 else data, max_size)
        if codec is Compression.ZSTD:
            return _zstd_decompress(data, max_size)
        if codec is Compression.NONE:
            return bytes(data)
    except CorruptRecordError:
        raise
    except Exception as exc:
        raise CorruptRecordError(f"{codec.value} decompression failed: {exc}") from None
    raise CorruptRecordError(f"unknown compression codec {codec!r}")


def _too_big(codec: str, max_size: int) -> CorruptRecordError:
    return CorruptRecordError(
        f"{codec} payload decompresses to more than the {max_size}-byte cap (max_decompressed_size)"
    )


def _gunzip(data: Buffer, max_size: int) -> bytes:
    out = bytearray()
    rest = bytes(data)
    while True:
        d = zlib.decompressobj(47)
        chunk = d.decompress(rest, max_size + 1 - len(out))
        out += chunk
        if len(out) > max_size or (d.unconsumed_tail and not d.eof):
            raise _too_big("gzip", max_size)
        if not d.eof:
            raise CorruptRecordError("gzip stream is truncated")
        rest = d.unused_data
        if not rest.strip(b"\x00"):
            return bytes(out)


def _snappy_decompress(data: Buffer, max_size: int) -> bytes:
    view = memoryview(data)
    if bytes(view[:8]) != XERIAL_HEADER:
        return _snappy_raw(view, max_size, max_size)
    if len(view) < 16:
        raise CorruptRecordError("xerial snappy header is truncated")
    pos = 16
    out = bytearray()
    while pos < len(view):
        if pos + 4 > len(view):
            raise CorruptRecordError("xerial snappy block length is truncated")
        (n,) = struct.unpack_from(">i", view, pos)
        pos += 4
        if n < 0 or pos + n > len(view):
            raise CorruptRecordError(f"xerial snappy block length {n} exceeds the payload")
        out += _snappy_raw(view[pos : pos + n], max_size - len(out), max_size)
        pos += n
    return bytes(out)


def _snappy_raw(block: memoryview, remaining: int, max_size: int) -> bytes:
    declared, shift, i = 0, 0, 0
    while True:
        if i >= len(block) or i >= 5:
            raise CorruptRecordError("snappy length preamble is malformed")
        b = block[i]
        declared |= (b & 0x7F) << shift
        i += 1
        if not b & 0x80:
            break
        shift += 7
    if declared > remaining:
        raise _too_big("snappy", max_size)
    out = bytes(cramjam.snappy.decompress_raw(block))
    if len(out) != declared:
        raise CorruptRecordError("snappy block length does not match its preamble")
    return out


def _xerial_compress(data: Buffer) -> bytes:
    view = memoryview(data)
    parts = [_XERIAL_PREAMBLE]
    for start in range(0, len(view), _XERIAL_BLOCK):
        block = bytes(cramjam.snappy.compress_raw(view[start : start + _XERIAL_BLOCK]))
        parts.append(struct.pack(">i", len(block)))
        parts.append(block)
    return b"".join(parts)


def _lz4_decompress(data: Buffer, max_size: int) -> bytes:
    """Frames one after another, each in one call when its block headers bound its size.

    The lz4 binding allocates its whole `max_length` up front, so asking for the full cap on
    every batch would cost far more than the decompression itself. Kafka's frames do not store
    their content size, but each block decompresses to at most the frame's block size, so the
    blocks bound it (`_lz4_bound`); the output limit starts there (or, for headers that do not
    parse, near the likely size) and doubles.
    """
    chunks: list[bytes] = []
    total = 0
    d = _lz4_decompressor()
    try:
        feed: Buffer = data
        step = _lz4_bound(feed) + 1
        while True:
            chunk = d.decompress(feed, max_length=min(step, max_size + 1 - total))
            feed = b""
            chunks.append(chunk)
            total += len(chunk)
            if total > max_size:
                raise _too_big("lz4", max_size)
            if d.eof:
                feed = d.unused_data
                if not feed:
                    return chunks[0] if len(chunks) == 1 else b"".join(chunks)
                d.reset()
                step = _lz4_bound(feed) + 1
            elif d.needs_input:
                raise CorruptRecordError("lz4 frame is truncated")
            else:
                step *= 2
    finally:
        _lz4_idle(d)


#: Decompressors not in use. A fresh one maps its block buffers afresh (about 450 page faults
#: per 1 MiB batch: 20 times the decompression itself); reset, one is as good as new.
_LZ4_IDLE: list[lz4.frame.LZ4FrameDecompressor] = []
_LZ4_KEEP = 4


def _lz4_decompressor() -> lz4.frame.LZ4FrameDecompressor:
    try:
        return _LZ4_IDLE.pop()  # (each thread takes its own: pop is atomic)
    except IndexError:
        return lz4.frame.LZ4FrameDecompressor()


def _lz4_idle(d: lz4.frame.LZ4FrameDecompressor) -> None:
    if len(_LZ4_IDLE) < _LZ4_KEEP:
        d.reset()
        _LZ4_IDLE.append(d)


def _lz4_bound(data: Buffer) -> int:
    """An output limit for the first lz4 frame of `data` (see `_lz4_frame`); without parsable
    headers, 32 bytes per input byte."""
    bound, _ = _lz4_frame(memoryview(data), 0)
    return bound if bound >= 0 else 32 * len(data) + 65536


def lz4_frames_bound(data: Buffer) -> int:
    """The most that `data`, whole lz4 frames one after another, decompresses to (see
    `_frames_bound`)."""
    return _frames_bound(data, _lz4_frame)


def _frames_bound(data: Buffer, frame: Callable[[memoryview, int], tuple[int, int]]) -> int:
    """The sum of `frame`'s output limits over the frames of `data`; -1 unless every frame's
    headers parse and the last one ends exactly where `data` does."""
    view = memoryview(data)
    if not len(view):
        return -1
    total = pos = 0
    while pos < len(view):
        bound, pos = frame(view, pos)
        if bound < 0 or pos < 0:
            return -1
        total += bound
    return total


def _lz4_frame(view: memoryview, start: int) -> tuple[int, int]:
    """(output limit, end) of the lz4 frame at `start`: its block size for each compressed
    block and an uncompressed block's own length, at most 256 bytes per input byte (lz4
    expands at most ~255 times, so the limit never allocates far beyond what the input can
    make); end is -1 unless the frame's end mark is inside `view`. (-1, -1) when its header
    does not parse. The walk reads 4 bytes per block, so it is linear in the input."""
    n = len(view)
    if n - start < 7 or view[start : start + 4] != _LZ4_MAGIC:
        return -1, -1
    flags, block_code = view[start + 4], (view[start + 5] >> 4) & 7
    if block_code < 4:
        return -1, -1
    most = 256 * (n - start) + 65536
    block_max = 1 << (2 * block_code + 8)  # 4: 64 KiB, 5: 256 KiB, 6: 1 MiB, 7: 4 MiB
    checksum = 4 if flags & 0x10 else 0
    pos = start + 7 + (8 if flags & 0x08 else 0) + (4 if flags & 0x01 else 0)
    total = 0
    while pos + 4 <= n:
        (size,) = _U32LE.unpack_from(view, pos)
        pos += 4
        if size == 0:
            end = pos + (4 if flags & 0x04 else 0)
            return min(total, most), end if end <= n else -1
        length = size & 0x7FFFFFFF
        total += length if size & 0x80000000 else block_max
        pos += length + checksum
    return min(total, most), -1


def _fix_legacy_lz4(data: Buffer) -> bytes:
    """Recompute the frame header checksum that Kafka 0.8/0.9 computed over the magic too."""
    raw = bytes(data)
    if len(raw) < 7:
        raise CorruptRecordError("lz4 frame header is truncated")
    flg = raw[4]
    end = 6 + (8 if flg & 0x08 else 0) + (4 if flg & 0x01 else 0)
    if len(raw) <= end:
        raise CorruptRecordError("lz4 frame header is truncated")
    hc = (xxh32(raw[4:end]) >> 8) & 0xFF
    return raw[:end] + bytes([hc]) + raw[end + 1 :]


def _zstd_decompress(data: Buffer, max_size: int) -> bytes:
    """Frame by frame (skippable frames skipped): one call for a frame whose size is known, or
    bounded by its blocks, within the cap (Java's streaming writer leaves the size out);
    otherwise, and from the first frame whose headers do not parse, streamed (`_zstd_stream`).
    """
    view = memoryview(data)
    if not len(view):
        raise CorruptRecordError("zstd frame is truncated")
    dctx = zstandard.ZstdDecompressor(max_window_size=1 << 27)
    parts: list[bytes] = []
    total = pos = 0
    while pos < len(view):
        bound, end = _zstd_frame(view, pos)
        if end < 0:
            parts.append(_zstd_stream(dctx, view[pos:], max_size - total))
            break
        frame = view[pos:end]
        pos = end
        if _U32LE.unpack_from(frame)[0] & 0xFFFFFFF0 == _ZSTD_SKIPPABLE:
            continue
        declared = zstandard.frame_content_size(frame)
        if declared > max_size - total:
            raise _too_big("zstd", max_size)
        if declared >= 0 or bound <= max_size - total:
            size = max(declared if declared >= 0 else bound, 1)  # 0 would mean "unknown"
            parts.append(bytes(dctx.decompress(frame, max_output_size=size)))
        else:
            parts.append(_zstd_stream(dctx, frame, max_size - total))
        total += len(parts[-1])
        if total > max_size:
            raise _too_big("zstd", max_size)
    return parts[0] if len(parts) == 1 else b"".join(parts)


def _zstd_stream(dctx: zstandard.ZstdDecompressor, view: memoryview, max_size: int) -> bytes:
    """Feed input in steps small enough that one step cannot overshoot the cap by much.

    A zstd block expands at most ~32 KiB per input byte (RLE blocks), so a step of
    `budget >> 15` input bytes keeps the output near the remaining budget.
    """
    out = bytearray()
    while len(view):
        dobj = dctx.decompressobj()
        pos = 0
        while pos < len(view) and not dobj.eof:
            step = max(64, (max_size - len(out)) >> 15)
            out += dobj.decompress(view[pos : pos + step])
            pos += step
            if len(out) > max_size:
                raise _too_big("zstd", max_size)
        if not dobj.eof:
            raise CorruptRecordError("zstd frame is truncated")
        view = memoryview(bytes(dobj.unused_data) + bytes(view[pos:]))
    return bytes(out)


def zstd_frames_bound(data: Buffer) -> int:
    """The most that `data`, zstd frames one after another (skippable ones too), decompresses
    to (see `_frames_bound`)."""
    return _frames_bound(data, _zstd_frame)


def _zstd_frame(view: memoryview, start: int) -> tuple[int, int]:
    """(output limit, end) of the zstd frame at `start`: a raw or RLE block's own size, 128 KiB
    (the most a block holds) for a compressed one; end is -1 unless the last block (and the
    checksum) is inside `view`. (-1, -1) when its header does not parse. Linear in the input:
    3 bytes read per block."""
    n = len(view)
    if n - start < 5:
        return -1, -1
    (magic,) = _U32LE.unpack_from(view, start)
    if magic & 0xFFFFFFF0 == _ZSTD_SKIPPABLE:
        if n - start < 8:
            return -1, -1
        end = start + 8 + _U32LE.unpack_from(view, start + 4)[0]
        return (0, end) if end <= n else (-1, -1)
    descriptor = view[start + 4]
    if magic != _ZSTD_MAGIC or descriptor & 0x08:  # the reserved bit must be clear
        return -1, -1
    single = descriptor >> 5 & 1
    pos = start + 5 + (1 - single) + (0, 1, 2, 4)[descriptor & 3]
    pos += (single, 2, 4, 8)[descriptor >> 6]
    total = 0
    while pos + 3 <= n:
        header = view[pos] | view[pos + 1] << 8 | view[pos + 2] << 16
        kind, size = header >> 1 & 3, header >> 3
        if kind == 3:
            return -1, -1
        total += _ZSTD_BLOCK_MAX if kind == 2 else size
        pos += 3 + (1 if kind == 1 else size)
        if header & 1:
            end = pos + (4 if descriptor & 0x04 else 0)
            return total, end if end <= n else -1
    return total, -1


_P1, _P2, _P3, _P4, _P5 = 2654435761, 2246822519, 3266489917, 668265263, 374761393
_M32 = 0xFFFFFFFF


def _rotl(x: int, r: int) -> int:
    return ((x << r) | (x >> (32 - r))) & _M32


def xxh32(data: bytes, seed: int = 0) -> int:
    """xxHash32 (used only for the short lz4 frame descriptors, so plain Python is fine)."""
    n = len(data)
    pos = 0
    if n >= 16:
        v = [(seed + _P1 + _P2) & _M32, (seed + _P2) & _M32, seed & _M32, (seed - _P1) & _M32]
        while pos + 16 <= n:
            for i in range(4):
                lane = int.from_bytes(data[pos : pos + 4], "little")
                v[i] = (_rotl((v[i] + lane * _P2) & _M32, 13) * _P1) & _M32
                pos += 4
        h = (_rotl(v[0], 1) + _rotl(v[1], 7) + _rotl(v[2], 12) + _rotl(v[3], 18)) & _M32
    else:
        h = (seed + _P5) & _M32
    h = (h + n) & _M32
    while pos + 4 <= n:
        h = (h + int.from_bytes(data[pos : pos + 4], "little") * _P3) & _M32
        h = (_rotl(h, 17) * _P4) & _M32
        pos += 4
    while pos < n:
        h = (h + data[pos] * _P5) & _M32
        h = (_rotl(h, 11) * _P1) & _M32
        pos += 1
    h ^= h >> 15
    h = (h * _P2) & _M32
    h ^= h >> 13
    h = (h * _P3) & _M32
    h ^= h >> 16
    return h
