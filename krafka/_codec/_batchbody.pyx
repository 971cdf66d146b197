# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Opening a v2 batch for the compiled decoders: checks first, then the (decompressed) body."""

cimport cython
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_Check, PyBytes_GET_SIZE
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t

from krafka._codec._crc cimport crc32c_of
from krafka._codec._pool cimport PooledMem, pooled
from krafka._codec._cvarint cimport be32, be64
from krafka._codec._recordwalk cimport MIN_RECORD_SIZE

from crc32c import crc32c as _crc32c

from krafka._codec.types import Compression
from krafka.errors import CorruptRecordError

try:
    from krafka._codec import _compression as _compression_mod
except ImportError:  # pragma: no cover - build without the optional compiled twin
    from krafka._codec import compression as _compression_mod
import cramjam

#: lz4's decompress into a buffer (`_lz4_body`), if this cramjam has it.
_lz4_into = getattr(getattr(cramjam, "lz4", None), "decompress_into", None)
_lz4_frames_bound = _compression_mod.lz4_frames_bound

cdef extern from "Python.h":
    object PyMemoryView_FromMemory(char* mem, Py_ssize_t size, int flags)
    int PyBUF_READ

cdef int HEADER_SIZE = 61
cdef int CRC_START = 21
cdef tuple _CODECS = (Compression.NONE, Compression.GZIP, Compression.SNAPPY,
                      Compression.LZ4, Compression.ZSTD)


cdef inline object _window(const uint8_t* q, Py_ssize_t start, Py_ssize_t end):
    return PyMemoryView_FromMemory(<char*>q + start, end - start, PyBUF_READ)


@cython.freelist(16)
cdef class BufferView:
    """A caller's buffer with its raw pointer, valid while this object lives (see `view_of`)."""


cdef BufferView view_of(object buf):
    """Pin `buf` (bytes, or anything with a buffer) for C access."""
    cdef BufferView v = BufferView.__new__(BufferView)
    v.obj = buf
    if PyBytes_Check(buf):
        v.p = <const uint8_t*>PyBytes_AS_STRING(buf)
        v.n = PyBytes_GET_SIZE(buf)
    else:
        v.mv = memoryview(buf).cast("B")
        v.n = v.mv.shape[0]
        v.p = &v.mv[0] if v.n > 0 else <const uint8_t*>""
    return v


@cython.freelist(16)
cdef class V2Body:
    """The records section of one v2 batch, ready to walk (see `_recordwalk.pxd`)."""


cdef object _lz4_body(object data, object max_size):
    """`data` (lz4 frames) decompressed into pooled memory (`_pool.pyx`: allocating ~1 MiB
    per batch would let glibc hand the heap's top back after each one and fault it in again,
    2.4x the time of a 12-partition lz4 consume), with its length; None when its
    frame headers do not bound it within `max_size` (the general path then decides). (zstd
    stays on the general path: the binding allocates a frame's output once, at its size, and
    cramjam's `decompress_into` measured 1.5x its CPU per record in a consume.)"""
    cdef Py_ssize_t bound
    if _lz4_into is None:
        return None
    bound = _lz4_frames_bound(data)
    if bound < 0 or bound > max_size:
        return None
    cdef PooledMem out = pooled(bound)
    try:
        n = _lz4_into(data, out)
    except Exception as exc:  # the frames' blocks bound the output: this is corrupt data
        raise CorruptRecordError(f"lz4 decompression failed: {exc}") from None
    return out, n


cdef V2Body open_v2(object owner, const uint8_t* q, Py_ssize_t start, Py_ssize_t length,
                    bint check_crc, object max_size):
    """Check the batch at `q` (CRC, codec, counts) and return its records section.

    `owner` must keep `q` valid; `start` is only used in error messages.
    """
    cdef V2Body b = V2Body.__new__(V2Body)
    cdef uint32_t stored = <uint32_t>be32(q + 17)
    b.attributes = (q[21] << 8) | q[22]
    b.count = be32(q + 57)
    b.where = start
    cdef int code = b.attributes & 7
    cdef int64_t actual
    if code > 4:
        raise CorruptRecordError(f"unknown compression codec {code}", start)
    if check_crc:
        actual = crc32c_of(_crc32c, q + CRC_START, length - CRC_START)
        if actual != stored:
            raise CorruptRecordError(
                f"record batch CRC mismatch: stored {stored:#010x}, computed {actual:#010x}", start)
    if b.count < 0:
        raise CorruptRecordError(f"negative record count {b.count}", start)
    if code == 0:
        b.owner = owner
        b.p = q + HEADER_SIZE
        b.n = length - HEADER_SIZE
    else:
        body = _lz4_body(_window(q, HEADER_SIZE, length), max_size) if code == 3 else None
        if body is not None:
            b.owner = body[0]
            b.p = (<PooledMem>body[0]).p
            b.n = body[1]
        else:
            body = _compression_mod.decompress(_CODECS[code], _window(q, HEADER_SIZE, length),
                                               max_size)
            b.owner = body
            b.p = <const uint8_t*>PyBytes_AS_STRING(body)
            b.n = PyBytes_GET_SIZE(body)
    if b.count > b.n // MIN_RECORD_SIZE:
        raise CorruptRecordError(f"record count {b.count} exceeds what {b.n} bytes hold", start)
    b.base_offset = be64(q)
    b.base_ts = be64(q + 27)
    b.max_ts = be64(q + 35)
    b.producer_id = be64(q + 43)
    return b
