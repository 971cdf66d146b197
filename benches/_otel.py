"""What the benchmarks need to measure tracing's cost: a client name's `-otel` variant runs with
an OpenTelemetry SDK tracer provider exporting to nowhere (every span made, ended and handed to
a span processor), and an `@base` variant runs krafka from another source tree (`--baseline`,
e.g. the commit before a change) in the same run, to compare like with like."""

from __future__ import annotations

import os
import random
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

#: The environment variable naming the source tree an `@base` child imports krafka from.
ROOT = "KRAFKA_BENCH_ROOT"


def source_root(bench_file: str) -> None:
    """Put krafka's source tree first on sys.path: `$KRAFKA_BENCH_ROOT`, else this checkout."""
    sys.path.insert(0, os.environ.get(ROOT) or str(Path(bench_file).resolve().parents[1]))


def split(name: str) -> tuple[str, bool]:
    """(the client's name without `@base`, whether it runs the baseline tree)."""
    base = name.endswith("@base")
    return (name.removesuffix("@base"), base)


#: The environment variable that pads a child's environment by a random length (`child_env`).
PAD = "KRAFKA_BENCH_PAD"


def child_env(name: str, baseline: str | None) -> dict[str, str]:
    """The environment of a child measuring `name` (the baseline's tree for `@base`), padded
    by 0-63 bytes at random. Where a process's arguments and environment end moves its stack
    (their length shifts it), and a consume measured here ran 20% slower or faster when one
    argument was a byte longer: the same code under `NAME` and `NAME@base` differed by that
    much, every round. A random shift per run turns that bias into noise the medians take."""
    env = {**os.environ, PAD: "x" * random.randrange(64)}
    if not split(name)[1]:
        return env
    if baseline is None:
        raise SystemExit(f"{name}: give --baseline DIR (a krafka source tree)")
    return {**env, ROOT: baseline}


def noop_provider() -> Any:
    """An SDK tracer provider whose spans go to an exporter that drops them."""
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult

    class Drop(SpanExporter):
        def export(self, spans: Sequence[Any]) -> SpanExportResult:
            return SpanExportResult.SUCCESS

    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(Drop()))
    return provider


def tracing_options(name: str) -> dict[str, Any]:
    """`tracer_provider=` for an `-otel` client, nothing otherwise."""
    return {"tracer_provider": noop_provider()} if name.endswith("-otel") else {}
