from libc.stdint cimport int32_t, uint8_t, uint32_t


cdef inline int32_t _murmur2(const uint8_t* data, Py_ssize_t length) noexcept nogil:
    cdef uint32_t m = 0x5BD1E995U
    cdef uint32_t seed = 0x9747B28CU
    cdef uint32_t h = seed ^ <uint32_t>length
    cdef uint32_t k
    cdef Py_ssize_t i, full = length & ~3
    for i in range(0, full, 4):
        k = (<uint32_t>data[i] | (<uint32_t>data[i + 1] << 8) | (<uint32_t>data[i + 2] << 16)
             | (<uint32_t>data[i + 3] << 24))
        k *= m
        k ^= k >> 24
        k *= m
        h *= m
        h ^= k
    cdef int rest = length & 3
    if rest == 3:
        h ^= <uint32_t>data[full + 2] << 16
    if rest >= 2:
        h ^= <uint32_t>data[full + 1] << 8
    if rest >= 1:
        h ^= data[full]
        h *= m
    h ^= h >> 13
    h *= m
    h ^= h >> 15
    return <int32_t>h
