# cython: language_level=3, boundscheck=False, wraparound=False
"""Compiled twin of `murmur.py`: Java's `Utils.murmur2`, bit for bit."""

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_GET_SIZE
from libc.stdint cimport int32_t, uint8_t, uint32_t

# `_murmur2` (the hash itself) is in `_murmur.pxd`, inlined where keys are partitioned.


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
