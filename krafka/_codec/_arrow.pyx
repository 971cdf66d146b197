# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Compiled Kafka-records-to-Arrow sink: the hot twin of `arrow.py`.

v2 records are parsed in C straight into growable column buffers (offsets, timestamps, key and
value bytes with int32 offset arrays, header keys/values, one flag byte per row); no Python
object is created per record. `finish()` hands the buffers to `pyarrow.Array.from_buffers`
without copying (each buffer is owned by a small `PooledMem` (`_pool.pyx`) exporting the buffer
protocol).
Legacy (magic 0/1) entries arrive already decoded, through `add_legacy`.

Every length is checked against the bytes that remain before anything is copied; a batch that
fails part way is rolled back, so the sink never holds part of a batch.
"""

cimport cython
from cpython.buffer cimport PyBuffer_FillInfo
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_GET_SIZE
from cpython.mem cimport PyMem_Free, PyMem_Malloc, PyMem_Realloc
from cpython.unicode cimport PyUnicode_DecodeUTF8
from libc.stdint cimport INT32_MAX, INT64_MAX, INT64_MIN, int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.string cimport memcpy, memset


cdef extern from "<sys/mman.h>" nogil:
    int madvise(void* addr, size_t length, int advice)
    int MADV_HUGEPAGE

from krafka._codec._batchbody cimport BufferView, V2Body, open_v2, view_of
from krafka._codec._pool cimport POOL_MIN, PooledMem, pool_acquire, pool_release
from krafka._codec._recordwalk cimport (
    HeaderSpan, RecordSpan, end_record, walk_header, walk_message, walk_record,
)

from krafka._codec.arrow import UNIT_FACTORS, arrow_schema, kafka_schema
from krafka._codec.compression import DEFAULT_MAX_DECOMPRESSED
from krafka.errors import CorruptRecordError

cdef int HEADER_SIZE = 61

# one flag byte per row
cdef enum:
    F_KEY = 1
    F_VALUE = 2
    F_TS = 4
    F_TXN = 8
    F_CONTROL = 16
    F_PID = 32
    F_LOG_APPEND = 64
    F_TS_TYPE = 128


# ---------------------------------------------------------------- growable buffers
cdef struct Buf:
    uint8_t* p
    Py_ssize_t n
    Py_ssize_t cap


cdef Py_ssize_t HUGE_PAGE = 2 * 1024 * 1024
cdef Py_ssize_t HUGE_MIN = 8 * 1024 * 1024


cdef int _reserve(Buf* b, Py_ssize_t extra) except -1:
    return _room(b, b.n, b.n + extra)


cdef inline int _room(Buf* b, Py_ssize_t used, Py_ssize_t need) except -1:
    """At least `need` bytes of capacity, keeping the first `used` (which may be past `b.n`:
    bytes of a batch not committed yet)."""
    if need <= b.cap:
        return 0
    return _grow(b, used, need)


cdef int _grow(Buf* b, Py_ssize_t used, Py_ssize_t need) except -1:
    cdef Py_ssize_t cap = b.cap
    cdef uint8_t* np
    if cap < 256:
        cap = 256
    while cap < need:
        cap *= 2
    if need >= POOL_MIN:
        np = pool_acquire(need, &cap)
        if np != NULL:
            if used:
                memcpy(np, b.p, used)
            pool_release(b.p, b.cap)
            b.p = np
            b.cap = cap
            return 0
    np = <uint8_t*>PyMem_Realloc(b.p, cap)
    if np == NULL:
        raise MemoryError()
    if cap >= HUGE_MIN:
        _huge_pages(np, cap)
    b.p = np
    b.cap = cap
    return 0


cdef void _huge_pages(uint8_t* p, Py_ssize_t cap) noexcept:
    """Ask for transparent huge pages over the block's 2 MiB-aligned middle: a 100 MB column
    then costs ~50 page faults as it is first written, not ~25,000 (advice only: ignored
    where THP is off or the call is unknown)."""
    cdef size_t start = (<size_t>p + HUGE_PAGE - 1) & ~(<size_t>HUGE_PAGE - 1)
    cdef size_t end = (<size_t>p + <size_t>cap) & ~(<size_t>HUGE_PAGE - 1)
    if end > start:
        madvise(<void*>start, end - start, MADV_HUGEPAGE)


cdef void _free(Buf* b) noexcept:
    pool_release(b.p, b.cap)
    b.p = NULL
    b.n = 0
    b.cap = 0


cdef PooledMem _take(Buf* b):
    """Move the buffer's memory into a `PooledMem` (the Buf is left empty)."""
    cdef PooledMem m = PooledMem.__new__(PooledMem)  # read-only: lent to pyarrow
    if b.p == NULL:
        _reserve(b, 8)
    m.p = b.p
    m.n = b.n
    m.cap = b.cap
    b.p = NULL
    b.n = 0
    b.cap = 0
    return m


