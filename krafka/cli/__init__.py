"""The `krafka` command line: one subcommand group per module of this package.

Each module in `GROUPS` provides `add_parser(subparsers)`, which adds its subcommand group and
sets `func` (taking the parsed arguments, returning an exit status) on its leaf parsers.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

GROUPS = ("krafka.cli.segment",)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="krafka", description="A Kafka client for Python.")
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
    try:
        status: int = func(args)
    except BrokenPipeError:  # `krafka ... | head`
        sys.stderr.close()
        return 0
    return status


if __name__ == "__main__":
    sys.exit(main())
