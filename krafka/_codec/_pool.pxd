# Pooled memory blocks shared by the compiled decoders (see `_pool.pyx`).
from libc.stdint cimport uint8_t

cdef enum:
    POOL_SLOTS = 48
    POOL_MIN = 64 * 1024  # smaller blocks are not pooled


cdef class PooledMem:
    cdef uint8_t* p
    cdef Py_ssize_t n
    cdef Py_ssize_t cap
    cdef bint writable


cdef void pool_release(uint8_t* p, Py_ssize_t cap) noexcept
cdef uint8_t* pool_acquire(Py_ssize_t need, Py_ssize_t* cap) noexcept
cdef PooledMem pooled(Py_ssize_t need)
