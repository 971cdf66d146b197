# cython: language_level=3
"""The compiled `ParkingLock`: `krafka.sync.parking.PureParkingLock` on CPython's raw lock.

The sync producer takes and gives back this lock once per record; `threading.Lock`'s methods
parse their arguments on every call, which costs more than the append they guard. Waiting is
done without the GIL, in slices, so a waiting main thread still sees Ctrl-C.
"""

cimport cython
from cpython.exc cimport PyErr_CheckSignals
from cpython.pythread cimport (
    NOWAIT_LOCK,
    PY_LOCK_ACQUIRED,
    PyThread_acquire_lock,
    PyThread_allocate_lock,
    PyThread_free_lock,
    PyThread_release_lock,
)

cdef extern from "pythread.h":
    int PyThread_acquire_lock_timed(PyThread_type_lock, long long microseconds, int intr) nogil
    unsigned long PyThread_get_thread_ident()

#: Microseconds a waiter sleeps on the lock before checking for signals.
cdef long long _SLICE = 50_000


@cython.final
cdef class ParkingLock:
    """Held by a loop thread while it runs (`run`, `park`); other threads `pause` it while it
    is parked and `resume` it after."""

    def __cinit__(self):
        self._lock = PyThread_allocate_lock()
        if self._lock == NULL:
            raise MemoryError("cannot allocate a lock")

    def __dealloc__(self):
        if self._lock != NULL:
            PyThread_free_lock(self._lock)

    cdef int _wait(self) except -1:
        cdef int got = 0
        while got != PY_LOCK_ACQUIRED:
            with nogil:
                got = PyThread_acquire_lock_timed(self._lock, _SLICE, 1)
            if got != PY_LOCK_ACQUIRED:
                PyErr_CheckSignals()
        return 0

    def run(self):
        """(The loop thread) take the lock to run, waiting for a paused caller to resume."""
        self._loop = PyThread_get_thread_ident()
        if not PyThread_acquire_lock(self._lock, NOWAIT_LOCK):
            self._wait()

    def park(self):
        """(The loop thread) let go while waiting for I/O."""
        PyThread_release_lock(self._lock)

    cdef int pause_c(self) except -1:
        if PyThread_acquire_lock(self._lock, NOWAIT_LOCK):
            return 1
        if PyThread_get_thread_ident() == self._loop:
            return 0
        self._wait()
        return 1

    cdef bint try_pause_c(self) noexcept:
        """Hold the loop if it is parked right now; never waits."""
        return PyThread_acquire_lock(self._lock, NOWAIT_LOCK) == PY_LOCK_ACQUIRED

    cdef void resume_c(self) noexcept:
        PyThread_release_lock(self._lock)

    def pause(self):
        """Hold the parked loop: True once held (then `resume()`), waiting while it runs;
        False on the loop's own thread (it never waits for itself)."""
        return self.pause_c() == 1

    def try_pause(self):
        """Hold the loop if it is parked right now: True once held (then `resume()`); never
        waits."""
        return self.try_pause_c()

    def resume(self):
        """Let go of a loop held by `pause()`."""
        self.resume_c()
