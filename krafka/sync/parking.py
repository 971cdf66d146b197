"""`ParkingLock`: the lock a sync client's loop thread holds while it runs and lets go of while
it waits for I/O, so that a caller thread may do the loop's work on its own thread for a moment
(`krafka.sync.loop`).

The loop thread calls `run()` (take it, waiting for a paused caller to finish) and `park()`
(let go before waiting for I/O), or `hold(timeout)` (let go and wait off the selector while a
caller runs the loop: until `hold_until`, or `nudge()`); callers call `pause()` (hold it,
waiting while the loop runs; False on the loop's own thread, which must never wait for
itself) or `try_pause()` (hold it only if it is free now), and `resume()`. The compiled
twin (`_parking.pyx`) does the same on CPython's raw lock; this one is the readable reference
and the fallback (`KRAFKA_NO_EXTENSIONS=1`).
"""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING, Any

from krafka import _twins


class PureParkingLock:
    """Held by a loop thread while it runs; other threads `pause` it while it is parked."""

    __slots__ = ("_lock", "_loop", "_nudged", "hold_until")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._loop: int | None = None
        self._nudged = threading.Event()
        #: Until when (`time.monotonic()`) `hold` keeps the loop thread waiting.
        self.hold_until = 0.0

    def hold(self, timeout: float) -> None:
        """(The loop thread) let go and wait until `hold_until` passes (read again as callers
        move it), `timeout` seconds pass or `nudge()` is called; then `run`."""
        end = time.monotonic() + timeout
        self._lock.release()
        try:
            while not self._nudged.is_set():
                now = time.monotonic()
                until = min(self.hold_until, end)
                if now >= until:
                    break
                self._nudged.wait(min(until - now, 1.0))
            self._nudged.clear()
        finally:
            self.run()

    def nudge(self) -> None:
        """End the loop thread's `hold` now (or its next one, if it is not holding)."""
        self._nudged.set()

    def run(self) -> None:
        self._loop = threading.get_ident()
        self._lock.acquire()

    def park(self) -> None:
        self._lock.release()

    def pause(self) -> bool:
        if self._lock.acquire(False):
            return True
        if threading.get_ident() == self._loop:
            return False
        self._lock.acquire()
        return True

    def try_pause(self) -> bool:
        """Hold the loop if it is parked right now (never waits)."""
        return self._lock.acquire(False)

    def resume(self) -> None:
        self._lock.release()


def implementations() -> dict[str, Any]:
    """Every implementation importable here, by name (ignores KRAFKA_NO_EXTENSIONS)."""
    return _twins.implementations(PureParkingLock, "krafka.sync._parking", "ParkingLock")


if TYPE_CHECKING:
    ParkingLock = PureParkingLock
else:
    ParkingLock = _twins.selected(implementations())

__all__ = ["ParkingLock", "PureParkingLock", "implementations"]
