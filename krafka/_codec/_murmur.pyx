# cython: language_level=3, boundscheck=False, wraparound=False
"""Compiled twin of `murmur.py`: Java's `Utils.murmur2`, bit for bit."""

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_GET_SIZE
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


def murmur2(data):
    """The Java client's murmur2 hash of `data` as a signed 32-bit int."""
    cdef const uint8_t[::1] mv
    if type(data) is bytes:
        return _murmur2(<const uint8_t*>PyBytes_AS_STRING(data), PyBytes_GET_SIZE(data))
    mv = memoryview(data).cast("B")
    if mv.shape[0] == 0:
        return _murmur2(<const uint8_t*>"", 0)
    return _murmur2(&mv[0], mv.shape[0])


def murmur2_partition(key, int num_partitions):
    """Java's default partition for a non-null key: `toPositive(murmur2(key)) % n`."""
    if num_partitions <= 0:
        raise ValueError("num_partitions must be positive")
    return (murmur2(key) & 0x7FFFFFFF) % num_partitions
