"""`krafka lag --max-lag N [--for S]`: when a group's lag is an alert (for cron and CI).

A partition breaches once its lag stayed above N in every refresh for S seconds (S = 0: at the
first refresh that shows it); a refresh at or under N, or one that cannot tell (no commit or
no end offset), starts it over. Time comes in as `now`, so the rule is tested without waiting.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final, Protocol

#: The exit status of `krafka lag` when the lag is an alert (1: errors, 2: usage).
EXIT_LAGGING: Final = 3


class Lagging(Protocol):
    @property
    def topic(self) -> str: ...

    @property
    def partition(self) -> int: ...

    @property
    def lag(self) -> int | None: ...


@dataclass(slots=True)
class LagAlert:
    """Which partitions have been above `max_lag` for `hold` seconds."""

    max_lag: int
    hold: float = 0.0
    #: Since when each partition has been above `max_lag`.
    above_since: dict[tuple[str, int], float] = field(default_factory=dict)

    def observe(self, rows: Sequence[Lagging], now: float) -> list[Lagging]:
        """The rows breaching now (empty: no alert)."""
        above = {(r.topic, r.partition): r for r in rows if (r.lag or 0) > self.max_lag}
        self.above_since = {tp: self.above_since.get(tp, now) for tp in above}
        return [r for tp, r in sorted(above.items()) if now - self.above_since[tp] >= self.hold]

    def message(self, group: str, rows: Sequence[Lagging]) -> str:
        held = f" for {self.hold:g}s" if self.hold else ""
        parts = ", ".join(f"{r.topic}-{r.partition} (lag {r.lag})" for r in rows)
        return f"group {group}: lag above {self.max_lag}{held} on {parts}"


__all__ = ["EXIT_LAGGING", "LagAlert", "Lagging"]
