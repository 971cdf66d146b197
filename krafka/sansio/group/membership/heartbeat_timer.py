"""When a KIP-848 or share-group member heartbeats next (Java's HeartbeatRequestState).

The coordinator sets the interval in every answer (honoured, at least 1 s; the first heartbeat
goes at once). One heartbeat is in flight at a time. A failed heartbeat is retried as soon as
the backoff allows instead of after the interval; errors that mean "rejoin" or "the coordinator
moved" skip the backoff. Pure arithmetic on the caller's `now`.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final

from krafka.sansio.backoff import Backoff, BackoffPolicy

#: The shortest heartbeat interval taken from a coordinator (a zero or tiny one would hot-loop).
MIN_INTERVAL: Final = 1.0


@dataclass(slots=True)
class HeartbeatTimer:
    policy: BackoffPolicy
    rand: Callable[[], float] = random.random
    interval: float = 0.0
    next_at: float = 0.0
    in_flight: bool = False
    _backoff: Backoff = field(init=False)

    def __post_init__(self) -> None:
        self._backoff = Backoff(self.policy)

    def sent(self, now: float) -> None:
        self.in_flight = True
        self.next_at = now + self.interval

    def succeeded(self, now: float, interval_ms: int) -> None:
        """An answer without error; `interval_ms` is the coordinator's heartbeat interval."""
        self.in_flight = False
        self._backoff.succeeded()
        if interval_ms > 0:
            interval = max(interval_ms / 1000.0, MIN_INTERVAL)
            if interval != self.interval:
                self.interval = interval
                self.next_at = now + interval

    def failed(self, now: float) -> None:
        """No answer, or an error: the next heartbeat goes when the backoff allows."""
        self.in_flight = False
        self._backoff.failed(now, self.rand)
        self.next_at = now

    def skip_backoff(self) -> None:
        """Send the next heartbeat without waiting (fenced: rejoin; coordinator moved)."""
        self._backoff.succeeded()

    def reset(self) -> None:
        """Forget the heartbeat in flight and any backoff (its answer will be ignored)."""
        self.in_flight = False
        self._backoff.succeeded()
        self.next_at = 0.0

    def due(self, now: float, *, now_wanted: bool = False) -> bool:
        """A heartbeat may go: none in flight, backoff over, and the interval elapsed (unless
        the state wants one at once)."""
        if self.in_flight or self._backoff.wait_time(now) > 0:
            return False
        return now_wanted or now >= self.next_at

    def next_deadline(self, *, now_wanted: bool = False) -> float | None:
        if self.in_flight:
            return None
        backoff_at = self._backoff.retry_at if self._backoff.failures else 0.0
        return max(backoff_at, 0.0 if now_wanted else self.next_at)


__all__ = ["MIN_INTERVAL", "HeartbeatTimer"]
