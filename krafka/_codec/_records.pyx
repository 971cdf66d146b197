# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Compiled record batch v2 codec: the hot path twin of `records.py` / `batches.py`.

Same API and results as the pure-Python modules; per-record work happens in C with every length
checked against the bytes that remain before anything is allocated. Records, headers and batches
are extension types built from C (`_types.pyx`); header keys go through a small cache of decoded
strings, and a header equal to the last one seen for its key reuses that (key, value) tuple.
"""

from krafka._codec._types import BatchHeader, Record, RecordBatch  # noqa: F401 - re-exported

cimport cython
from cpython.bytes cimport (
    PyBytes_AS_STRING, PyBytes_CheckExact, PyBytes_FromStringAndSize, PyBytes_GET_SIZE,
)
from cpython.list cimport PyList_CheckExact, PyList_GET_ITEM, PyList_New, PyList_SET_ITEM
from cpython.long cimport PyLong_CheckExact
from cpython.mem cimport PyMem_Free, PyMem_Malloc
from cpython.object cimport PyObject, PyTypeObject
from cpython.ref cimport Py_INCREF
from cpython.sequence cimport PySequence_Fast_GET_ITEM, PySequence_Fast_GET_SIZE
from cpython.tuple cimport (
    PyTuple_CheckExact, PyTuple_GET_ITEM, PyTuple_GET_SIZE, PyTuple_New, PyTuple_SET_ITEM,
)
from cpython.unicode cimport (
    PyUnicode_CheckExact, PyUnicode_DATA, PyUnicode_DecodeUTF8, PyUnicode_GET_LENGTH,
)
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.string cimport memcmp, memcpy

from krafka._codec._batchbody cimport BufferView, V2Body, open_v2, view_of
from krafka._codec._crc cimport crc32c_of
from krafka._codec._cvarint cimport (
    be32, be64, size_varint, size_varlong,
)
from krafka._codec._recordwrite cimport (
    batch_attributes, blob_size, framed, headers_size, is_blob, write_batch_header, write_record,
)
from krafka._codec._recordwalk cimport (
    HeaderSpan, RecordSpan, end_record, walk_header, walk_message, walk_record,
)
from krafka._codec._take cimport untracked_record
from krafka._codec._types cimport BatchHeader, Record, RecordBatch, new_record

cdef extern from "Python.h":
    void PyObject_GC_UnTrack(object)
    int PyGC_Disable()
    int PyGC_Enable()

from crc32c import crc32c as _crc32c

from krafka._codec import legacy as _legacy_py
from krafka._codec.compression import DEFAULT_MAX_DECOMPRESSED
from krafka._codec.types import Compression, TimestampType
from krafka.errors import CorruptRecordError

try:
    from krafka._codec import _legacy as _legacy_mod
except ImportError:  # pragma: no cover - build without the optional compiled twin
    _legacy_mod = _legacy_py
try:
    from krafka._codec import _compression as _compression_mod
except ImportError:  # pragma: no cover
    from krafka._codec import compression as _compression_mod

cdef dict _CODE_OF = {c: c.code for c in Compression}
_CODE_OF.update({c.value: c.code for c in Compression})
_CODE_OF[None] = 0


cdef int HEADER_SIZE = 61
cdef object _CODECS = (Compression.NONE, Compression.GZIP, Compression.SNAPPY,
                       Compression.LZ4, Compression.ZSTD)
cdef object _TS_TYPES = (TimestampType.CREATE_TIME, TimestampType.LOG_APPEND_TIME)


# ---------------------------------------------------------------- header caches
# Header keys repeat from record to record, and so do many header values (content types, schema
# ids, sources): a key's string is decoded once and kept, and the last (key, value) tuple seen
# for a key is handed out again while the value bytes are the same. Both are immutable, so
# sharing them is invisible; each codec record still gets its own headers list (a consumer's
# record gets a tuple, the shared `()` when it has none).
cdef enum:
    HEADER_SLOTS = 256
    MAX_CACHED_KEY = 64
    MAX_CACHED_VALUE = 64

cdef list _hk_raw = [None] * HEADER_SLOTS
cdef list _hk_str = [None] * HEADER_SLOTS
cdef list _hk_pair = [None] * HEADER_SLOTS


cdef inline object _header_key(const uint8_t* p, Py_ssize_t n, Py_ssize_t* slot):
    """The decoded key; `slot` is its cache slot, or -1 if it is not cached."""
    # the slot is picked from the length and three bytes; a collision only costs a decode,
    # since the cached raw bytes are compared in full
    cdef unsigned int h
    cdef object raw_obj
    cdef bytes raw
    if n > MAX_CACHED_KEY:
        slot[0] = -1
        return _decode_key(p, n)
    h = <unsigned int>n * 31
    if n > 0:
        h = (h + p[0] * 7 + p[n - 1] * 131 + p[n >> 1]) & (HEADER_SLOTS - 1)
    slot[0] = h
    raw_obj = <object>PyList_GET_ITEM(_hk_raw, h)
    if raw_obj is not None:
        raw = <bytes>raw_obj
        if PyBytes_GET_SIZE(raw) == n and memcmp(PyBytes_AS_STRING(raw), p, n) == 0:
            return <object>PyList_GET_ITEM(_hk_str, h)
    s = _decode_key(p, n)
    _hk_raw[h] = PyBytes_FromStringAndSize(<const char*>p, n)
    _hk_str[h] = s
    _hk_pair[h] = None
    return s


cdef inline tuple _header(const uint8_t* p, HeaderSpan* h):
    """The (key, value) tuple of one header, shared with the previous record when equal."""
    cdef Py_ssize_t slot
    cdef object hkey = _header_key(p + h.key, h.klen, &slot)
    cdef object last, last_value
    cdef object hval = None
    cdef tuple pair
    if slot >= 0 and h.vlen <= MAX_CACHED_VALUE:
        last = <object>PyList_GET_ITEM(_hk_pair, slot)
        if last is not None and <object>PyTuple_GET_ITEM(last, 0) is hkey:
            last_value = <object>PyTuple_GET_ITEM(last, 1)
            if h.vlen < 0:
                if last_value is None:
                    return <tuple>last
            elif (last_value is not None and PyBytes_GET_SIZE(last_value) == h.vlen
                    and memcmp(PyBytes_AS_STRING(last_value), p + h.value, h.vlen) == 0):
                return <tuple>last
    if h.vlen >= 0:
        hval = PyBytes_FromStringAndSize(<const char*>p + h.value, h.vlen)
    pair = PyTuple_New(2)
    Py_INCREF(hkey)
    PyTuple_SET_ITEM(pair, 0, hkey)
    Py_INCREF(hval)
    PyTuple_SET_ITEM(pair, 1, hval)
    PyObject_GC_UnTrack(pair)  # atomic contents: CPython would untrack it anyway
    if slot >= 0 and h.vlen <= MAX_CACHED_VALUE:
        _hk_pair[slot] = pair
    return pair


cdef object _decode_key(const uint8_t* p, Py_ssize_t n):
    try:
        return PyUnicode_DecodeUTF8(<const char*>p, n, NULL)
    except UnicodeDecodeError:
        raise CorruptRecordError("header key is not valid UTF-8") from None


# ---------------------------------------------------------------- decoding
cdef BatchHeader _read_header(const uint8_t* p, Py_ssize_t pos):
    cdef const uint8_t* q = p + pos
    cdef BatchHeader h = BatchHeader.__new__(BatchHeader)
    h.byte_offset = pos
    h.byte_length = be32(q + 8) + 12
    h.base_offset = be64(q)
    h.magic = <int>(<signed char>q[16])
    if h.magic == 2:
        h.crc = <uint32_t>be32(q + 17)
        h.attributes = (q[21] << 8) | q[22]
        h.last_offset_delta = be32(q + 23)
        h.first_timestamp = be64(q + 27)
        h.max_timestamp = be64(q + 35)
        h.producer_id = be64(q + 43)
        h.producer_epoch = <short>((q[51] << 8) | q[52])
        h.base_sequence = be32(q + 53)
        h.record_count = be32(q + 57)
        h.partition_leader_epoch = be32(q + 12)
    else:
        h.crc = <uint32_t>be32(q + 12)
        h.attributes = q[17]
    return h


cdef Py_ssize_t _entry_length(const uint8_t* p, Py_ssize_t pos, Py_ssize_t n) except -2:
    """Length of the complete entry at `pos`, -1 for a truncated tail; raises if malformed."""
    cdef int32_t length = be32(p + pos + 8)
    cdef int magic = <int>(<signed char>p[pos + 16])
    cdef int minimum
    if magic == 2:
        minimum = 49
    elif magic == 1:
        minimum = 22
    elif magic == 0:
        minimum = 14
    else:
        raise CorruptRecordError(f"unknown magic byte {magic}", pos)
    if length < minimum:
        raise CorruptRecordError(f"invalid batch length {length} for magic {magic}", pos)
    if pos + 12 + length > n:
        return -1
    return 12 + length


def scan_batches(buf):
    """Read only the header of every complete entry: no CRC check, no decompression."""
    cdef BufferView v = view_of(buf)
    cdef Py_ssize_t pos = 0, size
    out = []
    while v.n - pos >= 17:
        size = _entry_length(v.p, pos, v.n)
        if size < 0:
            break
        out.append(_read_header(v.p, pos))
        pos += size
    return iter(out)


@cython.freelist(16)
@cython.final
cdef class _RecordReader:
    """Decodes the records of one v2 batch body one at a time (the lazy path and the list path)."""

    cdef V2Body body
    cdef Py_ssize_t pos
    cdef int32_t i
    cdef bint log_append
    cdef int64_t last_ts
    cdef object last_ts_obj
    # the fields of the record `step` decoded last
    cdef object offset, ts, key, value, headers

    def __iter__(self):
        return self

    def __next__(self):
        if self.i >= self.body.count:
            self.finish()
            raise StopIteration
        return self.next_record()

    cdef int finish(self) except -1:
        if self.pos != self.body.n:
            raise CorruptRecordError(
                f"{self.body.n - self.pos} bytes left after {self.body.count} records of batch "
                f"at offset {self.body.base_offset}", self.body.where)
        return 0

    cdef int fail(self, int err, RecordSpan* r) except -1:
        raise CorruptRecordError(
            f"record {self.i} of batch at offset {self.body.base_offset}: "
            f"{walk_message(err, r, self.body.n - self.pos)}", self.body.where)

    cdef inline object timestamp(self, int64_t ts_delta):
        """Records of a batch often share a millisecond (and all do under LogAppendTime)."""
        cdef int64_t ts = self.body.max_ts if self.log_append else <int64_t>(
            <uint64_t>self.body.base_ts + <uint64_t>ts_delta)
        if self.last_ts_obj is None or ts != self.last_ts:
            self.last_ts = ts
            self.last_ts_obj = ts
        return self.last_ts_obj

    cdef Record next_record(self):
        self.step(False)
        return new_record(self.offset, self.ts, self.key, self.value, self.headers)

    cdef object next_consumer(self, PyTypeObject* tp, object topic, object partition,
                              object tstype, object epoch):
        """The next record as a consumer's record: a `tp` tuple (see `consumer_records`), never
        tracked by the collector: it holds ints, bytes, None and an untracked header tuple, so
        it cannot be in a cycle (the collector would untrack it at its first pass anyway)."""
        cdef object t
        self.step(True)
        t = untracked_record(tp, 9)
        _set(t, 0, topic)
        _set(t, 1, partition)
        _set(t, 2, self.offset)
        _set(t, 3, self.ts)
        _set(t, 4, tstype)
        _set(t, 5, self.key)
        _set(t, 6, self.value)
        _set(t, 7, self.headers)
        _set(t, 8, epoch)
        return t

    cdef int step(self, bint consumer) except -1:
        """Decode the next record into `offset`, `ts`, `key`, `value`, `headers`: a list for a
        codec `Record`, a tuple for a `consumer` record (the shared `()` when it has none)."""
        cdef const uint8_t* p = self.body.p
        cdef Py_ssize_t pos = self.pos
        cdef RecordSpan r
        cdef HeaderSpan h
        cdef int err = walk_record(p, &pos, self.body.n, &r)
        cdef int32_t j
        cdef object key = None, value = None
        cdef object headers
        cdef tuple pair
        if err:
            self.fail(err, &r)
        if r.klen >= 0:
            key = PyBytes_FromStringAndSize(<const char*>p + r.key, r.klen)
        if r.vlen >= 0:
            value = PyBytes_FromStringAndSize(<const char*>p + r.value, r.vlen)
        if consumer and r.hcount == 0:
            headers = ()
        else:
            # filled slot by slot below; on an error the dealloc skips the NULL slots
            headers = PyTuple_New(r.hcount) if consumer else PyList_New(r.hcount)
            for j in range(r.hcount):
                err = walk_header(p, &pos, &r, &h)
                if err:
                    self.fail(err, &r)
                pair = _header(p, &h)
                Py_INCREF(pair)
                if consumer:
                    PyTuple_SET_ITEM(headers, j, pair)
                else:
                    PyList_SET_ITEM(headers, j, pair)
            # Holds only untracked (str, bytes) tuples, so it cannot be part of a cycle; keeping
            # it out of the GC stops thousands of young containers per batch from triggering
            # collections.
            PyObject_GC_UnTrack(headers)
        err = end_record(pos, &r)
        if err:
            self.fail(err, &r)
        self.pos = pos
        self.i += 1
        self.offset = <int64_t>(<uint64_t>self.body.base_offset + <uint64_t><int64_t>r.offset_delta)
        self.ts = self.timestamp(r.ts_delta)
        self.key = key
        self.value = value
        self.headers = headers
        return 0


cdef list _read_all(_RecordReader reader):
    cdef int32_t i, count = reader.body.count
    cdef list out = PyList_New(count)
    cdef Record rec
    for i in range(count):
        rec = reader.next_record()
        Py_INCREF(rec)
        PyList_SET_ITEM(out, i, rec)
    reader.finish()
    return out


cdef _RecordReader _v2_reader(BufferView v, Py_ssize_t start, Py_ssize_t length, bint check_crc,
                              object max_size):
    """Check the batch (CRC, counts), decompress it, and return a reader over its records."""
    cdef _RecordReader r = _RecordReader.__new__(_RecordReader)
    r.body = open_v2(v, v.p + start, start, length, check_crc, max_size)
    r.log_append = (r.body.attributes & 8) != 0
    return r


cdef list _v2_records(BufferView v, Py_ssize_t start, Py_ssize_t length, bint check_crc,
                      object max_size):
    return _read_all(_v2_reader(v, start, length, check_crc, max_size))


cdef RecordBatch _v2_batch(BufferView v, Py_ssize_t start, Py_ssize_t length, bint check_crc,
                           object max_size):
    cdef const uint8_t* q = v.p + start
    cdef list records = _v2_records(v, start, length, check_crc, max_size)
    cdef RecordBatch b = RecordBatch.__new__(RecordBatch)
    cdef int attributes = (q[21] << 8) | q[22]
    b._base_offset = be64(q)
    b.magic = 2
    b._crc = <uint32_t>be32(q + 17)
    b.compression = _CODECS[attributes & 7]
    b.timestamp_type = _TS_TYPES[(attributes >> 3) & 1]
    b.is_transactional = (attributes & 0x10) != 0
    b.is_control = (attributes & 0x20) != 0
    b._partition_leader_epoch = be32(q + 12)
    b._producer_id = be64(q + 43)
    b._producer_epoch = <short>((q[51] << 8) | q[52])
    b._base_sequence = be32(q + 53)
    b.records = records
    b.attributes = attributes
    b._batch_length = length - 12
    b._last_offset_delta = be32(q + 23)
    b._first_timestamp = be64(q + 27)
    b._max_timestamp = be64(q + 35)
    b.nulls = 0
    b.wrapper_timestamp = None
    return b


cdef object _legacy(object buf, BufferView v, Py_ssize_t pos, bint check_crc, object max_size):
    return _legacy_mod.decode_entry(
        buf, _read_header(v.p, pos), check_crc, max_size, Record, RecordBatch)


cdef inline void _set(object t, Py_ssize_t i, object item) noexcept:
    Py_INCREF(item)
    PyTuple_SET_ITEM(t, i, item)


cdef object _TSTYPE_CODES = (0, 1)


def consumer_records(buf, header, bint check_crc, max_decompressed_size, object topic,
                     object partition, type record_type):
    """The records of one entry as a consumer hands them out, each a `record_type` tuple
    `(topic, partition, offset, timestamp, timestamp_type, key, value, headers, leader_epoch)`
    made straight from the batch's bytes (no `Record` in between). A v2 batch's list and
    records are untracked by the collector (nothing in them can be in a cycle): the caller
    keeps them so, adding no container to the list."""
    cdef BufferView v = view_of(buf)
    cdef _RecordReader reader
    cdef int32_t i
    cdef list out
    cdef PyTypeObject* tp = <PyTypeObject*>record_type
    if header.magic != 2:
        batch = _legacy(buf, v, header.byte_offset, check_crc, max_decompressed_size)
        tstype = int(batch.timestamp_type or 0)
        return [tuple.__new__(record_type, (topic, partition, r.offset, r.timestamp, tstype,
                                            r.key, r.value, tuple(r.headers), None))
                for r in batch.records]
    reader = _v2_reader(v, header.byte_offset, header.byte_length, check_crc,
                        max_decompressed_size)
    epoch = header.partition_leader_epoch
    if epoch < 0:
        epoch = None
    tstype = _TSTYPE_CODES[1 if reader.log_append else 0]
    out = PyList_New(reader.body.count)
    # Every object made below is untracked at once (or never tracked) and no Python code runs
    # meanwhile, so a collection triggered by their allocation could free nothing: it would
    # only walk the young objects (thousands of records: ~3% of the cost). The collector is
    # paused for the loop; the allocations still count toward its next collection.
    collecting = PyGC_Disable()
    try:
        for i in range(reader.body.count):
            rec = reader.next_consumer(tp, topic, partition, tstype, epoch)
            Py_INCREF(rec)
            PyList_SET_ITEM(out, i, rec)
    finally:
        if collecting:
            PyGC_Enable()
    reader.finish()
    # It holds only those records, so it cannot be in a cycle either: left tracked, every
    # collection while it is young (the first one right after this call) would walk it.
    PyObject_GC_UnTrack(out)
    return out


def decode_entry(buf, header, bint check_crc=True, max_decompressed_size=DEFAULT_MAX_DECOMPRESSED):
    cdef BufferView v = view_of(buf)
    if header.magic == 2:
        return _v2_batch(v, header.byte_offset, header.byte_length, check_crc,
                         max_decompressed_size)
    return _legacy(buf, v, header.byte_offset, check_crc, max_decompressed_size)


def decode_batches(buf, bint check_crc=True, max_decompressed_size=DEFAULT_MAX_DECOMPRESSED):
    """Decode every complete batch of `buf` (v2 and legacy, in any mix)."""
    cdef BufferView v = view_of(buf)
    cdef Py_ssize_t pos = 0, size
    cdef list out = []
    while v.n - pos >= 17:
        size = _entry_length(v.p, pos, v.n)
        if size < 0:
            break
        if v.p[pos + 16] == 2:
            out.append(_v2_batch(v, pos, size, check_crc, max_decompressed_size))
        else:
            out.append(_legacy(buf, v, pos, check_crc, max_decompressed_size))
        pos += size
    return out


def iter_batches(buf, bint check_crc=True, max_decompressed_size=DEFAULT_MAX_DECOMPRESSED):
    """Decode batch by batch, so only one batch's records are alive at a time."""
    for header in scan_batches(buf):
        yield decode_entry(buf, header, check_crc, max_decompressed_size)


