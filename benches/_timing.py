"""Timing helpers shared by the benchmarks: medians of repeated samples, ratios, tables."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable


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
