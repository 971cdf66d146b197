# cython: language_level=3
"""The compiled `ParkingLock`: `krafka.sync.parking.PureParkingLock` on CPython's raw lock.

The sync producer takes and gives back this lock once per record; `threading.Lock`'s methods
parse their arguments on every call, which costs more than the append they guard. On Linux the
lock is a POSIX semaphore of its own: CPython 3.11's raw lock reads the monotonic clock on every
acquire, a try included (4% of a sync producer's CPU). Waiting is done without the GIL, in
slices, so a waiting main thread still sees Ctrl-C.
"""

cimport cython
from cpython.exc cimport PyErr_CheckSignals
from cpython.pythread cimport (
    NOWAIT_LOCK,
    WAIT_LOCK,
    PY_LOCK_ACQUIRED,
    PyThread_acquire_lock,
    PyThread_allocate_lock,
    PyThread_free_lock,
    PyThread_release_lock,
)

cdef extern from "pythread.h":
    int PyThread_acquire_lock_timed(PyThread_type_lock, long long microseconds, int intr) nogil
    unsigned long PyThread_get_thread_ident()

cdef extern from *:
    """
    #if defined(__linux__)
    #include <errno.h>
    #include <semaphore.h>
    #include <time.h>
    static void *krafka_lock_new(void) {
        sem_t *s = (sem_t *)PyMem_RawMalloc(sizeof(sem_t));
        if (s != NULL && sem_init(s, 0, 1) != 0) { PyMem_RawFree(s); s = NULL; }
        return s;
    }
    static void krafka_lock_free(void *l) { sem_destroy((sem_t *)l); PyMem_RawFree(l); }
    static int krafka_lock_try(void *l) { return sem_trywait((sem_t *)l) == 0; }
    /* 1 once taken; 0 after `us` microseconds or a signal (the caller checks for it) */
    static int krafka_lock_wait(void *l, long long us) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_sec += (time_t)(us / 1000000);
        ts.tv_nsec += (long)(us % 1000000) * 1000;
        if (ts.tv_nsec >= 1000000000L) { ts.tv_sec += 1; ts.tv_nsec -= 1000000000L; }
        return sem_timedwait((sem_t *)l, &ts) == 0;
    }
    static void krafka_lock_release(void *l) { sem_post((sem_t *)l); }
    #else
    static void *krafka_lock_new(void) { return PyThread_allocate_lock(); }
    static void krafka_lock_free(void *l) { PyThread_free_lock(l); }
    static int krafka_lock_try(void *l) {
        return PyThread_acquire_lock(l, NOWAIT_LOCK) == PY_LOCK_ACQUIRED;
    }
    static int krafka_lock_wait(void *l, long long us) {
        return PyThread_acquire_lock_timed(l, us, 1) == PY_LOCK_ACQUIRED;
    }
    static void krafka_lock_release(void *l) { PyThread_release_lock(l); }
    #endif
    """
    void* krafka_lock_new()
    void krafka_lock_free(void* lock)
    bint krafka_lock_try(void* lock) nogil
    bint krafka_lock_wait(void* lock, long long us) nogil
    void krafka_lock_release(void* lock) nogil

from posix.time cimport CLOCK_MONOTONIC, clock_gettime, timespec

#: Microseconds a waiter sleeps on the lock before checking for signals.
cdef long long _SLICE = 50_000
#: Microseconds a holding loop thread sleeps at most before looking at the clock again.
cdef double _HOLD_SLICE = 1_000_000.0
#: Seconds a sender's records hold the loop thread off (`sent_c`), and how long after its
#: next timer a holding loop thread waits for a caller to run it (`hold`).
cdef double _SEND_HOLD = 0.001
cdef double _TIMER_GRACE = 0.001  # `krafka.sync.parking.TIMER_GRACE`


cdef inline double _now() noexcept nogil:
    """`time.monotonic()` (the loop's clock), without the GIL."""
    cdef timespec ts
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return ts.tv_sec + ts.tv_nsec * 1e-9


