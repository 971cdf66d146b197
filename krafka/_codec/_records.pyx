# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Compiled record batch v2 codec: the hot path twin of `records.py` / `batches.py`.

Same API and results as the pure-Python modules; per-record work happens in C with every length
checked against the bytes that remain before anything is allocated. `Record` is an extension type
on a freelist; header keys go through a small cache of decoded strings, so a header costs one
bytes object and one tuple.
"""

cimport cython
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from cpython.list cimport PyList_GET_ITEM, PyList_New, PyList_SET_ITEM
from cpython.mem cimport PyMem_Free, PyMem_Malloc, PyMem_Realloc
from cpython.ref cimport Py_INCREF
from cpython.object cimport PyObject

cdef extern from "Python.h":
    void PyObject_GC_UnTrack(object)
from cpython.tuple cimport PyTuple_New, PyTuple_SET_ITEM
from cpython.unicode cimport PyUnicode_DecodeUTF8
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.string cimport memcmp, memcpy

from krafka._codec._cvarint cimport (
    be32, be64, put16, put32, put64, read_varint, read_varlong, size_varint, size_varlong,
    write_varint, write_varlong,
)

import time

from crc32c import crc32c as _crc32c

from krafka._codec import legacy as _legacy_py
from krafka._codec.compression import DEFAULT_MAX_DECOMPRESSED
from krafka._codec.types import BatchHeader, Compression, RecordBatch, TimestampType
from krafka.errors import CorruptRecordError

try:
    from krafka._codec import _legacy as _legacy_mod
except ImportError:  # pragma: no cover - build without the optional compiled twin
    _legacy_mod = _legacy_py
try:
    from krafka._codec import _compression as _compression_mod
except ImportError:  # pragma: no cover
    from krafka._codec import compression as _compression_mod

cdef int HEADER_SIZE = 61
cdef int CRC_START = 21
cdef int MIN_RECORD_SIZE = 7
cdef object _CODECS = (Compression.NONE, Compression.GZIP, Compression.SNAPPY,
                       Compression.LZ4, Compression.ZSTD)
cdef object _TS_TYPES = (TimestampType.CREATE_TIME, TimestampType.LOG_APPEND_TIME)
cdef dict _MIN_LENGTH = {0: 14, 1: 22, 2: 49}


@cython.freelist(8192)
@cython.final
@cython.no_gc
cdef class Record:
    """One Kafka record. Offsets are absolute; `timestamp` is None only for magic 0."""

    cdef readonly object offset
    cdef readonly object timestamp
    cdef readonly object key
    cdef readonly object value
    cdef readonly object headers

    __match_args__ = ("offset", "timestamp", "key", "value", "headers")

    def __init__(self, offset=0, timestamp=None, key=None, value=None, headers=()):
        self.offset = int(offset)
        self.timestamp = None if timestamp is None else int(timestamp)
        self.key = key
        self.value = value
        self.headers = headers

    def _fields(self):
        return (self.offset, self.timestamp, self.key, self.value, self.headers)

    def __eq__(self, other):
        if type(other) is not Record:
            return NotImplemented
        return self._fields() == (<Record>other)._fields()

    def __hash__(self):
        return hash((self.offset, self.timestamp, self.key, self.value, tuple(self.headers)))

    def __repr__(self):
        return (f"Record(offset={self.offset!r}, timestamp={self.timestamp!r}, key={self.key!r}, "
                f"value={self.value!r}, headers={self.headers!r})")

    def __reduce__(self):
        return (Record, self._fields())


cdef inline Record _new_record(int64_t offset, int64_t ts, object key, object value,
                               object headers):
    cdef Record r = Record.__new__(Record)
    r.offset = offset
    r.timestamp = ts
    r.key = key
    r.value = value
    r.headers = headers
    return r


# ---------------------------------------------------------------- header-key cache
cdef list _hk_raw = [None] * 256
cdef list _hk_str = [None] * 256


cdef inline object _header_key(const uint8_t* p, Py_ssize_t n):
    cdef unsigned int h = <unsigned int>n
    cdef Py_ssize_t i
    cdef object raw_obj
    cdef bytes raw
    if n > 64:
        return _decode_key(p, n)
    for i in range(n):
        h = h * 31 + p[i]
    h &= 255
    raw_obj = <object>PyList_GET_ITEM(_hk_raw, h)
    if raw_obj is not None:
        raw = <bytes>raw_obj
        if PyBytes_GET_SIZE(raw) == n and memcmp(PyBytes_AS_STRING(raw), p, n) == 0:
            return <object>PyList_GET_ITEM(_hk_str, h)
    s = _decode_key(p, n)
    _hk_raw[h] = PyBytes_FromStringAndSize(<const char*>p, n)
    _hk_str[h] = s
    return s


cdef object _decode_key(const uint8_t* p, Py_ssize_t n):
    try:
        return PyUnicode_DecodeUTF8(<const char*>p, n, NULL)
    except UnicodeDecodeError:
        raise CorruptRecordError("header key is not valid UTF-8") from None


# ---------------------------------------------------------------- decoding
cdef class _View:
    """Holds a buffer and its raw pointer for the duration of a decode."""
    cdef const uint8_t[::1] mv
    cdef const uint8_t* p
    cdef Py_ssize_t n
    cdef object obj

    def __cinit__(self, object buf):
        self.obj = buf
        if isinstance(buf, bytes):
            self.p = <const uint8_t*>PyBytes_AS_STRING(buf)
            self.n = PyBytes_GET_SIZE(buf)
        else:
            self.mv = memoryview(buf).cast("B")
            self.n = self.mv.shape[0]
            self.p = &self.mv[0] if self.n > 0 else <const uint8_t*>""


cdef object _read_header(const uint8_t* p, Py_ssize_t pos):
    cdef const uint8_t* q = p + pos
    cdef int magic = <int>(<signed char>q[16])
    if magic == 2:
        return BatchHeader(
            pos, be32(q + 8) + 12, be64(q), 2, <uint32_t>be32(q + 17),
            (q[21] << 8) | q[22], be32(q + 23), be64(q + 27), be64(q + 35), be64(q + 43),
            <short>((q[51] << 8) | q[52]), be32(q + 53), be32(q + 57), be32(q + 12),
        )
    return BatchHeader(
        pos, be32(q + 8) + 12, be64(q), magic, <uint32_t>be32(q + 12), q[17],
        None, None, None, None, None, None, None, None,
    )


def scan_batches(buf):
    """Read only the header of every complete entry: no CRC check, no decompression."""
    cdef _View v = _View(buf)
    cdef Py_ssize_t pos = 0
    cdef int32_t length
    cdef int magic
    out = []
    while v.n - pos >= 17:
        length = be32(v.p + pos + 8)
        magic = <int>(<signed char>v.p[pos + 16])
        minimum = _MIN_LENGTH.get(magic)
        if minimum is None:
            raise CorruptRecordError(f"unknown magic byte {magic}", pos)
        if length < <int>minimum:
            raise CorruptRecordError(f"invalid batch length {length} for magic {magic}", pos)
        if pos + 12 + length > v.n:
            break
        out.append(_read_header(v.p, pos))
        pos += 12 + length
    return iter(out)


cdef list _decode_records(const uint8_t* p, Py_ssize_t n, int64_t base_offset, int64_t base_ts,
                          bint log_append, int64_t max_ts, int32_t count, Py_ssize_t where):
    cdef list out = PyList_New(count)
    cdef Py_ssize_t pos = 0, end
    cdef int32_t length = 0, offset_delta = 0, klen = 0, vlen = 0, hcount = 0, hk = 0, hv = 0
    cdef int32_t i, j
    cdef int64_t ts_delta = 0
    cdef object key, value, hkey, hval
    cdef list headers
    cdef tuple pair
    cdef Record rec
    for i in range(count):
        Py_INCREF(None)
        PyList_SET_ITEM(out, i, None)
    for i in range(count):
        if read_varint(p, &pos, n, &length) < 0:
            _bad(i, base_offset, "malformed record length varint", where)
        if length < MIN_RECORD_SIZE - 1 or pos + length > n:
            _bad(i, base_offset, f"record length {length} invalid for {n - pos} remaining bytes", where)
        end = pos + length
        pos += 1
        if read_varlong(p, &pos, end, &ts_delta) < 0 or read_varint(p, &pos, end, &offset_delta) < 0:
            _bad(i, base_offset, "malformed timestamp/offset delta", where)
        if read_varint(p, &pos, end, &klen) < 0:
            _bad(i, base_offset, "malformed key length", where)
        if klen == -1:
            key = None
        elif klen < 0 or pos + klen > end:
            _bad(i, base_offset, f"invalid key length {klen}", where)
        else:
            key = PyBytes_FromStringAndSize(<const char*>p + pos, klen)
            pos += klen
        if read_varint(p, &pos, end, &vlen) < 0:
            _bad(i, base_offset, "malformed value length", where)
        if vlen == -1:
            value = None
        elif vlen < 0 or pos + vlen > end:
            _bad(i, base_offset, f"invalid value length {vlen}", where)
        else:
            value = PyBytes_FromStringAndSize(<const char*>p + pos, vlen)
            pos += vlen
        if read_varint(p, &pos, end, &hcount) < 0:
            _bad(i, base_offset, "malformed header count", where)
        if hcount < 0 or hcount > (end - pos) // 2:
            _bad(i, base_offset, f"invalid header count {hcount}", where)
        headers = PyList_New(hcount)
        for j in range(hcount):
            Py_INCREF(None)
            PyList_SET_ITEM(headers, j, None)
        for j in range(hcount):
            if read_varint(p, &pos, end, &hk) < 0 or hk < 0 or pos + hk > end:
                _bad(i, base_offset, "invalid header key length", where)
            hkey = _header_key(p + pos, hk)
            pos += hk
            if read_varint(p, &pos, end, &hv) < 0:
                _bad(i, base_offset, "malformed header value length", where)
            if hv == -1:
                hval = None
            elif hv < 0 or pos + hv > end:
                _bad(i, base_offset, f"invalid header value length {hv}", where)
            else:
                hval = PyBytes_FromStringAndSize(<const char*>p + pos, hv)
                pos += hv
            pair = PyTuple_New(2)
            Py_INCREF(hkey)
            PyTuple_SET_ITEM(pair, 0, hkey)
            Py_INCREF(hval)
            PyTuple_SET_ITEM(pair, 1, hval)
            PyObject_GC_UnTrack(pair)  # atomic contents: CPython would untrack it anyway
            headers[j] = pair
        if pos != end:
            _bad(i, base_offset, f"record length {length} does not match its fields", where)
        # Holds only untracked (str, bytes) tuples, so it cannot be part of a cycle; keeping it
        # out of the GC stops thousands of young containers per batch from triggering collections.
        PyObject_GC_UnTrack(headers)
        rec = _new_record(
            <int64_t>(<uint64_t>base_offset + <uint64_t><int64_t>offset_delta),
            max_ts if log_append else <int64_t>(<uint64_t>base_ts + <uint64_t>ts_delta),
            key, value, headers)
        out[i] = rec
    if pos != n:
        raise CorruptRecordError(
            f"{n - pos} bytes left after {count} records of batch at offset {base_offset}", where)
    return out


cdef void _bad(int i, int64_t base_offset, str what, Py_ssize_t where) except *:
    raise CorruptRecordError(f"record {i} of batch at offset {base_offset}: {what}", where)


cdef object _v2_records(_View v, object header, bint check_crc, object max_size):
    cdef Py_ssize_t start = header.byte_offset
    cdef Py_ssize_t length = header.byte_length
    cdef const uint8_t* q = v.p + start
    cdef int attributes = header.attributes
    cdef int code = attributes & 7
    cdef uint32_t stored = <uint32_t>be32(q + 17)
    cdef int32_t count = be32(q + 57)
    cdef object body
    cdef const uint8_t* bp
    cdef Py_ssize_t bn
    if code > 4:
        raise CorruptRecordError(f"unknown compression codec {code}", start)
    if check_crc:
        actual = _crc32c(memoryview(v.obj)[start + CRC_START:start + length])
        if actual != stored:
            raise CorruptRecordError(
                f"record batch CRC mismatch: stored {stored:#010x}, computed {actual:#010x}", start)
    if count < 0:
        raise CorruptRecordError(f"negative record count {count}", start)
    if code == 0:
        bp = q + HEADER_SIZE
        bn = length - HEADER_SIZE
    else:
        body = _compression_mod.decompress(
            _CODECS[code], memoryview(v.obj)[start + HEADER_SIZE:start + length], max_size)
        bp = <const uint8_t*>PyBytes_AS_STRING(body)
        bn = PyBytes_GET_SIZE(body)
    if count > bn // MIN_RECORD_SIZE:
        raise CorruptRecordError(f"record count {count} exceeds what {bn} bytes hold", start)
    return _decode_records(bp, bn, be64(q), be64(q + 27), (attributes & 8) != 0, be64(q + 35),
                           count, start)


cdef object _v2_batch(_View v, object header, bint check_crc, object max_size):
    records = _v2_records(v, header, check_crc, max_size)
    cdef int attributes = header.attributes
    return RecordBatch(
        header.base_offset, 2, header.crc, _CODECS[attributes & 7],
        _TS_TYPES[(attributes >> 3) & 1], (attributes & 0x10) != 0, (attributes & 0x20) != 0,
        header.partition_leader_epoch, header.producer_id, header.producer_epoch,
        header.base_sequence, records, attributes, header.byte_length - 12,
        header.last_offset_delta, header.first_timestamp, header.max_timestamp, None,
    )


def decode_entry(buf, header, bint check_crc=True, max_decompressed_size=DEFAULT_MAX_DECOMPRESSED):
    if header.magic == 2:
        return _v2_batch(_View(buf), header, check_crc, max_decompressed_size)
    return _legacy_mod.decode_entry(buf, header, check_crc, max_decompressed_size, Record)


def decode_batches(buf, bint check_crc=True, max_decompressed_size=DEFAULT_MAX_DECOMPRESSED):
    """Decode every complete batch of `buf` (v2 and legacy, in any mix)."""
    cdef _View v = _View(buf)
    out = []
    for header in scan_batches(buf):
        if header.magic == 2:
            out.append(_v2_batch(v, header, check_crc, max_decompressed_size))
        else:
            out.append(_legacy_mod.decode_entry(buf, header, check_crc, max_decompressed_size, Record))
    return out


def iter_batches(buf, bint check_crc=True, max_decompressed_size=DEFAULT_MAX_DECOMPRESSED):
    """Decode batch by batch, so only one batch's records are alive at a time."""
    for header in scan_batches(buf):
        yield decode_entry(buf, header, check_crc, max_decompressed_size)


