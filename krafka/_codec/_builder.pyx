# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Compiled `RecordsBuilder`: the twin of `records.RecordsBuilder` (see there).

Each `append` writes its record into one growing C buffer: no record object is made, so none
is kept alive, traversed, or freed later by the thread that sends the batch. Room for the batch
header is kept before the records, so `seal` writes an uncompressed batch in place and hands out
a view of it: a producer's batch then costs no block of its own besides the builder's.

Large buffers are recycled, as Java's `BufferPool` recycles a producer's batch buffers: a
builder that dies with one of at least `_POOL_MIN` bytes leaves it in a small process-wide pool
(at most `_POOL_SLOTS` buffers, `_POOL_BYTES` in all) and the next builder growing that large
takes it. A megabyte batch in a fresh buffer costs a page fault per 4 KiB page (the allocator
maps and unmaps buffers that large), about as much CPU as compressing it with lz4.
"""

cimport cython
from cpython.buffer cimport PyBuffer_FillInfo
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from cpython.list cimport PyList_CheckExact
from cpython.long cimport PyLong_CheckExact
from cpython.mem cimport PyMem_Free, PyMem_Realloc
from cpython.memoryview cimport PyMemoryView_FromMemory
from cpython.object cimport PyObject
from cpython.sequence cimport PySequence_Fast_GET_SIZE
from cpython.tuple cimport PyTuple_CheckExact
from libc.stdint cimport int32_t, int64_t, uint8_t
from libc.string cimport memcpy

from krafka._codec._cvarint cimport size_varint, size_varlong
from krafka._codec._recordwrite cimport (
    BATCH_HEADER_SIZE, batch_attributes, blob_size, framed, headers_size, is_blob,
    write_batch_header, write_record,
)

from crc32c import crc32c as _crc32c

from krafka._codec.types import Compression, TimestampType

try:
    from krafka._codec import _compression as _compression_mod
except ImportError:  # pragma: no cover - build without the optional compiled twin
    from krafka._codec import compression as _compression_mod

cdef dict _CODE_OF = {c: c.code for c in Compression}
_CODE_OF.update({c.value: c.code for c in Compression})
_CODE_OF[None] = 0
cdef tuple _CODECS = (Compression.NONE, Compression.GZIP, Compression.SNAPPY,
                      Compression.LZ4, Compression.ZSTD)
cdef Py_ssize_t _FIRST_CAPACITY = 512
cdef int _PyBUF_READ = 0x100

cdef enum:
    _POOL_SLOTS = 4
cdef Py_ssize_t _POOL_MIN = 64 * 1024
cdef Py_ssize_t _POOL_BYTES = 8 * 1024 * 1024
cdef uint8_t* _pool[_POOL_SLOTS]
cdef Py_ssize_t _pool_capacity[_POOL_SLOTS]
cdef int _pooled = 0
cdef Py_ssize_t _pooled_bytes = 0


cdef bint _pool_put(uint8_t* buf, Py_ssize_t capacity) noexcept:
    """Keep `buf` for a later builder; False when the pool is full."""
    global _pooled, _pooled_bytes
    if capacity < _POOL_MIN or _pooled == _POOL_SLOTS or _pooled_bytes + capacity > _POOL_BYTES:
        return False
    _pool[_pooled], _pool_capacity[_pooled] = buf, capacity
    _pooled += 1
    _pooled_bytes += capacity
    return True


cdef uint8_t* _pool_take(Py_ssize_t want, Py_ssize_t* capacity) noexcept:
    """A pooled buffer of at least `want` bytes (its size in `capacity`), or NULL."""
    global _pooled, _pooled_bytes
    cdef int i
    cdef uint8_t* buf
    for i in range(_pooled):
        if _pool_capacity[i] >= want:
            buf, capacity[0] = _pool[i], _pool_capacity[i]
            _pooled -= 1
            _pooled_bytes -= capacity[0]
            _pool[i], _pool_capacity[i] = _pool[_pooled], _pool_capacity[_pooled]
            return buf
    return NULL


def pooled():
    """(buffers, bytes) the pool holds now: for tests and diagnostics."""
    return _pooled, _pooled_bytes


cdef inline object _blob(object data):
    return data if data is None or type(data) is bytes else bytes(data)


@cython.final
cdef class RecordsBuilder:
    """The records of one v2 batch, encoded as they are appended (see `records.RecordsBuilder`)."""

    def __cinit__(self, int64_t default_timestamp):
        self.default_timestamp = default_timestamp
        self.first_timestamp = -1
        self.max_timestamp = -1

    def __dealloc__(self):
        if not _pool_put(self._buf, self._capacity):
            PyMem_Free(self._buf)

    @property
    def size(self):
        """Bytes of the records written so far (the batch header not counted)."""
        return self._size

    cdef int _reserve(self, Py_ssize_t more) except -1:
        """Room for `more` bytes of records after those written (the buffer holds the batch
        header's room, then the records)."""
        cdef Py_ssize_t want = BATCH_HEADER_SIZE + self._size + more, capacity = self._capacity
        cdef uint8_t* grown
        if want <= capacity:
            return 0
        if self._exports:
            raise BufferError("a sealed batch that is still viewed cannot grow")
        if capacity == 0:
            capacity = _FIRST_CAPACITY
        while capacity < want:
            capacity *= 2
        if capacity >= _POOL_MIN:
            grown = _pool_take(want, &capacity)
            if grown != NULL:
                if self._size:
                    memcpy(grown + BATCH_HEADER_SIZE, self._buf + BATCH_HEADER_SIZE, self._size)
                PyMem_Free(self._buf)
                self._buf, self._capacity = grown, capacity
                return 0
        grown = <uint8_t*>PyMem_Realloc(self._buf, capacity)
        if grown == NULL:
            raise MemoryError()
        self._buf, self._capacity = grown, capacity
        return 0

    def __getbuffer__(self, Py_buffer* view, int flags):
        if not self._sealed:
            raise BufferError("the batch is not sealed: seal() it first")
        PyBuffer_FillInfo(view, self, self._buf, BATCH_HEADER_SIZE + self._size, 1, flags)
        self._exports += 1

    def __releasebuffer__(self, Py_buffer* view):
        self._exports -= 1

    def append(self, timestamp, key, value, headers=None):
        """Write one more record."""
        self.add(timestamp, key, value, headers)

    cdef int add(self, object timestamp, object key, object value, object headers) except -1:
        if not is_blob(<PyObject*>key):
            key = _blob(key)
        if not is_blob(<PyObject*>value):
            value = _blob(value)
        cdef Py_ssize_t hsize = 1
        cdef PyObject* hdrs = NULL
        if headers is not None and (not (PyList_CheckExact(headers) or PyTuple_CheckExact(headers))
                                    or PySequence_Fast_GET_SIZE(headers) != 0):
            if PyList_CheckExact(headers) or PyTuple_CheckExact(headers):
                hsize = headers_size(<PyObject*>headers)
            else:
                hsize = -1
            if hsize < 0:
                headers = [(str(k), _blob(v)) for k, v in headers]
                hsize = headers_size(<PyObject*>headers)
            hdrs = <PyObject*>headers
        cdef int64_t ts
        if timestamp is None:
            ts = self.default_timestamp
        elif PyLong_CheckExact(timestamp):
            ts = timestamp
        else:
            ts = int(timestamp)
        if self.count == 0:
            self.first_timestamp = self.max_timestamp = ts
        elif ts > self.max_timestamp:
            self.max_timestamp = ts
        cdef int64_t ts_delta = ts - self.first_timestamp
        cdef int32_t offset_delta = <int32_t>self.count
        cdef Py_ssize_t body = (1 + size_varlong(ts_delta) + size_varint(offset_delta)
                                + blob_size(<PyObject*>key) + blob_size(<PyObject*>value) + hsize)
        self._reserve(size_varint(<int32_t>body) + body)
        cdef uint8_t* records = self._buf + BATCH_HEADER_SIZE
        cdef uint8_t* w = write_record(records + self._size, body, ts_delta, offset_delta,
                                       <PyObject*>key, <PyObject*>value, hdrs)
        self._size = w - records
        self.count += 1
        self._sealed = False
        return 0

    def build(self, compression=Compression.NONE, *, int64_t base_offset=0,
              int64_t producer_id=-1, int producer_epoch=-1, int32_t base_sequence=-1,
              bint transactional=False, bint control=False,
              timestamp_type=TimestampType.CREATE_TIME, int32_t partition_leader_epoch=-1,
              compression_level=None):
        """The record batch: header, (compressed) records, CRC32C."""
        return self._batch(False, compression, base_offset, producer_id, producer_epoch,
                           base_sequence, transactional, control, timestamp_type,
                           partition_leader_epoch, compression_level)

    def seal(self, compression=Compression.NONE, *, int64_t base_offset=0,
             int64_t producer_id=-1, int producer_epoch=-1, int32_t base_sequence=-1,
             bint transactional=False, timestamp_type=TimestampType.CREATE_TIME,
             int32_t partition_leader_epoch=-1, compression_level=None):
        """The batch `build` makes; uncompressed, written in place: a read-only view of this
        builder's buffer (the header in the room kept before the records) that keeps the
        builder alive, so a producer's batch needs no block of its own. Sealing again (new
        producer id or sequence) rewrites the header; appending unseals it."""
        return self._batch(True, compression, base_offset, producer_id, producer_epoch,
                           base_sequence, transactional, False, timestamp_type,
                           partition_leader_epoch, compression_level)

    cdef object _batch(self, bint in_place, object compression, int64_t base_offset,
                       int64_t producer_id, int producer_epoch, int32_t base_sequence,
                       bint transactional, bint control, object timestamp_type,
                       int32_t partition_leader_epoch, object compression_level):
        """`build` (a new bytes object), or `seal` (`in_place`: uncompressed, the header
        written before the records in this buffer, and a view of it returned)."""
        if self.count == 0:
            raise ValueError("a record batch needs at least one record")
        code_obj = _CODE_OF.get(compression)
        if code_obj is None:
            code_obj = Compression.parse(compression).code
        cdef int code = code_obj
        cdef object out = None
        cdef uint8_t* at = self._buf
        cdef Py_ssize_t size = BATCH_HEADER_SIZE + self._size
        if code != 0:
            out = framed(self._compressed(_CODECS[code], compression_level))
        elif not in_place:
            out = PyBytes_FromStringAndSize(NULL, size)
            memcpy(PyBytes_AS_STRING(out) + BATCH_HEADER_SIZE, self._buf + BATCH_HEADER_SIZE,
                   self._size)
        if out is not None:
            at, size = <uint8_t*>PyBytes_AS_STRING(out), PyBytes_GET_SIZE(out)
        write_batch_header(at, size, base_offset, partition_leader_epoch,
                           batch_attributes(code, timestamp_type, transactional, control),
                           <int32_t>self.count, self.first_timestamp, self.max_timestamp,
                           producer_id, producer_epoch, base_sequence, _crc32c)
        if out is not None:
            return out
        self._sealed = True
        return memoryview(self)

    cdef object _compressed(self, object codec, object level):
        """The records compressed straight from the builder's buffer (not copied first: a
        batch's records are about a megabyte); the view is released before this returns."""
        view = PyMemoryView_FromMemory(<char*>self._buf + BATCH_HEADER_SIZE, self._size,
                                       _PyBUF_READ)
        try:
            return _compression_mod.compress(codec, view, level)
        finally:
            view.release()

    def records(self):
        """The records written so far, decoded again (timestamps filled in)."""
        if self.count == 0:
            return []
        from krafka._codec._records import decode_batches
        return decode_batches(self.build(), check_crc=False)[0].records
