"""Admin client counters: calls made, calls failed (every item or the whole call), call latency
(seconds), and rates over Java's 30-60 s window (`krafka.sansio.rate`). Java's admin client
only has per-connection metrics; these are the admin's own calls, in the same naming."""

from __future__ import annotations

from typing import Any

from krafka.sansio.rate import WindowedRate


class AdminMetrics:
    """Totals since the admin client started."""

    __slots__ = (
        "call_rate",
        "calls",
        "error_rate",
        "errors",
        "latency_max",
        "latency_total",
        "now",
    )

    def __init__(self) -> None:
        self.calls = 0
        self.errors = 0
        self.latency_total = 0.0
        self.latency_max = 0.0
        self.call_rate = WindowedRate()
        self.error_rate = WindowedRate()
        #: The time the last call ended (what `snapshot` reports at without a `now`).
        self.now = 0.0

    def call_done(self, started: float, now: float, failed: bool) -> None:
        self.now = now
        latency = now - started
        self.calls += 1
        self.latency_total += latency
        self.latency_max = max(self.latency_max, latency)
        self.call_rate.record(1, now)
        if failed:
            self.errors += 1
            self.error_rate.record(1, now)

    def snapshot(self, now: float | None = None) -> dict[str, Any]:
        """Totals and rates at `now` (default: when the last call ended)."""
        now = self.now if now is None else now
        calls = self.calls
        return {
            "request-total": calls,
            "request-rate": self.call_rate.rate(now),
            "request-error-total": self.errors,
            "request-error-rate": self.error_rate.rate(now),
            "request-latency-avg": self.latency_total / calls if calls else 0.0,
            "request-latency-max": self.latency_max,
        }


__all__ = ["AdminMetrics"]