@cython.final
cdef class ParkingLock:
    """Held by a loop thread while it runs (`run`, `park`); other threads `pause` it while it
    is parked and `resume` it after."""

    def __cinit__(self):
        self._lock = krafka_lock_new()
        self._nudge = PyThread_allocate_lock()
        if self._lock == NULL or self._nudge == NULL:
            raise MemoryError("cannot allocate a lock")
        PyThread_acquire_lock(self._nudge, WAIT_LOCK)  # released by `nudge`
        self._next_timer = float("inf")

    def __dealloc__(self):
        if self._lock != NULL:
            krafka_lock_free(self._lock)
        if self._nudge != NULL:
            PyThread_free_lock(self._nudge)

    @property
    def hold_until(self):
        """Until when (`time.monotonic()`) `hold` keeps the loop thread waiting."""
        return self._hold_until

    @hold_until.setter
    def hold_until(self, double value):
        self._hold_until = value

    @property
    def next_timer(self):
        """When (`time.monotonic()`) the loop's next timer is due, as its runner last saw."""
        return self._next_timer

    @next_timer.setter
    def next_timer(self, double value):
        self._next_timer = value

    def hold(self):
        """(The loop thread) let go and wait, without the GIL, until `hold_until` passes, or
        until a caller failed to run the loop's next timer (`next_timer` + 1 ms; both read
        again as callers move them), or `nudge()`; then `run`. A wait that ended on time looks
        again once it has the GIL back: the sender it waited for may have held the GIL (and
        moved `hold_until` on) meanwhile, and then it keeps waiting."""
        cdef int got = 0
        self._holder = 0
        krafka_lock_release(self._lock)
        while True:
            with nogil:
                got = self._wait_hold()
            if self._nudged or got or _now() >= self._hold_end():
                break
        if self._nudged:
            if not got:  # `nudge` released it (or is about to): take it back
                with nogil:
                    PyThread_acquire_lock(self._nudge, WAIT_LOCK)
            self._nudged = False
        self.run()

    cdef double _hold_end(self) noexcept nogil:
        """When a hold ends at the latest: `hold_until`, or 1 ms after the loop's next timer."""
        cdef double timer = self._next_timer + _TIMER_GRACE
        return self._hold_until if self._hold_until < timer else timer

    cdef int _wait_hold(self) noexcept nogil:
        """Wait (no GIL) until the hold ends or `nudge()`; 1 if the nudge lock was taken."""
        cdef double now, until
        while not self._nudged:
            now = _now()
            until = self._hold_end()
            if now >= until:
                return 0
            if PyThread_acquire_lock_timed(
                self._nudge, <long long>min((until - now) * 1e6 + 1, _HOLD_SLICE), 0
            ) == PY_LOCK_ACQUIRED:
                return 1
        return 0

    cdef bint sent_c(self) noexcept:
        """(A caller holding the loop, after it appended a record) every 32nd record, hold the
        loop thread off for 1 ms more; True when the loop's next timer is due: the caller
        then runs the loop's turns itself (`LoopThread.run_held`)."""
        cdef double now
        self._sends += 1
        if self._sends & 31:
            return False
        now = _now()
        if now + _SEND_HOLD > self._hold_until:
            self._hold_until = now + _SEND_HOLD
        return now >= self._next_timer

    def sent(self):
        """See `sent_c`."""
        return self.sent_c()

    def nudge(self):
        """End the loop thread's `hold` now (or its next one, if it is not holding)."""
        if not self._nudged:
            self._nudged = True
            PyThread_release_lock(self._nudge)

    cdef int _wait(self) except -1:
        cdef int got = 0
        while got != PY_LOCK_ACQUIRED:
            with nogil:
                got = PY_LOCK_ACQUIRED if krafka_lock_wait(self._lock, _SLICE) else 0
            if got != PY_LOCK_ACQUIRED:
                PyErr_CheckSignals()
        return 0

    def run(self):
        """(The loop thread) take the lock to run, waiting for a paused caller to resume."""
        self._loop = PyThread_get_thread_ident()
        if not krafka_lock_try(self._lock):
            self._wait()
        self._holder = self._loop

    def park(self):
        """(The loop thread) let go while waiting for I/O."""
        self._holder = 0
        krafka_lock_release(self._lock)

    cdef int pause_c(self) except -1:
        cdef unsigned long me = PyThread_get_thread_ident()
        if krafka_lock_try(self._lock):
            self._holder = me
            return 1
        if me == self._loop or me == self._holder:
            return 0
        self._wait()
        self._holder = me
        return 1

    cdef bint try_pause_c(self) noexcept:
        """Hold the loop if it is parked right now; never waits."""
        if krafka_lock_try(self._lock):
            self._holder = PyThread_get_thread_ident()
            return True
        return False

    cdef void resume_c(self) noexcept:
        self._holder = 0
        krafka_lock_release(self._lock)

    def pause(self):
        """Hold the parked loop: True once held (then `resume()`), waiting while it runs;
        False on a thread that holds it already, and on the loop's own thread (neither
        waits for itself: a callback that sends, run by a caller running the loop)."""
        return self.pause_c() == 1

    def try_pause(self):
        """Hold the loop if it is parked right now: True once held (then `resume()`); never
        waits."""
        return self.try_pause_c()

    def resume(self):
        """Let go of a loop held by `pause()`."""
        self.resume_c()
