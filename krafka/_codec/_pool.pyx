# cython: language_level=3
"""Pooled memory blocks for the compiled decoders: Arrow's column buffers (`_arrow.pyx`) and
decompressed batch bodies (`_batchbody.pyx`). Allocating a large block per chunk or batch lets
glibc hand the heap's top back after each one and fault it in again for the next; freed blocks
are kept here instead, and `PooledMem` lends one through the buffer protocol until its last
reader lets go."""

cimport cython
from cpython.buffer cimport PyBuffer_FillInfo
from cpython.mem cimport PyMem_Free, PyMem_Malloc
from libc.stdint cimport uint8_t


# A few freed blocks (Arrow column buffers, decompressed batch bodies) are kept for reuse: the
# next chunk or batch then writes into memory that is already mapped (no page faults, no
# mmap/munmap per chunk). Everything runs under the GIL.
cdef Py_ssize_t POOL_LIMIT = 256 * 1024 * 1024
cdef uint8_t* _pool_p[POOL_SLOTS]
cdef Py_ssize_t _pool_cap[POOL_SLOTS]
cdef int _pool_n = 0
cdef Py_ssize_t _pool_bytes = 0


cdef void pool_release(uint8_t* p, Py_ssize_t cap) noexcept:
    global _pool_n, _pool_bytes
    if p == NULL:
        return
    if cap >= POOL_MIN and cap <= POOL_LIMIT:
        _make_room(cap)
    if cap >= POOL_MIN and _pool_n < POOL_SLOTS and _pool_bytes + cap <= POOL_LIMIT:
        _pool_p[_pool_n] = p
        _pool_cap[_pool_n] = cap
        _pool_n += 1
        _pool_bytes += cap
    else:
        PyMem_Free(p)


cdef void _make_room(Py_ssize_t cap) noexcept:
    """Free pooled blocks smaller than `cap` (less than half its size when only the slots are
    short), smallest first, until a block of `cap` fits: the pool keeps the big blocks a
    chunk's columns grow into, not the small ones left over."""
    global _pool_n, _pool_bytes
    cdef int i, smallest
    cdef bint full_bytes
    while _pool_n and (_pool_n == POOL_SLOTS or _pool_bytes + cap > POOL_LIMIT):
        full_bytes = _pool_bytes + cap > POOL_LIMIT
        smallest = 0
        for i in range(1, _pool_n):
            if _pool_cap[i] < _pool_cap[smallest]:
                smallest = i
        if _pool_cap[smallest] >= (cap if full_bytes else cap // 2):
            return
        PyMem_Free(_pool_p[smallest])
        _pool_bytes -= _pool_cap[smallest]
        _pool_n -= 1
        _pool_p[smallest] = _pool_p[_pool_n]
        _pool_cap[smallest] = _pool_cap[_pool_n]


cdef uint8_t* pool_acquire(Py_ssize_t need, Py_ssize_t* cap) noexcept:
    """The smallest pooled block holding `need` bytes (NULL when none does)."""
    global _pool_n, _pool_bytes
    cdef int i, best = -1
    for i in range(_pool_n):
        if _pool_cap[i] >= need and (best < 0 or _pool_cap[i] < _pool_cap[best]):
            best = i
    if best < 0:
        return NULL
    cdef uint8_t* p = _pool_p[best]
    cap[0] = _pool_cap[best]
    _pool_bytes -= cap[0]
    _pool_n -= 1
    _pool_p[best] = _pool_p[_pool_n]
    _pool_cap[best] = _pool_cap[_pool_n]
    return p


@cython.final
cdef class PooledMem:
    """Owns one pooled block, lent through the buffer protocol (`n` bytes; writable only when
    `writable`); the block goes back to the pool when this object is freed."""

    def __getbuffer__(self, Py_buffer* view, int flags):
        PyBuffer_FillInfo(view, self, self.p, self.n, 0 if self.writable else 1, flags)

    def __releasebuffer__(self, Py_buffer* view):
        pass

    def __dealloc__(self):
        pool_release(self.p, self.cap)


cdef PooledMem pooled(Py_ssize_t need):
    """A writable block of at least `need` bytes: the pool's smallest that holds them, else a
    new one (a power of two from 64 KiB, so blocks fit the ones that follow)."""
    cdef PooledMem m = PooledMem.__new__(PooledMem)
    cdef Py_ssize_t cap = POOL_MIN
    m.p = pool_acquire(need, &m.cap)
    if m.p == NULL:
        while cap < need:
            cap *= 2
        m.p = <uint8_t*>PyMem_Malloc(cap)
        if m.p == NULL:
            raise MemoryError()
        m.cap = cap
    m.n = need
    m.writable = True
    return m