def iter_batch_records(buf, header, bint check_crc=True,
                       max_decompressed_size=DEFAULT_MAX_DECOMPRESSED):
    """The records of one entry, decoded one at a time for v2 batches."""
    if header.magic == 2:
        return _v2_reader(view_of(buf), header.byte_offset, header.byte_length, check_crc,
                          max_decompressed_size)
    return iter(decode_entry(buf, header, check_crc, max_decompressed_size).records)


# ---------------------------------------------------------------- encoding
# One pass reads every record into a C slot (borrowed fields, timestamp, body size), then every
# byte is written straight into the output `bytes` object: no growing buffer, no final copy (a
# compressed batch copies only the compressed payload). Records whose fields need converting
# (buffers other than bytes, header sequences of other types, duck-typed records) are replaced by
# a converted compiled Record first; converting may run Python code, so the slots are then read
# again before anything is written.

cdef struct Slot:
    PyObject* key           # bytes or None, borrowed from the record
    PyObject* value
    PyObject* headers       # list or tuple of (str, bytes | None) tuples; NULL: none
    int64_t ts
    Py_ssize_t body         # size of the record after its length varint

cdef enum:
    STACK_SLOTS = 16


cdef struct Stamps:
    int64_t default_ts      # for records without a timestamp: `now_ms`, else NO_TIMESTAMP
    int64_t first_ts
    int64_t max_ts


