# The v2 record walk shared by the compiled decoders (Python objects in _records.pyx, Arrow
# buffers in _arrow.pyx): framing, deltas, key, value and headers located and bounds-checked
# in C. Walkers return WALK_OK or an error code; `walk_message` turns one into text.
from libc.stdint cimport int32_t, int64_t, uint8_t

from krafka._codec._cvarint cimport read_varint, read_varlong


cdef enum:
    WALK_OK = 0
    BAD_LENGTH_VARINT
    BAD_LENGTH
    BAD_DELTAS
    BAD_KEY_VARINT
    BAD_KEY
    BAD_VALUE_VARINT
    BAD_VALUE
    BAD_HEADER_COUNT_VARINT
    BAD_HEADER_COUNT
    BAD_HEADER_KEY
    BAD_HEADER_VALUE_VARINT
    BAD_HEADER_VALUE
    BAD_RECORD_SIZE

cdef enum:
    MIN_RECORD_SIZE = 7


cdef struct RecordSpan:
    Py_ssize_t end          # first byte after this record
    int32_t length
    int64_t ts_delta
    int32_t offset_delta
    Py_ssize_t key          # where the key bytes start
    int32_t klen            # -1: null key
    Py_ssize_t value
    int32_t vlen            # -1: null value
    int32_t hcount
    int64_t bad             # the offending value, for messages


cdef struct HeaderSpan:
    Py_ssize_t key
    int32_t klen
    Py_ssize_t value
    int32_t vlen            # -1: null value


cdef inline int _blob(const uint8_t* p, Py_ssize_t* pos, Py_ssize_t end, Py_ssize_t* start,
                      int32_t* length, int bad_varint, int bad_length) noexcept nogil:
    if read_varint(p, pos, end, length) < 0:
        return bad_varint
    if length[0] == -1:
        return WALK_OK
    if length[0] < 0 or pos[0] + length[0] > end:
        return bad_length
    start[0] = pos[0]
    pos[0] += length[0]
    return WALK_OK


cdef inline int walk_record(const uint8_t* p, Py_ssize_t* pos, Py_ssize_t n,
                            RecordSpan* r) noexcept nogil:
    """Read a record up to its headers; `*pos` is left at the first header."""
    cdef int err
    if read_varint(p, pos, n, &r.length) < 0:
        return BAD_LENGTH_VARINT
    if r.length < MIN_RECORD_SIZE - 1 or pos[0] + r.length > n:
        r.bad = r.length
        return BAD_LENGTH
    r.end = pos[0] + r.length
    pos[0] += 1  # record attributes: unused
    if (read_varlong(p, pos, r.end, &r.ts_delta) < 0
            or read_varint(p, pos, r.end, &r.offset_delta) < 0):
        return BAD_DELTAS
    err = _blob(p, pos, r.end, &r.key, &r.klen, BAD_KEY_VARINT, BAD_KEY)
    if err:
        r.bad = r.klen
        return err
    err = _blob(p, pos, r.end, &r.value, &r.vlen, BAD_VALUE_VARINT, BAD_VALUE)
    if err:
        r.bad = r.vlen
        return err
    if read_varint(p, pos, r.end, &r.hcount) < 0:
        return BAD_HEADER_COUNT_VARINT
    if r.hcount < 0 or r.hcount > (r.end - pos[0]) // 2:
        r.bad = r.hcount
        return BAD_HEADER_COUNT
    return WALK_OK


cdef inline int walk_header(const uint8_t* p, Py_ssize_t* pos, RecordSpan* r,
                            HeaderSpan* h) noexcept nogil:
    if read_varint(p, pos, r.end, &h.klen) < 0 or h.klen < 0 or pos[0] + h.klen > r.end:
        return BAD_HEADER_KEY
    h.key = pos[0]
    pos[0] += h.klen
    cdef int err = _blob(p, pos, r.end, &h.value, &h.vlen, BAD_HEADER_VALUE_VARINT,
                         BAD_HEADER_VALUE)
    if err:
        r.bad = h.vlen
    return err


cdef inline int end_record(Py_ssize_t pos, RecordSpan* r) noexcept nogil:
    if pos != r.end:
        r.bad = r.length
        return BAD_RECORD_SIZE
    return WALK_OK


cdef inline str walk_message(int err, RecordSpan* r, Py_ssize_t remaining):
    if err == BAD_LENGTH_VARINT:
        return "malformed record length varint"
    if err == BAD_LENGTH:
        return f"record length {r.bad} invalid for {remaining} remaining bytes"
    if err == BAD_DELTAS:
        return "malformed timestamp/offset delta"
    if err == BAD_KEY_VARINT:
        return "malformed key length"
    if err == BAD_KEY:
        return f"invalid key length {r.bad}"
    if err == BAD_VALUE_VARINT:
        return "malformed value length"
    if err == BAD_VALUE:
        return f"invalid value length {r.bad}"
    if err == BAD_HEADER_COUNT_VARINT:
        return "malformed header count"
    if err == BAD_HEADER_COUNT:
        return f"invalid header count {r.bad}"
    if err == BAD_HEADER_KEY:
        return "invalid header key length"
    if err == BAD_HEADER_VALUE_VARINT:
        return "malformed header value length"
    if err == BAD_HEADER_VALUE:
        return f"invalid header value length {r.bad}"
    return f"record length {r.bad} does not match its fields"
