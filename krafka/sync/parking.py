"""`ParkingLock`: the lock a sync client's loop thread holds while it runs and lets go of while
it waits for I/O, so that a caller thread may do the loop's work on its own thread for a moment
(`krafka.sync.loop`).

The loop thread calls `run()` (take it, waiting for a paused caller to finish) and `park()`
(let go before waiting for I/O), or `hold()` (let go and wait off the selector while a caller
runs the loop: until `hold_until`, or `nudge()`); callers call `pause()` (hold it,
waiting while the loop runs; False on the loop's own thread, which must never wait for
itself) or `try_pause()` (hold it only if it is free now), and `resume()`. The compiled
twin (`_parking.pyx`) does the same on CPython's raw lock; this one is the readable reference
and the fallback (`KRAFKA_NO_EXTENSIONS=1`).
"""

from __future__ import annotations

import math
import threading
import time
from typing import TYPE_CHECKING, Any

from krafka import _twins

#: Seconds a sender's records hold the loop thread off (`sent`), and how long after its next
#: timer a holding loop thread waits for a caller to run it (`hold`).
_SEND_HOLD = 0.001
TIMER_GRACE = 0.001


class PureParkingLock:
    """Held by a loop thread while it runs; other threads `pause` it while it is parked."""

    __slots__ = ("_holder", "_lock", "_loop", "_nudged", "_sends", "hold_until", "next_timer")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._loop: int | None = None
        self._holder: int | None = None
        self._nudged = threading.Event()
        self._sends = 0
        #: Until when (`time.monotonic()`) `hold` keeps the loop thread waiting.
        self.hold_until = 0.0
        #: When (`time.monotonic()`) the loop's next timer is due, as its runner last saw.
        self.next_timer = math.inf

    def hold(self) -> None:
        """(The loop thread) let go and wait until `hold_until` passes, or until a caller
        failed to run the loop's next timer (`next_timer` + 1 ms; both read again as callers
        move them), or `nudge()`; then `run`."""
        self._holder = None
        self._lock.release()
        try:
            while not self._nudged.is_set():
                now = time.monotonic()
                until = min(self.hold_until, self.next_timer + TIMER_GRACE)
                if now >= until:
                    break
                self._nudged.wait(min(until - now, 1.0))
            self._nudged.clear()
        finally:
            self.run()

    def sent(self) -> bool:
        """(A caller holding the loop, after it appended a record) every 32nd record, hold the
        loop thread off for 1 ms more; True when the loop's next timer is due: the caller
        then runs the loop's turns itself (`LoopThread.run_held`)."""
        self._sends += 1
        if self._sends % 32:
            return False
        now = time.monotonic()
        self.hold_until = max(self.hold_until, now + _SEND_HOLD)
        return now >= self.next_timer

    def nudge(self) -> None:
        """End the loop thread's `hold` now (or its next one, if it is not holding)."""
        self._nudged.set()

    def run(self) -> None:
        self._loop = threading.get_ident()
        self._lock.acquire()
        self._holder = self._loop

    def park(self) -> None:
        self._holder = None
        self._lock.release()

    def pause(self) -> bool:
        """Hold the parked loop: True once held (then `resume()`), waiting while it runs;
        False on a thread that holds it already, and on the loop's own thread (neither
        waits for itself: a callback that sends, run by a caller running the loop)."""
        me = threading.get_ident()
        if self._lock.acquire(False):
            self._holder = me
            return True
        if me == self._loop or me == self._holder:
            return False
        self._lock.acquire()
        self._holder = me
        return True

    def try_pause(self) -> bool:
        """Hold the loop if it is parked right now (never waits)."""
        if self._lock.acquire(False):
            self._holder = threading.get_ident()
            return True
        return False

    def resume(self) -> None:
        self._holder = None
        self._lock.release()


def implementations() -> dict[str, Any]:
    """Every implementation importable here, by name (ignores KRAFKA_NO_EXTENSIONS)."""
    return _twins.implementations(PureParkingLock, "krafka.sync._parking", "ParkingLock")


if TYPE_CHECKING:
    ParkingLock = PureParkingLock
else:
    ParkingLock = _twins.selected(implementations())

__all__ = ["TIMER_GRACE", "ParkingLock", "PureParkingLock", "implementations"]