cdef int _read_slot(Slot* s, object rec, int32_t delta, Stamps* stamps) except -1:
    """Fill `s` from a compiled Record or a (key, value, headers, timestamp) tuple whose fields
    have exactly the types written as they are; 0 (and nothing read) if `rec` needs converting.
    Runs no Python code."""
    cdef PyObject* ts
    cdef PyObject* headers
    cdef Py_ssize_t hsize
    if type(rec) is Record:
        s.key = <PyObject*>(<Record>rec).key
        s.value = <PyObject*>(<Record>rec).value
        headers = <PyObject*>(<Record>rec).headers
        ts = <PyObject*>(<Record>rec).timestamp
    elif type(rec) is tuple and PyTuple_GET_SIZE(rec) == 4:
        s.key = PyTuple_GET_ITEM(rec, 0)
        s.value = PyTuple_GET_ITEM(rec, 1)
        headers = PyTuple_GET_ITEM(rec, 2)
        ts = PyTuple_GET_ITEM(rec, 3)
    else:
        return 0
    if not is_blob(s.key) or not is_blob(s.value):
        return 0
    if ts == <PyObject*>None:
        s.ts = stamps.default_ts
    elif PyLong_CheckExact(<object>ts):
        s.ts = <int64_t><object>ts
    else:
        return 0
    if headers == <PyObject*>None or ((PyList_CheckExact(<object>headers)
                                       or PyTuple_CheckExact(<object>headers))
                                      and PySequence_Fast_GET_SIZE(<object>headers) == 0):
        s.headers = NULL
        hsize = 1
    elif PyList_CheckExact(<object>headers) or PyTuple_CheckExact(<object>headers):
        hsize = headers_size(headers)
        if hsize < 0:
            return 0
        s.headers = headers
    else:
        return 0
    # the timestamp delta's size is added once the first timestamp is known
    s.body = 1 + size_varint(delta) + blob_size(s.key) + blob_size(s.value) + hsize
    return 1


