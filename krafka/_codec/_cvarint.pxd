# Inline C-level readers/writers shared by the compiled codec modules.
# Readers return 0 on success and -1 on malformed/truncated input (the caller raises).
from libc.stdint cimport int32_t, int64_t, uint32_t, uint64_t, uint8_t


cdef inline int read_uvarint64(const uint8_t* p, Py_ssize_t* pos, Py_ssize_t end,
                               int max_bytes, uint64_t* out) noexcept nogil:
    cdef uint64_t result = 0
    cdef int shift = 0
    cdef int i
    cdef uint8_t b
    cdef Py_ssize_t q = pos[0]
    # one- and two-byte varints (most lengths and deltas) without the loop
    if q + 1 < end:
        b = p[q]
        if b < 0x80:
            pos[0] = q + 1
            out[0] = b
            return 0
        if p[q + 1] < 0x80:
            pos[0] = q + 2
            out[0] = (b & 0x7F) | (<uint64_t>p[q + 1] << 7)
            return 0
    for i in range(max_bytes):
        if q >= end:
            return -1
        b = p[q]
        q += 1
        result |= (<uint64_t>(b & 0x7F)) << shift
        if not (b & 0x80):
            pos[0] = q
            out[0] = result
            return 0
        shift += 7
    return -1


cdef inline int read_varint(const uint8_t* p, Py_ssize_t* pos, Py_ssize_t end,
                            int32_t* out) noexcept nogil:
    cdef uint64_t raw
    cdef uint32_t r32
    if read_uvarint64(p, pos, end, 5, &raw) < 0:
        return -1
    r32 = <uint32_t>raw
    out[0] = <int32_t>((r32 >> 1) ^ (-(<int32_t>(r32 & 1))))
    return 0


cdef inline int read_varlong(const uint8_t* p, Py_ssize_t* pos, Py_ssize_t end,
                             int64_t* out) noexcept nogil:
    cdef uint64_t raw
    if read_uvarint64(p, pos, end, 10, &raw) < 0:
        return -1
    out[0] = <int64_t>((raw >> 1) ^ (-(<int64_t>(raw & 1))))
    return 0


cdef inline Py_ssize_t write_uvarint(uint8_t* p, uint64_t raw) noexcept nogil:
    cdef Py_ssize_t n = 0
    if raw < 0x80:
        p[0] = <uint8_t>raw
        return 1
    if raw < 0x4000:
        p[0] = <uint8_t>((raw & 0x7F) | 0x80)
        p[1] = <uint8_t>(raw >> 7)
        return 2
    while raw > 0x7F:
        p[n] = <uint8_t>((raw & 0x7F) | 0x80)
        raw >>= 7
        n += 1
    p[n] = <uint8_t>raw
    return n + 1


cdef inline Py_ssize_t write_varint(uint8_t* p, int32_t v) noexcept nogil:
    return write_uvarint(p, <uint32_t>((<uint32_t>v << 1) ^ <uint32_t>(v >> 31)))


cdef inline Py_ssize_t write_varlong(uint8_t* p, int64_t v) noexcept nogil:
    return write_uvarint(p, (<uint64_t>v << 1) ^ <uint64_t>(v >> 63))


cdef inline Py_ssize_t size_uvarint(uint64_t raw) noexcept nogil:
    cdef Py_ssize_t n = 1
    if raw < 0x80:
        return 1
    if raw < 0x4000:
        return 2
    if raw < 0x200000:
        return 3
    while raw > 0x7F:
        raw >>= 7
        n += 1
    return n


cdef inline Py_ssize_t size_varint(int32_t v) noexcept nogil:
    return size_uvarint(<uint32_t>((<uint32_t>v << 1) ^ <uint32_t>(v >> 31)))


cdef inline Py_ssize_t size_varlong(int64_t v) noexcept nogil:
    return size_uvarint((<uint64_t>v << 1) ^ <uint64_t>(v >> 63))


cdef inline int64_t be64(const uint8_t* p) noexcept nogil:
    return <int64_t>(
        (<uint64_t>p[0] << 56) | (<uint64_t>p[1] << 48) | (<uint64_t>p[2] << 40)
        | (<uint64_t>p[3] << 32) | (<uint64_t>p[4] << 24) | (<uint64_t>p[5] << 16)
        | (<uint64_t>p[6] << 8) | <uint64_t>p[7])


cdef inline int32_t be32(const uint8_t* p) noexcept nogil:
    return <int32_t>((<uint32_t>p[0] << 24) | (<uint32_t>p[1] << 16)
                     | (<uint32_t>p[2] << 8) | <uint32_t>p[3])



cdef inline void put64(uint8_t* p, int64_t v) noexcept nogil:
    cdef uint64_t u = <uint64_t>v
    cdef int i
    for i in range(8):
        p[i] = <uint8_t>(u >> (56 - 8 * i))


cdef inline void put32(uint8_t* p, int32_t v) noexcept nogil:
    cdef uint32_t u = <uint32_t>v
    p[0] = <uint8_t>(u >> 24)
    p[1] = <uint8_t>(u >> 16)
    p[2] = <uint8_t>(u >> 8)
    p[3] = <uint8_t>u


cdef inline void put16(uint8_t* p, int v) noexcept nogil:
    p[0] = <uint8_t>((v >> 8) & 0xFF)
    p[1] = <uint8_t>(v & 0xFF)