def iter_batch_records(buf, header, bint check_crc=True,
                       max_decompressed_size=DEFAULT_MAX_DECOMPRESSED):
    """The records of one entry."""
    if header.magic == 2:
        return iter(_v2_records(_View(buf), header, check_crc, max_decompressed_size))
    return iter(_legacy_mod.decode_entry(buf, header, check_crc, max_decompressed_size, Record).records)


# ---------------------------------------------------------------- encoding
cdef struct _Out:
    uint8_t* p
    Py_ssize_t n
    Py_ssize_t cap


cdef int _reserve(_Out* o, Py_ssize_t extra) except -1:
    cdef Py_ssize_t need = o.n + extra
    cdef Py_ssize_t cap = o.cap
    cdef uint8_t* np
    if need <= cap:
        return 0
    while cap < need:
        cap = cap * 2 + 64
    np = <uint8_t*>PyMem_Realloc(o.p, cap)
    if np == NULL:
        raise MemoryError()
    o.p = np
    o.cap = cap
    return 0


cdef inline int _put_bytes(_Out* o, object data) except -1:
    cdef const char* s
    cdef Py_ssize_t n
    if data is None:
        o.p[o.n] = 1
        o.n += 1
        return 0
    if type(data) is not bytes:
        data = bytes(data)
    s = PyBytes_AS_STRING(data)
    n = PyBytes_GET_SIZE(data)
    _reserve(o, n + 5)
    o.n += write_varint(o.p + o.n, <int32_t>n)
    memcpy(o.p + o.n, s, n)
    o.n += n
    return 0