cdef Record _converted(object rec):
    """`rec` (any record-like object or record tuple) as a compiled Record of exact types."""
    if type(rec) is tuple:
        if len(<tuple>rec) != 4:
            raise ValueError(f"a record tuple is (key, value, headers, timestamp), "
                             f"got {len(<tuple>rec)} items")
        key, value, headers, timestamp = <tuple>rec
    else:
        key, value, headers, timestamp = rec.key, rec.value, rec.headers, rec.timestamp
    if timestamp is not None and type(timestamp) is not int:
        timestamp = int(timestamp)
    return new_record(
        0, timestamp, None if key is None else bytes(key), None if value is None else bytes(value),
        [(str(k), None if v is None else bytes(v)) for k, v in headers] if headers else None)


cdef list _read_slots(list recs, bint owned, Slot* slots, Stamps* stamps,
                      Py_ssize_t* total):
    """Fill every slot, converting records as needed (into a copy of `recs` unless `owned`);
    return the list whose records the slots borrow from."""
    cdef Py_ssize_t i, count = len(recs)
    cdef bint converted = False
    for i in range(count):
        if not _read_slot(&slots[i], <object>PyList_GET_ITEM(recs, i), <int32_t>i, stamps):
            if not owned:
                recs = list(recs)
                owned = True
            recs[i] = _converted(<object>PyList_GET_ITEM(recs, i))
            converted = True
    if converted:
        # conversions ran Python code, which may have changed records read before: read again
        for i in range(count):
            if not _read_slot(&slots[i], <object>PyList_GET_ITEM(recs, i), <int32_t>i, stamps):
                raise RuntimeError("records changed while being encoded")
    cdef int64_t first_ts = slots[0].ts, max_ts = first_ts
    total[0] = 0
    for i in range(count):
        if slots[i].ts > max_ts:
            max_ts = slots[i].ts
        slots[i].body += size_varlong(slots[i].ts - first_ts)
        total[0] += size_varint(<int32_t>slots[i].body) + slots[i].body
    stamps.first_ts = first_ts
    stamps.max_ts = max_ts
    return recs