cdef PooledMem _new_mem(Py_ssize_t n, bint zero):
    cdef Buf b
    b.p = NULL
    b.n = 0
    b.cap = 0
    _reserve(&b, n if n > 0 else 8)
    b.n = n
    if zero:
        memset(b.p, 0, n if n > 0 else 8)
    return _take(&b)


cdef int _zero_offsets(Buf* b) except -1:
    b.n = 0
    _reserve(b, 4)
    (<int32_t*>b.p)[0] = 0
    b.n = 4
    return 0


cdef inline void _put_i32(Buf* b, Py_ssize_t index, Py_ssize_t value) noexcept nogil:
    (<int32_t*>b.p)[index] = <int32_t>value


cdef inline bint _ascii(const uint8_t* p, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t i
    for i in range(n):
        if p[i] & 0x80:
            return False
    return True


cdef int _valid_utf8(const uint8_t* p, Py_ssize_t n) except -1:
    """1 when the bytes are UTF-8 (ASCII is checked in C; the rest by Python's decoder)."""
    if _ascii(p, n):
        return 1
    try:
        PyUnicode_DecodeUTF8(<const char*>p, n, NULL)
    except UnicodeDecodeError:
        return 0
    return 1


cdef struct Mark:
    Py_ssize_t rows
    Py_ssize_t nh
    Py_ssize_t kdat
    Py_ssize_t vdat
    Py_ssize_t hkdat
    Py_ssize_t hvdat


cdef object _pa = None


cdef object _pyarrow():
    global _pa
    if _pa is None:
        import pyarrow
        _pa = pyarrow
    return _pa


# ---------------------------------------------------------------- the sink
@cython.final
cdef class ArrowSink:
    """Accumulates rows from batches; `finish()` returns them as a RecordBatch and resets."""

    cdef Buf offs, ts, pid, flags, koff, kdat, voff, vdat, hoff, hkoff, hkdat, hvoff, hvdat, hvok
    cdef Py_ssize_t _rows, _nh
    cdef Py_ssize_t _hint[14]
    cdef int64_t min_off, max_off, min_ts, max_ts, factor
    cdef bint ts_filter
    cdef readonly object topic, partition, timestamp_unit
    cdef dict _constants  # (column, row count) -> an Arrow array every chunk of that size shares
    cdef BufferView _view

    def __init__(self, topic=None, partition=None, timestamp_unit="ms",
                 min_offset=INT64_MIN, max_offset=INT64_MAX, min_timestamp=None,
                 max_timestamp=None):
        self.topic = topic
        self.partition = partition
        self.timestamp_unit = timestamp_unit
        self.factor = UNIT_FACTORS[timestamp_unit]
        self.min_off = min_offset
        self.max_off = max_offset
        self.ts_filter = min_timestamp is not None or max_timestamp is not None
        self.min_ts = INT64_MIN if min_timestamp is None else min_timestamp
        self.max_ts = INT64_MAX if max_timestamp is None else max_timestamp
        self._constants = {}
        self._start()

    def __dealloc__(self):
        _free(&self.offs)
        _free(&self.ts)
        _free(&self.pid)
        _free(&self.flags)
        _free(&self.koff)
        _free(&self.kdat)
        _free(&self.voff)
        _free(&self.vdat)
        _free(&self.hoff)
        _free(&self.hkoff)
        _free(&self.hkdat)
        _free(&self.hvoff)
        _free(&self.hvdat)
        _free(&self.hvok)

    cdef int _start(self) except -1:
        """Empty columns; offset arrays start with their leading 0."""
        self._rows = 0
        self._nh = 0
        self.kdat.n = 0
        self.vdat.n = 0
        self.hkdat.n = 0
        self.hvdat.n = 0
        _free(&self.flags)
        _free(&self.hvok)
        _zero_offsets(&self.koff)
        _zero_offsets(&self.voff)
        _zero_offsets(&self.hoff)
        _zero_offsets(&self.hkoff)
        _zero_offsets(&self.hvoff)
        self._sync_lengths()
        return 0

    cdef int _presize(self) except -1:
        """Size an empty chunk's columns like the last chunk's (no regrowth chunk after chunk),
        once its first rows come: a sink finished for the last time reserves nothing."""
        cdef Buf* bufs[14]
        cdef int i
        if self._rows or self._nh:
            return 0
        self._buffers(bufs)
        for i in range(14):
            if self._hint[i] > bufs[i].cap:
                _reserve(bufs[i], self._hint[i] + self._hint[i] // 8 - bufs[i].n)
            self._hint[i] = 0
        return 0

    cdef void _buffers(self, Buf** out) noexcept:
        out[0] = &self.offs
        out[1] = &self.ts
        out[2] = &self.pid
        out[3] = &self.flags
        out[4] = &self.koff
        out[5] = &self.kdat
        out[6] = &self.voff
        out[7] = &self.vdat
        out[8] = &self.hoff
        out[9] = &self.hkoff
        out[10] = &self.hkdat
        out[11] = &self.hvoff
        out[12] = &self.hvdat
        out[13] = &self.hvok

    cdef void _remember_sizes(self) noexcept:
        cdef Buf* bufs[14]
        cdef int i
        self._buffers(bufs)
        for i in range(14):
            self._hint[i] = bufs[i].n

    @property
    def rows(self):
        return self._rows

    @property
    def nbytes(self):
        return self.kdat.n + self.vdat.n + self.hkdat.n + self.hvdat.n

    cdef BufferView _bind(self, object buf):
        if self._view is None or self._view.obj is not buf:
            self._view = view_of(buf)
        return self._view

    cdef Mark _mark(self):
        cdef Mark m
        m.rows = self._rows
        m.nh = self._nh
        m.kdat = self.kdat.n
        m.vdat = self.vdat.n
        m.hkdat = self.hkdat.n
        m.hvdat = self.hvdat.n
        return m

    cdef void _rollback(self, Mark m) noexcept:
        self._rows = m.rows
        self._nh = m.nh
        self.kdat.n = m.kdat
        self.vdat.n = m.vdat
        self.hkdat.n = m.hkdat
        self.hvdat.n = m.hvdat
        self._sync_lengths()

    cdef void _sync_lengths(self) noexcept:
        cdef Py_ssize_t r = self._rows, h = self._nh
        self.offs.n = 8 * r
        self.ts.n = 8 * r
        self.pid.n = 8 * r
        self.flags.n = r
        self.koff.n = 4 * (r + 1)
        self.voff.n = 4 * (r + 1)
        self.hoff.n = 4 * (r + 1)
        self.hkoff.n = 4 * (h + 1)
        self.hvoff.n = 4 * (h + 1)
        self.hvok.n = h

    cdef int _reserve_rows(self, Py_ssize_t count) except -1:
        _reserve(&self.offs, 8 * count)
        _reserve(&self.ts, 8 * count)
        _reserve(&self.pid, 8 * count)
        _reserve(&self.flags, count)
        _reserve(&self.koff, 4 * count)
        _reserve(&self.voff, 4 * count)
        _reserve(&self.hoff, 4 * count)
        return 0

    cdef int _reserve_headers(self, Py_ssize_t count) except -1:
        self.hkoff.n = 4 * (self._nh + 1)
        self.hvoff.n = 4 * (self._nh + 1)
        self.hvok.n = self._nh
        _reserve(&self.hkoff, 4 * count)
        _reserve(&self.hvoff, 4 * count)
        _reserve(&self.hvok, count)
        return 0

    cdef int _check_bytes(self, Py_ssize_t n) except -1:
        if self.nbytes + n > INT32_MAX:
            raise OverflowError("more than 2 GiB of record bytes in one Arrow chunk")
        return 0

    cdef int _reserve_header_bytes(self, Py_ssize_t n) except -1:
        """Room for a batch's header bytes, reserved at its first header (most have none)."""
        _reserve(&self.hkdat, n)
        _reserve(&self.hvdat, n)
        return 0

    cdef inline bint _accepts(self, int64_t offset, int64_t ts, bint has_ts) noexcept:
        if offset < self.min_off or offset >= self.max_off:
            return False
        if self.ts_filter:
            return has_ts and ts >= self.min_ts and ts < self.max_ts
        return True

    # ------------------------------------------------------------ v2 batches
    def add_v2(self, buf, header, bint check_crc=True,
               max_decompressed_size=DEFAULT_MAX_DECOMPRESSED):
        """Decode the v2 batch `header` describes; all or none of its rows are added."""
        cdef BufferView view = self._bind(buf)
        cdef Py_ssize_t start = header.byte_offset
        cdef Py_ssize_t length = header.byte_length
        if start < 0 or length < HEADER_SIZE or start + length > view.n:
            raise CorruptRecordError(f"batch of {length} bytes out of bounds", start)
        cdef V2Body body = open_v2(view, view.p + start, start, length, check_crc,
                                   max_decompressed_size)
        cdef uint8_t base_flags = F_TS | F_PID | F_TS_TYPE
        if body.attributes & 0x08:
            base_flags |= F_LOG_APPEND
        if body.attributes & 0x10:
            base_flags |= F_TXN
        if body.attributes & 0x20:
            base_flags |= F_CONTROL
        self._presize()
        cdef Mark mark = self._mark()
        try:
            return self._records(body, base_flags)
        except BaseException:
            self._rollback(mark)
            raise

    cdef Py_ssize_t _records(self, V2Body body, uint8_t base_flags) except -1:
        cdef const uint8_t* p = body.p
        cdef Py_ssize_t n = body.n
        self._reserve_rows(body.count)
        self._check_bytes(n)
        cdef Py_ssize_t before = self._rows
        cdef Py_ssize_t pos = 0, r, kn, vn, hkn, hvn, nh
        cdef RecordSpan rec
        cdef HeaderSpan h
        cdef int err
        cdef int32_t i, j
        cdef int64_t offset, ts
        cdef uint8_t row_flags
        cdef bint log_append = (base_flags & F_LOG_APPEND) != 0
        for i in range(body.count):
            err = walk_record(p, &pos, n, &rec)
            if err:
                _fail(body, i, err, &rec, n - pos)
            row_flags = base_flags
            kn = self.kdat.n
            if rec.klen >= 0:
                _room(&self.kdat, kn, kn + rec.klen)
                memcpy(self.kdat.p + kn, p + rec.key, rec.klen)
                kn += rec.klen
                row_flags |= F_KEY
            vn = self.vdat.n
            if rec.vlen >= 0:
                _room(&self.vdat, vn, vn + rec.vlen)
                memcpy(self.vdat.p + vn, p + rec.value, rec.vlen)
                vn += rec.vlen
                row_flags |= F_VALUE
            nh = self._nh
            hkn = self.hkdat.n
            hvn = self.hvdat.n
            if rec.hcount:
                self._reserve_headers(rec.hcount)
                self._reserve_header_bytes(n)
            for j in range(rec.hcount):
                err = walk_header(p, &pos, &rec, &h)
                if err:
                    _fail(body, i, err, &rec, n - pos)
                if not _valid_utf8(p + h.key, h.klen):
                    _fail_text(body, i, "header key is not valid UTF-8")
                memcpy(self.hkdat.p + hkn, p + h.key, h.klen)
                hkn += h.klen
                if h.vlen < 0:
                    self.hvok.p[nh + j] = 0
                else:
                    memcpy(self.hvdat.p + hvn, p + h.value, h.vlen)
                    hvn += h.vlen
                    self.hvok.p[nh + j] = 1
                _put_i32(&self.hkoff, nh + j + 1, hkn)
                _put_i32(&self.hvoff, nh + j + 1, hvn)
            err = end_record(pos, &rec)
            if err:
                _fail(body, i, err, &rec, n - pos)
            offset = <int64_t>(<uint64_t>body.base_offset + <uint64_t><int64_t>rec.offset_delta)
            ts = body.max_ts if log_append else <int64_t>(
                <uint64_t>body.base_ts + <uint64_t>rec.ts_delta)
            if not self._accepts(offset, ts, True):
                continue
            r = self._rows
            (<int64_t*>self.offs.p)[r] = offset
            (<int64_t*>self.ts.p)[r] = <int64_t>(<uint64_t>ts * <uint64_t>self.factor)
            (<int64_t*>self.pid.p)[r] = body.producer_id
            self.flags.p[r] = row_flags
            self.kdat.n = kn
            self.vdat.n = vn
            self.hkdat.n = hkn
            self.hvdat.n = hvn
            self._nh = nh + rec.hcount
            self._rows = r + 1
            _put_i32(&self.koff, r + 1, kn)
            _put_i32(&self.voff, r + 1, vn)
            _put_i32(&self.hoff, r + 1, self._nh)
        if pos != n:
            raise CorruptRecordError(
                f"{n - pos} bytes left after {body.count} records of batch at offset "
                f"{body.base_offset}", body.where)
        self._sync_lengths()
        return self._rows - before

    # ------------------------------------------------------------ legacy entries
    def add_legacy(self, batch):
        """Add the records of a decoded legacy (magic 0/1) entry."""
        cdef uint8_t base_flags = 0
        ts_type = batch.timestamp_type
        if ts_type is not None:
            base_flags |= F_TS_TYPE
            if int(ts_type) == 1:
                base_flags |= F_LOG_APPEND
        self._presize()
        cdef Mark mark = self._mark()
        cdef Py_ssize_t before = self._rows
        try:
            for rec in batch.records:
                self._add_record(rec.offset, rec.timestamp, rec.key, rec.value, rec.headers,
                                 base_flags)
        except BaseException:
            self._rollback(mark)
            raise
        return self._rows - before

    cdef int _add_record(self, int64_t offset, object timestamp, object key, object value,
                         object headers, uint8_t row_flags) except -1:
        cdef int64_t ts = 0
        if timestamp is not None:
            ts = timestamp
            row_flags |= F_TS
        if not self._accepts(offset, ts, timestamp is not None):
            return 0
        cdef Py_ssize_t r = self._rows
        self._reserve_rows(1)
        if key is not None:
            row_flags |= F_KEY
            self._append_bytes(&self.kdat, bytes(key))
        if value is not None:
            row_flags |= F_VALUE
            self._append_bytes(&self.vdat, bytes(value))
        self._reserve_headers(len(headers))
        for hkey, hval in headers:
            self._append_bytes(&self.hkdat, (<str>hkey).encode("utf-8"))
            self.hvok.p[self._nh] = hval is not None
            if hval is not None:
                self._append_bytes(&self.hvdat, bytes(hval))
            self._nh += 1
            _put_i32(&self.hkoff, self._nh, self.hkdat.n)
            _put_i32(&self.hvoff, self._nh, self.hvdat.n)
        (<int64_t*>self.offs.p)[r] = offset
        (<int64_t*>self.ts.p)[r] = <int64_t>(<uint64_t>ts * <uint64_t>self.factor)
        (<int64_t*>self.pid.p)[r] = 0
        self.flags.p[r] = row_flags
        self._rows = r + 1
        _put_i32(&self.koff, r + 1, self.kdat.n)
        _put_i32(&self.voff, r + 1, self.vdat.n)
        _put_i32(&self.hoff, r + 1, self._nh)
        self._sync_lengths()
        return 0

    cdef int _append_bytes(self, Buf* b, bytes data) except -1:
        cdef Py_ssize_t n = PyBytes_GET_SIZE(data)
        if self.nbytes + n > INT32_MAX:
            raise OverflowError("more than 2 GiB of record bytes in one Arrow chunk")
        _reserve(b, n)
        memcpy(b.p + b.n, PyBytes_AS_STRING(data), n)
        b.n += n
        return 0

    # ------------------------------------------------------------ output
    def finish(self):
        """The rows so far as a `pyarrow.RecordBatch` (wide schema); the sink is emptied."""
        pa = _pyarrow()
        schema = arrow_schema(self.timestamp_unit)
        cdef Py_ssize_t n = self._rows
        self._remember_sizes()
        key_ok, key_nulls = self._validity(F_KEY)
        value_ok, value_nulls = self._validity(F_VALUE)
        ts_ok, ts_nulls = self._validity(F_TS)
        pid_ok, pid_nulls = self._validity(F_PID)
        txn = self._bits(F_TXN)
        control = self._bits(F_CONTROL)
        ts_type = self._timestamp_types()
        header_type = schema.field("headers").type
        struct = self._header_pairs(header_type)
        arrays = [
            self._constant("topic", n),
            self._constant("partition", n),
            pa.Array.from_buffers(pa.int64(), n, [None, _buf(_take(&self.offs))]),
            pa.Array.from_buffers(schema.field("timestamp").type, n,
                                  [ts_ok, _buf(_take(&self.ts))], null_count=ts_nulls),
            ts_type,
            pa.Array.from_buffers(pa.binary(), n,
                                  [key_ok, _buf(_take(&self.koff)), _buf(_take(&self.kdat))],
                                  null_count=key_nulls),
            pa.Array.from_buffers(pa.binary(), n,
                                  [value_ok, _buf(_take(&self.voff)), _buf(_take(&self.vdat))],
                                  null_count=value_nulls),
            pa.Array.from_buffers(header_type, n, [None, _buf(_take(&self.hoff))],
                                  children=[struct]),
            pa.Array.from_buffers(pa.int64(), n, [pid_ok, _buf(_take(&self.pid))],
                                  null_count=pid_nulls),
            pa.Array.from_buffers(pa.bool_(), n, [None, _buf(txn)]),
            pa.Array.from_buffers(pa.bool_(), n, [None, _buf(control)]),
        ]
        self._start()
        return pa.RecordBatch.from_arrays(arrays, schema=schema)

    def finish_kafka(self, bint include_headers=True):
        """The rows so far straight in Spark's Kafka source columns (what `kafka_rows` makes of
        `finish()`, built from the flag bytes in C); the sink is emptied."""
        pa = _pyarrow()
        wide = arrow_schema(self.timestamp_unit)
        cdef Py_ssize_t n = self._rows
        self._remember_sizes()
        key_ok, key_nulls = self._validity(F_KEY)
        value_ok, value_nulls = self._validity(F_VALUE)
        ts_ok, ts_nulls = self._validity(F_TS)
        arrays = [
            pa.Array.from_buffers(pa.binary(), n,
                                  [key_ok, _buf(_take(&self.koff)), _buf(_take(&self.kdat))],
                                  null_count=key_nulls),
            pa.Array.from_buffers(pa.binary(), n,
                                  [value_ok, _buf(_take(&self.voff)), _buf(_take(&self.vdat))],
                                  null_count=value_nulls),
            self._constant("topic", n),
            self._constant("partition", n),
            pa.Array.from_buffers(pa.int64(), n, [None, _buf(_take(&self.offs))]),
            pa.Array.from_buffers(wide.field("timestamp").type, n,
                                  [ts_ok, _buf(_take(&self.ts))], null_count=ts_nulls),
            self._timestamp_type_codes(),
        ]
        if include_headers:
            arrays.append(self._headers_or_null(wide.field("headers").type))
        self._start()
        return pa.RecordBatch.from_arrays(
            arrays, schema=kafka_schema(include_headers, self.timestamp_unit))

    cdef object _timestamp_type_codes(self):
        """Spark's `timestampType`: 0 CreateTime, 1 LogAppendTime, null without a type."""
        pa = _pyarrow()
        cdef Py_ssize_t n = self._rows, i
        cdef uint8_t* flags = self.flags.p
        for i in range(n):
            if (flags[i] & (F_TS_TYPE | F_LOG_APPEND)) != F_TS_TYPE:
                break
        else:
            return self._constant("create_time", n)
        cdef PooledMem codes = _new_mem(4 * n, False)
        cdef int32_t* c = <int32_t*>codes.p
        for i in range(n):
            c[i] = 1 if flags[i] & F_LOG_APPEND else 0
        valid, nulls = self._validity(F_TS_TYPE)
        return pa.Array.from_buffers(pa.int32(), n, [valid, _buf(codes)], null_count=nulls)

    cdef object _headers_or_null(self, object header_type):
        """The headers column with a record without headers null (all null, shared between
        chunks of one size, when no record has any)."""
        pa = _pyarrow()
        cdef Py_ssize_t n = self._rows, nh = self._nh, i, nulls = 0
        if nh == 0:
            return self._constant("no_headers", n)
        cdef int32_t* hoff = <int32_t*>self.hoff.p
        cdef PooledMem present = _new_mem((n + 7) // 8, True)
        for i in range(n):
            if hoff[i + 1] != hoff[i]:
                present.p[i >> 3] |= <uint8_t>(1 << (i & 7))
            else:
                nulls += 1
        return pa.Array.from_buffers(
            header_type, n, [_buf(present) if nulls else None, _buf(_take(&self.hoff))],
            null_count=nulls, children=[self._header_pairs(header_type)])

    cdef object _header_pairs(self, object header_type):
        """The (key, value) structs of every header so far, the headers column's child."""
        pa = _pyarrow()
        cdef Py_ssize_t nh = self._nh
        hv_ok, hv_nulls = _pack(self.hvok.p, nh)
        return pa.Array.from_buffers(
            header_type.value_type, nh, [None],
            children=[
                pa.Array.from_buffers(pa.string(), nh,
                                      [None, _buf(_take(&self.hkoff)), _buf(_take(&self.hkdat))]),
                pa.Array.from_buffers(pa.binary(), nh,
                                      [hv_ok, _buf(_take(&self.hvoff)), _buf(_take(&self.hvdat))],
                                      null_count=hv_nulls),
            ])

    cdef PooledMem _bits(self, uint8_t bit):
        """A bitmap of the rows whose flag byte has `bit`."""
        cdef Py_ssize_t n = self._rows, i
        cdef PooledMem m = _new_mem((n + 7) // 8, True)
        cdef uint8_t* flags = self.flags.p
        for i in range(n):
            if flags[i] & bit:
                m.p[i >> 3] |= <uint8_t>(1 << (i & 7))
        return m

    cdef tuple _validity(self, uint8_t bit):
        """(validity buffer or None when nothing is null, null count) for flag `bit`."""
        cdef Py_ssize_t n = self._rows, i, unset = 0
        cdef uint8_t* flags = self.flags.p
        for i in range(n):
            if not (flags[i] & bit):
                unset += 1
        if unset == 0:
            return None, 0
        return _buf(self._bits(bit)), unset

    cdef object _timestamp_types(self):
        cdef Py_ssize_t n = self._rows, i
        cdef uint8_t want = F_TS_TYPE
        for i in range(n):
            if (self.flags.p[i] & (F_TS_TYPE | F_LOG_APPEND)) != want:
                return self._mixed_timestamp_types()
        key = ("timestamp_type", n)
        column = self._constants.get(key)
        if column is None:
            if len(self._constants) > 16:
                self._constants.clear()
            column = self._constants[key] = self._mixed_timestamp_types()
        return column

    cdef object _mixed_timestamp_types(self):
        pa = _pyarrow()
        cdef Py_ssize_t n = self._rows, i, pos = 0
        cdef PooledMem offsets = _new_mem(4 * (n + 1), False)
        cdef PooledMem data = _new_mem(13 * n, False)
        cdef uint8_t f
        cdef int32_t* o = <int32_t*>offsets.p
        o[0] = 0
        for i in range(n):
            f = self.flags.p[i]
            if f & F_TS_TYPE:
                if f & F_LOG_APPEND:
                    memcpy(data.p + pos, b"LogAppendTime", 13)
                    pos += 13
                else:
                    memcpy(data.p + pos, b"CreateTime", 10)
                    pos += 10
            o[i + 1] = <int32_t>pos
        data.n = pos
        valid, nulls = self._validity(F_TS_TYPE)
        return pa.Array.from_buffers(pa.string(), n, [valid, _buf(offsets), _buf(data)],
                                     null_count=nulls)

    cdef object _constant(self, str name, Py_ssize_t n):
        """A column the same for every chunk of `n` rows (topic, partition, all-CreateTime
        codes, no headers), built once per chunk size."""
        key = (name, n)
        column = self._constants.get(key)
        if column is None:
            if len(self._constants) > 16:
                self._constants.clear()
            if name == "topic":
                column = self._topic_column(n)
            elif name == "partition":
                column = self._partition_column(n)
            elif name == "create_time":
                column = _pyarrow().Array.from_buffers(_pyarrow().int32(), n, [None, _zeros(n)])
            else:
                column = _pyarrow().nulls(n, arrow_schema(self.timestamp_unit).field("headers").type)
            self._constants[key] = column
        return column

    cdef object _topic_column(self, Py_ssize_t n):
        pa = _pyarrow()
        if self.topic is None:
            return pa.nulls(n, pa.string())
        cdef bytes raw = (<str>self.topic).encode("utf-8")
        cdef Py_ssize_t size = PyBytes_GET_SIZE(raw), i
        if size * n > INT32_MAX:
            return pa.array([self.topic] * n, pa.large_string()).cast(pa.string())
        cdef PooledMem offsets = _new_mem(4 * (n + 1), False)
        cdef PooledMem data = _new_mem(size * n, False)
        cdef const char* s = PyBytes_AS_STRING(raw)
        for i in range(n + 1):
            (<int32_t*>offsets.p)[i] = <int32_t>(i * size)
        for i in range(n):
            memcpy(data.p + i * size, s, size)
        return pa.Array.from_buffers(pa.string(), n, [None, _buf(offsets), _buf(data)])

    cdef object _partition_column(self, Py_ssize_t n):
        pa = _pyarrow()
        if self.partition is None:
            return pa.nulls(n, pa.int32())
        cdef int32_t value = self.partition
        cdef PooledMem data = _new_mem(4 * n, False)
        cdef Py_ssize_t i
        for i in range(n):
            (<int32_t*>data.p)[i] = value
        return pa.Array.from_buffers(pa.int32(), n, [None, _buf(data)])


cdef object _zeros(Py_ssize_t n):
    """`n` zero int32s as a buffer pyarrow reads without copying."""
    return _buf(_new_mem(4 * n, True))


cdef object _buf(PooledMem m):
    return _pyarrow().py_buffer(m)


cdef tuple _pack(const uint8_t* ok, Py_ssize_t n):
    """Pack one byte per item (0/1) into a validity bitmap; None when nothing is null."""
    cdef PooledMem m = _new_mem((n + 7) // 8, True)
    cdef Py_ssize_t i, nulls = 0
    for i in range(n):
        if ok[i]:
            m.p[i >> 3] |= <uint8_t>(1 << (i & 7))
        else:
            nulls += 1
    if nulls == 0:
        return None, 0
    return _buf(m), nulls


cdef int _fail(V2Body body, int32_t i, int err, RecordSpan* r, Py_ssize_t remaining) except -1:
    return _fail_text(body, i, walk_message(err, r, remaining))


cdef int _fail_text(V2Body body, int32_t i, str what) except -1:
    raise CorruptRecordError(
        f"record {i} of batch at offset {body.base_offset}: {what}", body.where)