cdef int _encode_record(_Out* o, object rec, int32_t delta, int64_t ts_delta) except -1:
    cdef object key, value, headers
    if type(rec) is Record:
        key = (<Record>rec).key
        value = (<Record>rec).value
        headers = (<Record>rec).headers
    else:
        key = rec.key
        value = rec.value
        headers = rec.headers
    if key is not None and type(key) is not bytes:
        key = bytes(key)
    if value is not None and type(value) is not bytes:
        value = bytes(value)
    cdef Py_ssize_t body = 1 + size_varlong(ts_delta) + size_varint(delta)
    body += 1 if key is None else size_varint(<int32_t>len(key)) + len(key)
    body += 1 if value is None else size_varint(<int32_t>len(value)) + len(value)
    cdef list encoded_headers = None
    cdef Py_ssize_t nh = 0 if not headers else len(headers)
    body += size_varint(<int32_t>nh)
    if nh:
        encoded_headers = []
        for hkey, hval in headers:
            raw = (<str>hkey).encode("utf-8")
            if hval is not None and type(hval) is not bytes:
                hval = bytes(hval)
            encoded_headers.append((raw, hval))
            body += size_varint(<int32_t>len(raw)) + len(raw)
            body += 1 if hval is None else size_varint(<int32_t>len(hval)) + len(hval)
    _reserve(o, body + 5)
    o.n += write_varint(o.p + o.n, <int32_t>body)
    o.p[o.n] = 0
    o.n += 1
    o.n += write_varlong(o.p + o.n, ts_delta)
    o.n += write_varint(o.p + o.n, delta)
    _put_bytes(o, key)
    _put_bytes(o, value)
    o.n += write_varint(o.p + o.n, <int32_t>nh)
    if nh:
        for raw, hval in encoded_headers:
            _put_bytes(o, raw)
            _reserve(o, 5)
            _put_bytes(o, hval)
    return 0


