"""The `krafka` command line: one subcommand group per module of this package.

    krafka --bootstrap-server HOST:PORT [--command-config client.properties] [--debug] COMMAND

Each module in `GROUPS` provides `add_parser(subparsers)`, which adds its subcommand group and
sets `func` (taking the parsed arguments, returning an exit status) on its leaf parsers.
A failing command prints one red line on stderr and exits 1 (`--debug` adds the traceback and
debug logging); Ctrl-C exits 130 without a traceback, except in the commands that stop on it
by design (`consume`, `lag --watch`), which exit 0 after cleaning up.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
import traceback
from collections.abc import Sequence

from krafka import __version__
from krafka.cli.common import global_options
from krafka.cli.output import error
from krafka.errors import KrafkaError

if sys.version_info < (3, 11):  # pragma: no cover - anyio brings the backport there
    from exceptiongroup import BaseExceptionGroup

GROUPS = (
    "krafka.cli.topics",
    "krafka.cli.produce",
    "krafka.cli.consume",
    "krafka.cli.groups",
    "krafka.cli.lag",
    "krafka.cli.cluster",
    "krafka.cli.segment",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="krafka",
        description="A Kafka client for Python.",
        parents=[global_options(suppress=False)],
    )
    parser.add_argument("--version", action="version", version=f"krafka {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in GROUPS:
        importlib.import_module(name).add_parser(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `krafka` console script."""
    parser = build_parser()
    args = parser.parse_args(argv)
    func = getattr(args, "func", None)
    if func is None:
        parser.print_help(sys.stderr)
        return 2
    debug = bool(getattr(args, "debug", False))
    _configure_logging(debug)
    try:
        status: int = func(args)
    except BrokenPipeError:  # `krafka ... | head`
        sys.stderr.close()
        return 0
    except KeyboardInterrupt:
        return 130
    except Exception as exc:
        if debug:
            traceback.print_exc()
        error(describe(exc))
        return 1
    return status


def describe(exc: BaseException) -> str:
    """One line for an error: its message, the inner error of a one-error group, and the
    class name where the message alone would be unclear."""
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    text = " ".join(str(exc).split())
    if isinstance(exc, KrafkaError | OSError | ValueError) and text:
        return text
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


class _OneLine(logging.Formatter):
    """Log records without their tracebacks (shown with --debug only)."""

    def formatException(self, ei: object) -> str:
        return ""

    def format(self, record: logging.LogRecord) -> str:
        record.exc_text = ""
        saved, record.exc_info = record.exc_info, None
        try:
            return super().format(record)
        finally:
            record.exc_info = saved


def _configure_logging(debug: bool) -> None:
    handler = logging.StreamHandler(sys.stderr)
    fmt = "%(levelname)s %(name)s: %(message)s"
    handler.setFormatter(logging.Formatter(fmt) if debug else _OneLine(fmt))
    logging.basicConfig(level=logging.DEBUG if debug else logging.WARNING, handlers=[handler])


if __name__ == "__main__":
    sys.exit(main())
