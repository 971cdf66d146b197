"""Timing helpers shared by the benchmarks: medians of repeated samples, ratios, tables."""

from __future__ import annotations

import re
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass

_RATIO_LINE = re.compile(
    r"^\s*(\S+) / (\S+): ([\d.]+)x throughput \(same-round median ([\d.]+)x\), "
    r"([\d.]+)x CPU per record"
)


def median_seconds(fn: Callable[[], object], samples: int = 7, min_time: float = 0.05) -> float:
    """Median seconds per call of `fn`, each sample looping long enough to be measurable."""
    loops = 1
    while True:
        start = time.perf_counter()
        for _ in range(loops):
            fn()
        if time.perf_counter() - start >= min_time:
            break
        loops *= 2
    results = []
    for _ in range(samples):
        start = time.perf_counter()
        for _ in range(loops):
            fn()
        results.append((time.perf_counter() - start) / loops)
    return statistics.median(results)


def table(title: str, header: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(str(c)) for c in col) for col in zip(header, *rows, strict=True)]
    line = "  ".join(f"{{:>{w}}}" for w in widths)
    out = [f"\n## {title}", line.format(*header), line.format(*("-" * w for w in widths))]
    out += [line.format(*r) for r in rows]
    return "\n".join(out)


def rate(n: int, seconds: float) -> str:
    per = n / seconds
    return f"{per / 1e6:.2f} M" if per >= 1e6 else f"{per / 1e3:.1f} k"


def compare(
    fns: dict[str, Callable[[], object]], samples: int = 15, min_time: float = 0.05
) -> dict[str, float]:
    """Median seconds per call of each function, sampled in alternation (a, b, c, a, b, c, ...).

    Noise from other processes then hits every contender alike instead of whichever ran during
    a busy second; each round starts with a different contender.
    """
    loops = {name: _calibrate(fn, min_time) for name, fn in fns.items()}
    names = list(fns)
    results: dict[str, list[float]] = {name: [] for name in names}
    for i in range(samples):
        for name in names[i % len(names) :] + names[: i % len(names)]:
            fn, n = fns[name], loops[name]
            start = time.perf_counter()
            for _ in range(n):
                fn()
            results[name].append((time.perf_counter() - start) / n)
    return {name: statistics.median(r) for name, r in results.items()}


def _calibrate(fn: Callable[[], object], min_time: float) -> int:
    loops = 1
    while True:
        start = time.perf_counter()
        for _ in range(loops):
            fn()
        if time.perf_counter() - start >= min_time:
            return loops
        loops *= 2


def paired_ratio(mine: list[float], peer: list[float]) -> float:
    """The median over rounds of `mine[i] / peer[i]`: each round's two figures come from
    processes run one after the other, so a slow phase of a shared machine that lasts a few
    runs shifts both sides of a round, where a ratio of medians can set one side's slow round
    beside the other's fast one."""
    return statistics.median(a / b for a, b in zip(mine, peer, strict=True))


@dataclass(frozen=True, slots=True)
class Ratio:
    """One client's figures over a peer's: throughput as a ratio of medians, the median of the
    per-round ratios (`paired_ratio`), and CPU per record."""

    medians: float
    same_round: float
    cpu: float

    def line(self, ours: str, peer: str) -> str:
        """The line the benches print (and `ratios` reads back)."""
        return (
            f"{ours} / {peer}: {self.medians:.2f}x throughput "
            f"(same-round median {self.same_round:.2f}x), {self.cpu:.2f}x CPU per record"
        )


def ratios(output: str) -> dict[tuple[str, str], Ratio]:
    """Every `Ratio.line` in a bench's output, by (ours, peer)."""
    found = {}
    for line in output.splitlines():
        match = _RATIO_LINE.match(line)
        if match:
            ours, peer, medians, same_round, cpu = match.groups()
            found[ours, peer] = Ratio(float(medians), float(same_round), float(cpu))
    return found
