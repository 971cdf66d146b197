"""`ParkingLock`: the lock a sync client's loop thread holds while it runs and lets go of while
it waits for I/O, so that a caller thread may do the loop's work on its own thread for a moment
(`krafka.sync.loop`).

The loop thread calls `run()` (take it, waiting for a paused caller to finish) and `park()`
(let go before waiting for I/O); callers call `pause()` (hold it, waiting while the loop runs;
False on the loop's own thread, which must never wait for itself) or `try_pause()` (hold it
only if it is free now), and `resume()`. The compiled
twin (`_parking.pyx`) does the same on CPython's raw lock; this one is the readable reference
and the fallback (`KRAFKA_NO_EXTENSIONS=1`).
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from krafka import _twins


class PureParkingLock:
    """Held by a loop thread while it runs; other threads `pause` it while it is parked."""

    __slots__ = ("_lock", "_loop")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._loop: int | None = None

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
