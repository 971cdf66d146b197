"""What the commands print: rich tables and key/value blocks for people, JSON for scripts, and
one red line on stderr for an error.

Tables have no borders (columns aligned like Kafka's own tools print them, so `awk` and `grep`
work on them too); on a terminal, headers are bold. Output that is not a terminal is never
wrapped or cut to a width.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Sequence
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

#: Width of a console that is not a terminal: wide enough that nothing is wrapped.
_UNLIMITED = 100_000


def console(stderr: bool = False) -> Console:
    """A console on stdout (or stderr) that wraps only on a terminal."""
    stream = sys.stderr if stderr else sys.stdout
    terminal = stream.isatty()
    return Console(
        file=stream,
        stderr=stderr,
        width=None if terminal else _UNLIMITED,
        highlight=False,
        soft_wrap=not terminal,
    )


def table(columns: Sequence[str], rows: Iterable[Sequence[Any]], title: str | None = None) -> Table:
    """A borderless table; `None` cells print as `-` (no value, like Kafka's tools)."""
    out = Table(box=None, pad_edge=False, header_style="bold", title=title, title_justify="left")
    for column in columns:
        out.add_column(column, overflow="fold")
    for row in rows:
        out.add_row(*(cell_text(c) for c in row))
    return out


def cell_text(value: Any) -> str:
    return "-" if value is None else escape(str(value))


def print_table(columns: Sequence[str], rows: Iterable[Sequence[Any]]) -> None:
    console().print(table(columns, rows))


def print_fields(fields: Sequence[tuple[str, Any]]) -> None:
    """`Name: value` lines (a group's or a topic's header)."""
    out = console()
    for name, value in fields:
        out.print(f"[bold]{escape(name)}:[/bold] {cell_text(value)}")


def print_json(value: Any) -> None:
    """One JSON document on stdout."""
    sys.stdout.write(json.dumps(value, indent=2, default=str) + "\n")


def count_of(n: int, noun: str) -> str:
    """`1 record`, `2 records`: a count with its noun in the right number."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def info(message: str) -> None:
    """A status line for people (on stderr, so stdout stays data)."""
    console(stderr=True).print(escape(message))


def error(message: str) -> None:
    """The one red line a failed command prints."""
    console(stderr=True).print(f"[bold red]krafka: error:[/bold red] [red]{escape(message)}[/red]")


__all__ = ["cell_text", "console", "error", "info", "print_fields", "print_json", "print_table"]