cdef object _encode_records(Slot* slots, Py_ssize_t count, Py_ssize_t offset, Py_ssize_t total,
                            int64_t first_ts):
    """A new bytes object of `offset + total` bytes with the records written from `offset`."""
    cdef object out = PyBytes_FromStringAndSize(NULL, offset + total)
    cdef uint8_t* w = <uint8_t*>PyBytes_AS_STRING(out) + offset
    cdef Py_ssize_t i
    for i in range(count):
        w = write_record(w, slots[i].body, slots[i].ts - first_ts, <int32_t>i, slots[i].key,
                         slots[i].value, slots[i].headers)
    return out


def encode_batch(records, compression=Compression.NONE, int64_t base_offset=0,
                 int64_t producer_id=-1, int producer_epoch=-1, int32_t base_sequence=-1,
                 bint transactional=False, bint control=False,
                 timestamp_type=TimestampType.CREATE_TIME, int32_t partition_leader_epoch=-1,
                 compression_level=None, now_ms=None):
    """Encode one v2 record batch with its CRC32C filled in (see `records.encode_batch`).

    `records` holds Records (or any object with their fields) and/or
    (key, value, headers, timestamp) tuples.
    """
    cdef bint owned = type(records) is not list
    cdef list recs = list(records) if owned else records
    cdef Py_ssize_t count = len(recs), total
    if count == 0:
        raise ValueError("a record batch needs at least one record")
    code_obj = _CODE_OF.get(compression)
    if code_obj is None:
        code_obj = Compression.parse(compression).code
    cdef int code = code_obj
    cdef Stamps stamps
    stamps.default_ts = -1 if now_ms is None else now_ms
    cdef Slot stack_slots[STACK_SLOTS]
    cdef Slot* slots = stack_slots
    if count > STACK_SLOTS:
        slots = <Slot*>PyMem_Malloc(count * sizeof(Slot))
        if slots == NULL:
            raise MemoryError()
    try:
        recs = _read_slots(recs, owned, slots, &stamps, &total)  # keeps converted records alive
        if code == 0:
            out = _encode_records(slots, count, HEADER_SIZE, total, stamps.first_ts)
        else:
            raw = _encode_records(slots, count, 0, total, stamps.first_ts)
            out = framed(_compression_mod.compress(_CODECS[code], raw, compression_level))
    finally:
        if slots != stack_slots:
            PyMem_Free(slots)
    cdef int attributes = batch_attributes(code, timestamp_type, transactional, control)
    write_batch_header(<uint8_t*>PyBytes_AS_STRING(out), PyBytes_GET_SIZE(out), base_offset,
                       partition_leader_epoch, attributes, <int32_t>count, stamps.first_ts,
                       stamps.max_ts, producer_id, producer_epoch, base_sequence, _crc32c)
    return out
