"""The member's clocks: when to heartbeat, when the session and the poll interval run out.

Java's `Heartbeat`: a heartbeat is due `heartbeat_interval` after the last one was sent (or
after a backoff when one failed); the session is considered expired when no heartbeat answer
arrived for `session_timeout`; the poll interval when the application did not poll for
`max_poll_interval`. Pure arithmetic on the `now` the caller passes.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field

from krafka.sansio.backoff import BackoffPolicy


@dataclass(slots=True)
class HeartbeatClock:
    heartbeat_interval: float
    session_timeout: float
    max_poll_interval: float
    backoff: BackoffPolicy = field(default_factory=BackoffPolicy)
    rand: Callable[[], float] = random.random
    next_heartbeat: float = 0.0
    session_deadline: float = float("inf")
    poll_deadline: float = float("inf")
    in_flight: bool = False
    failures: int = 0

    def polled(self, now: float) -> None:
        """The application polled: the poll interval starts again."""
        self.poll_deadline = now + self.max_poll_interval

    def reset_timeouts(self, now: float) -> None:
        """Heartbeats start (JoinGroup answered): every clock starts from now."""
        self.session_deadline = now + self.session_timeout
        self.poll_deadline = now + self.max_poll_interval
        self.next_heartbeat = now + self.heartbeat_interval

    def sent(self, now: float) -> None:
        self.in_flight = True
        self.next_heartbeat = now + self.heartbeat_interval

    def received(self, now: float) -> None:
        """A heartbeat answer that keeps the session alive."""
        self.in_flight = False
        self.failures = 0
        self.session_deadline = now + self.session_timeout

    def failed(self, now: float) -> None:
        """No useful answer: try again after a backoff (sooner than the interval)."""
        self.in_flight = False
        self.failures += 1
        self.next_heartbeat = now + self.backoff.delay(self.failures, self.rand)

    def due(self, now: float) -> bool:
        return not self.in_flight and now >= self.next_heartbeat

    def session_expired(self, now: float) -> bool:
        return now >= self.session_deadline

    def poll_expired(self, now: float) -> bool:
        return now >= self.poll_deadline


__all__ = ["HeartbeatClock"]
