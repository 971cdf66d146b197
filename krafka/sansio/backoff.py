"""Exponential backoff with jitter, for reconnects and retries.

Pure arithmetic: the caller passes `now` and a random source, the policy answers how long to
wait and whether to give up. Defaults follow the Java client and the Krafka architecture guide:
100 ms initial, doubling, 10 s cap, 20 % jitter, 3 retries.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class BackoffPolicy:
    """How long to wait before attempt `n` (0-based) after a failure."""

    initial: float = 0.1
    maximum: float = 10.0
    multiplier: float = 2.0
    jitter: float = 0.2
    max_retries: int | None = 3

    def __post_init__(self) -> None:
        if self.initial < 0 or self.maximum < self.initial or self.multiplier < 1:
            raise ValueError(f"invalid backoff {self!r}")
        if not 0 <= self.jitter < 1:
            raise ValueError(f"backoff jitter must be in [0, 1), got {self.jitter}")

    def delay(self, failures: int, rand: Callable[[], float] = random.random) -> float:
        """Seconds to wait after `failures` consecutive failures (1 = the first one)."""
        if failures <= 0:
            return 0.0
        try:
            grown = self.initial * self.multiplier ** (failures - 1)
        except OverflowError:  # endless retries (a transaction's EndTxn) grow past any float
            grown = self.maximum
        base = min(self.maximum, grown)
        spread = base * self.jitter
        return max(0.0, base - spread + 2 * spread * rand())

    def exhausted(self, failures: int) -> bool:
        """True when `failures` failures used up every retry."""
        return self.max_retries is not None and failures > self.max_retries


@dataclass(slots=True)
class Backoff:
    """Failure bookkeeping for one target (a broker address): when may it be tried again."""

    policy: BackoffPolicy = field(default_factory=BackoffPolicy)
    failures: int = 0
    retry_at: float = 0.0

    def failed(self, now: float, rand: Callable[[], float] = random.random) -> float:
        """Record a failure at `now`; returns the time of the next allowed attempt."""
        self.failures += 1
        self.retry_at = now + self.policy.delay(self.failures, rand)
        return self.retry_at

    def succeeded(self) -> None:
        self.failures = 0
        self.retry_at = 0.0

    def wait_time(self, now: float) -> float:
        """Seconds until the next attempt is allowed (0 if it is now)."""
        return max(0.0, self.retry_at - now)

    @property
    def exhausted(self) -> bool:
        return self.policy.exhausted(self.failures)
