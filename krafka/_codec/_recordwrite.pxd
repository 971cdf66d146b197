# The v2 record and batch-header writers shared by the compiled encoders (`encode_batch` in
# _records.pyx, which writes a whole list of records in one pass, and `RecordsBuilder` in
# _builder.pyx, which writes each record as it is appended). Sizes are computed first and the
# caller makes room, so the writers never check bounds.
from cpython.bytes cimport (
    PyBytes_AS_STRING, PyBytes_CheckExact, PyBytes_FromStringAndSize, PyBytes_GET_SIZE,
)
from cpython.object cimport PyObject
from cpython.sequence cimport PySequence_Fast_GET_ITEM, PySequence_Fast_GET_SIZE
from cpython.tuple cimport PyTuple_CheckExact, PyTuple_GET_ITEM, PyTuple_GET_SIZE
from cpython.unicode cimport PyUnicode_CheckExact, PyUnicode_DATA, PyUnicode_GET_LENGTH
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t
from libc.string cimport memcpy

from krafka._codec._crc cimport crc32c_of
from krafka._codec._cvarint cimport (
    put16, put32, put64, size_varint, size_varlong, write_varint, write_varlong,
)

cdef extern from "Python.h":
    bint PyUnicode_IS_COMPACT_ASCII(object)
    const char* PyUnicode_AsUTF8AndSize(object, Py_ssize_t*) except NULL

cdef enum:
    BATCH_HEADER_SIZE = 61
    BATCH_CRC_START = 21


cdef inline bint is_blob(PyObject* o) noexcept:
    """None or exactly bytes: written as they are."""
    return o == <PyObject*>None or PyBytes_CheckExact(<object>o)


cdef inline Py_ssize_t blob_size(PyObject* o) noexcept:
    cdef Py_ssize_t n
    if o == <PyObject*>None:
        return 1
    n = PyBytes_GET_SIZE(<object>o)
    return size_varint(<int32_t>n) + n


cdef inline uint8_t* put_blob(uint8_t* w, PyObject* o) noexcept:
    cdef Py_ssize_t n
    if o == <PyObject*>None:
        w[0] = 1
        return w + 1
    n = PyBytes_GET_SIZE(<object>o)
    w += write_varint(w, <int32_t>n)
    memcpy(w, PyBytes_AS_STRING(<object>o), n)
    return w + n


cdef inline const char* utf8_of(PyObject* s, Py_ssize_t* n) except NULL:
    if PyUnicode_IS_COMPACT_ASCII(<object>s):
        n[0] = PyUnicode_GET_LENGTH(<object>s)
        return <const char*>PyUnicode_DATA(<object>s)
    return PyUnicode_AsUTF8AndSize(<object>s, n)


cdef inline Py_ssize_t headers_size(PyObject* headers) except -2:
    """Encoded size of plain headers (a list/tuple of (str, bytes | None)), -1 if not plain."""
    cdef Py_ssize_t i, count = PySequence_Fast_GET_SIZE(<object>headers), klen
    cdef Py_ssize_t size = size_varint(<int32_t>count)
    cdef PyObject* item
    cdef PyObject* hkey
    cdef PyObject* hval
    for i in range(count):
        item = PySequence_Fast_GET_ITEM(<object>headers, i)
        if not PyTuple_CheckExact(<object>item) or PyTuple_GET_SIZE(<object>item) != 2:
            return -1
        hkey = PyTuple_GET_ITEM(<object>item, 0)
        hval = PyTuple_GET_ITEM(<object>item, 1)
        if not PyUnicode_CheckExact(<object>hkey) or not is_blob(hval):
            return -1
        utf8_of(hkey, &klen)
        size += size_varint(<int32_t>klen) + klen + blob_size(hval)
    return size


cdef inline uint8_t* write_record(uint8_t* w, Py_ssize_t body, int64_t ts_delta,
                                  int32_t offset_delta, PyObject* key, PyObject* value,
                                  PyObject* headers) except NULL:
    """One varint-framed record of `body` bytes (after its length); `headers` NULL: none, else
    plain headers (`headers_size` >= 0)."""
    cdef Py_ssize_t i, count, klen
    cdef const char* kraw
    cdef PyObject* item
    w += write_varint(w, <int32_t>body)
    w[0] = 0
    w += 1
    w += write_varlong(w, ts_delta)
    w += write_varint(w, offset_delta)
    w = put_blob(w, key)
    w = put_blob(w, value)
    if headers == NULL:
        w[0] = 0
        return w + 1
    count = PySequence_Fast_GET_SIZE(<object>headers)
    w += write_varint(w, <int32_t>count)
    for i in range(count):
        item = PySequence_Fast_GET_ITEM(<object>headers, i)
        kraw = utf8_of(PyTuple_GET_ITEM(<object>item, 0), &klen)
        w += write_varint(w, <int32_t>klen)
        memcpy(w, kraw, klen)
        w += klen
        w = put_blob(w, PyTuple_GET_ITEM(<object>item, 1))
    return w


cdef inline void write_batch_header(
    uint8_t* h, Py_ssize_t n, int64_t base_offset, int32_t partition_leader_epoch,
    int attributes, int32_t count, int64_t first_ts, int64_t max_ts, int64_t producer_id,
    int producer_epoch, int32_t base_sequence, object crc_fallback,
) except *:
    """The 61-byte v2 header of the `n`-byte batch at `h` (records already written), CRC last."""
    put64(h, base_offset)
    put32(h + 8, <int32_t>(n - 12))
    put32(h + 12, partition_leader_epoch)
    h[16] = 2
    put16(h + 21, attributes)
    put32(h + 23, count - 1)
    put64(h + 27, first_ts)
    put64(h + 35, max_ts)
    put64(h + 43, producer_id)
    put16(h + 51, producer_epoch)
    put32(h + 53, base_sequence)
    put32(h + 57, count)
    put32(h + 17, <int32_t><uint32_t>crc32c_of(crc_fallback, h + BATCH_CRC_START,
                                                 n - BATCH_CRC_START))


cdef inline int batch_attributes(int code, object timestamp_type, bint transactional,
                                 bint control) except -1:
    """The attributes field: codec, timestamp type, transactional and control bits."""
    cdef int attributes = code | ((<int>timestamp_type & 1) << 3)
    if transactional:
        attributes |= 0x10
    if control:
        attributes |= 0x20
    return attributes


cdef inline object framed(object payload):
    """A new bytes object of room for the batch header, then the (compressed) `payload`."""
    cdef Py_ssize_t n = PyBytes_GET_SIZE(payload)
    cdef object out = PyBytes_FromStringAndSize(NULL, BATCH_HEADER_SIZE + n)
    memcpy(PyBytes_AS_STRING(out) + BATCH_HEADER_SIZE, PyBytes_AS_STRING(payload), n)
    return out
