cimport cython
from cpython.pythread cimport PyThread_type_lock


@cython.final
cdef class ParkingLock:
    cdef void* _lock  # see `krafka_lock_new` in _parking.pyx
    cdef unsigned long _loop
    cdef unsigned long _holder
    cdef PyThread_type_lock _nudge
    cdef bint _nudged
    cdef double _hold_until
    cdef double _next_timer
    cdef unsigned int _sends

    cdef int _wait(self) except -1
    cdef double _hold_end(self) noexcept nogil
    cdef int _wait_hold(self) noexcept nogil
    cdef int pause_c(self) except -1
    cdef bint try_pause_c(self) noexcept
    cdef void resume_c(self) noexcept
    cdef bint sent_c(self) noexcept
