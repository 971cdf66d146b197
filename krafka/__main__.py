"""`python -m krafka`: krafka's version, where to start, and the `krafka` command's help.

`python -m krafka ARGS...` runs the `krafka` command itself (`python -m krafka --version`,
`python -m krafka -b HOST:PORT topics list`), for when the console script is not on PATH.
"""

from __future__ import annotations

import sys

from krafka import __version__

#: The README's two commands (run in a checkout) and a broker to try them on.
START = """\
krafka {version}: a Kafka client for Python (asyncio and trio; blocking twins in krafka.sync)

  python -m krafka.testing                              a local broker to try it on (Tansu)
  pip install -e '.[dev]' && python -m krafka.demo      the end-to-end demo (in a checkout)
  pip install -e '.[dev,spark]' && python -m pytest     the whole test suite (in a checkout)

The krafka command (krafka --help; also python -m krafka COMMAND ...):
"""


def main() -> int:
    from krafka.cli import build_parser
    from krafka.cli import main as cli

    if len(sys.argv) > 1:
        return cli(sys.argv[1:])
    print(START.format(version=__version__))
    build_parser().print_help()
    return 0


if __name__ == "__main__":
    sys.exit(main())