cdef inline int64_t _timestamp_of(object rec, int64_t default_ts) except? -1:
    ts = (<Record>rec).timestamp if type(rec) is Record else rec.timestamp
    return default_ts if ts is None else ts


def encode_batch(records, compression=Compression.NONE, int64_t base_offset=0,
                 int64_t producer_id=-1, int producer_epoch=-1, int32_t base_sequence=-1,
                 bint transactional=False, bint control=False,
                 timestamp_type=TimestampType.CREATE_TIME, int32_t partition_leader_epoch=-1,
                 compression_level=None, now_ms=None):
    """Encode one v2 record batch with its CRC32C filled in (see `records.encode_batch`)."""
    cdef list recs = records if type(records) is list else list(records)
    cdef Py_ssize_t count = len(recs)
    if count == 0:
        raise ValueError("a record batch needs at least one record")
    codec = Compression.parse(compression)
    cdef int code = codec.code
    cdef int64_t default_ts = now_ms if now_ms is not None else <int64_t>(time.time() * 1000)
    cdef int64_t first_ts = _timestamp_of(recs[0], default_ts)
    cdef int64_t max_ts = first_ts, ts
    cdef _Out o
    cdef Py_ssize_t i
    cdef int attributes
    o.cap = 64 + count * 64
    o.p = <uint8_t*>PyMem_Malloc(o.cap)
    if o.p == NULL:
        raise MemoryError()
    o.n = HEADER_SIZE
    try:
        for i in range(count):
            rec = recs[i]
            ts = _timestamp_of(rec, default_ts)
            if ts > max_ts:
                max_ts = ts
            _encode_record(&o, rec, <int32_t>i, ts - first_ts)
        if code != 0:
            payload = _compression_mod.compress(
                codec, PyBytes_FromStringAndSize(<char*>o.p + HEADER_SIZE, o.n - HEADER_SIZE),
                compression_level)
            o.n = HEADER_SIZE
            _reserve(&o, len(payload))
            memcpy(o.p + HEADER_SIZE, PyBytes_AS_STRING(payload), len(payload))
            o.n += len(payload)
        attributes = code | (int(timestamp_type) << 3)
        if transactional:
            attributes |= 0x10
        if control:
            attributes |= 0x20
        put64(o.p, base_offset)
        put32(o.p + 8, <int32_t>(o.n - 12))
        put32(o.p + 12, partition_leader_epoch)
        o.p[16] = 2
        put16(o.p + 21, attributes)
        put32(o.p + 23, <int32_t>(count - 1))
        put64(o.p + 27, first_ts)
        put64(o.p + 35, max_ts)
        put64(o.p + 43, producer_id)
        put16(o.p + 51, producer_epoch)
        put32(o.p + 53, base_sequence)
        put32(o.p + 57, <int32_t>count)
        out = PyBytes_FromStringAndSize(<char*>o.p, o.n)
    finally:
        PyMem_Free(o.p)
    crc = _crc32c(memoryview(out)[CRC_START:])
    put32(<uint8_t*>PyBytes_AS_STRING(out) + 17, <int32_t><uint32_t>crc)
    return out
