"""What the benchmarks need to measure tracing's cost: a client name's `-otel` variant runs with
an OpenTelemetry SDK tracer provider exporting to nowhere (every span made, ended and handed to
a span processor), and an `@base` variant runs krafka from another source tree (`--baseline`,
e.g. the commit before a change) in the same run, to compare like with like."""

from __future__ import annotations

import os
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


def child_env(name: str, baseline: str | None) -> dict[str, str] | None:
    """The environment of a child measuring `name` (the baseline's tree for `@base`)."""
    if not split(name)[1]:
        return None
    if baseline is None:
        raise SystemExit(f"{name}: give --baseline DIR (a krafka source tree)")
    return {**os.environ, ROOT: baseline}


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
