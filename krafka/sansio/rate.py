"""Rates over a sliding window with an explicit `now`, as Java's `Rate` over two samples.

`record(value, now)` adds to the current sample (one comparison per call); `rate(now)` is the
sum of the current and previous samples over the time they cover, at least one `window`, so a
client that just started does not report a spike. Samples older than two windows are gone:
a rate falls to 0 when the events stop.
"""

from __future__ import annotations

#: Java's metrics.sample.window.ms (30 s): the length of one sample.
WINDOW = 30.0


class WindowedRate:
    """Events (or bytes) per second over the last one to two `window`s."""

    __slots__ = ("current", "previous", "start", "window")

    def __init__(self, window: float = WINDOW) -> None:
        self.window = window
        self.start: float | None = None
        self.current = 0.0
        self.previous = 0.0

    def record(self, value: float, now: float) -> None:
        if self.start is None or now - self.start >= self.window:
            self._roll(now)
        self.current += value

    def rate(self, now: float) -> float:
        if self.start is None:
            return 0.0
        self._roll(now)
        assert self.start is not None
        covered = now - self.start + (self.window if self.previous else 0.0)
        return (self.previous + self.current) / max(covered, self.window)

    def _roll(self, now: float) -> None:
        start = self.start
        if start is None:
            self.start = now
            return
        passed = now - start
        if passed < self.window:
            return
        if passed < 2 * self.window:
            self.previous, self.start = self.current, start + self.window
        else:
            self.previous, self.start = 0.0, now
        self.current = 0.0


__all__ = ["WINDOW", "WindowedRate"]
