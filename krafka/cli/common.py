"""What every broker command shares: the global options (accepted before or after the command
name), the client properties they make, and running a command's coroutine.

    krafka --bootstrap-server HOST:PORT [--command-config client.properties] [--timeout S]
           [--debug] COMMAND ...

`--command-config` is a Java `.properties` file with client properties (`security.protocol`,
`sasl.*`, `ssl.*`, `client.id` ...), read with `krafka.config`'s tables like every client's
`from_config`; `--bootstrap-server` wins over its `bootstrap.servers`, and the environment
variable `KRAFKA_BOOTSTRAP_SERVERS` is used when neither is given.
"""

from __future__ import annotations

import argparse
import os
import signal
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Final

import anyio
import anyio.abc

from krafka.config.options import OptionTable, table_for
from krafka.config.properties import load_properties
from krafka.errors import ConfigError

if TYPE_CHECKING:
    from krafka.io.admin import AdminClient

ENV_BOOTSTRAP: Final = "KRAFKA_BOOTSTRAP_SERVERS"
DEFAULT_TIMEOUT: Final = 30.0
CLIENT_KINDS: Final = ("admin", "producer", "consumer", "share_consumer")

Command = Callable[[argparse.Namespace], int]


def global_options(suppress: bool) -> argparse.ArgumentParser:
    """The global options as a parent parser. On leaf parsers they default to SUPPRESS, so a
    value given before the command name is not reset by the leaf."""

    def default(value: Any) -> Any:
        return argparse.SUPPRESS if suppress else value

    parent = argparse.ArgumentParser(add_help=False)
    options = parent.add_argument_group("connection options")
    options.add_argument(
        "-b",
        "--bootstrap-server",
        metavar="HOST:PORT",
        default=default(None),
        help=f"broker(s) to connect to, comma-separated (default: ${ENV_BOOTSTRAP})",
    )
    options.add_argument(
        "--command-config",
        metavar="FILE",
        default=default(None),
        help="client properties file (Java names: security.protocol, sasl.*, ssl.* ...)",
    )
    options.add_argument(
        "--timeout",
        type=positive_float,
        metavar="SECONDS",
        default=default(DEFAULT_TIMEOUT),
        help=f"how long a call may take (default {DEFAULT_TIMEOUT:g})",
    )
    options.add_argument(
        "--debug",
        action="store_true",
        default=default(False),
        help="debug logging, and the traceback of an error",
    )
    return parent


def add_command(
    commands: Any, name: str, func: Command, help: str, **kwargs: Any
) -> argparse.ArgumentParser:
    """A leaf command that talks to brokers (it takes the global options too)."""
    parser: argparse.ArgumentParser = commands.add_parser(
        name, help=help, description=kwargs.pop("description", help), parents=[LEAF], **kwargs
    )
    parser.set_defaults(func=func)
    return parser


def add_json(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")


def positive_float(text: str) -> float:
    value = float(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be positive: {text}")
    return value


def non_negative_float(text: str) -> float:
    value = float(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0: {text}")
    return value


def non_negative_int(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0: {text}")
    return value


def key_value(text: str) -> tuple[str, str]:
    """`k=v` (argparse type)."""
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    return key, value


def properties(args: argparse.Namespace) -> dict[str, Any]:
    """The client properties of this run: the command-config file, then `--bootstrap-server`
    (or the environment) as `bootstrap.servers`."""
    props: dict[str, Any] = {}
    if args.command_config:
        props.update(load_properties(args.command_config))
    bootstrap = args.bootstrap_server or os.environ.get(ENV_BOOTSTRAP)
    if bootstrap:
        props["bootstrap.servers"] = bootstrap
    if not props.get("bootstrap.servers"):
        raise ConfigError(
            f"no broker given: pass --bootstrap-server HOST:PORT (or set {ENV_BOOTSTRAP})"
        )
    props.setdefault("client.id", "krafka-cli")
    return props


#: The property `--timeout` sets for each client kind: what bounds its calls, its start
#: (bootstrap connection and first metadata) included.
_TIMEOUT_PROPERTY: Final = {
    "admin": "default.api.timeout.ms",
    "consumer": "default.api.timeout.ms",
    "producer": "max.block.ms",
}


def properties_for(kind: str, args: argparse.Namespace) -> dict[str, Any]:
    """The run's properties a `kind` client takes, with `--timeout`: one file may serve every
    command, so another client kind's properties (`linger.ms` for an admin client) are left
    out, while names no client knows still reach `from_config` and fail there with a
    suggestion."""
    own = table_for(kind)
    others = [t for t in _tables() if t.kind != kind]
    chosen = {
        prop: value
        for prop, value in properties(args).items()
        if _knows(own, prop) or not any(_knows(t, prop) for t in others)
    }
    timeout = _TIMEOUT_PROPERTY.get(kind)
    if timeout is not None:
        chosen[timeout] = int(args.timeout * 1000)
    return chosen


def admin_properties(args: argparse.Namespace) -> dict[str, Any]:
    return properties_for("admin", args)


def _knows(table: OptionTable, prop: str) -> bool:
    return (
        table.option(prop) is not None
        or table.why_ignored(prop) is not None
        or table.why_unsupported(prop) is not None
    )


def _tables() -> list[OptionTable]:
    found = []
    for kind in CLIENT_KINDS:
        try:
            found.append(table_for(kind))
        except ConfigError:  # a client kind without a table yet
            continue
    return found


def admin_client(args: argparse.Namespace) -> AdminClient:
    """An admin client for this run (use with `async with`)."""
    from krafka.io.admin import AdminClient

    return AdminClient.from_config(admin_properties(args))


async def until_interrupted(body: Callable[[], Awaitable[None]]) -> bool:
    """Run `body` until it returns or Ctrl-C (SIGINT, or SIGTERM) cancels it; True when it was
    interrupted. What the caller does afterwards (commit, close) runs normally."""
    interrupted = False
    async with anyio.create_task_group() as tg:

        async def watch(*, task_status: anyio.abc.TaskStatus[None]) -> None:
            nonlocal interrupted
            with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
                task_status.started()
                async for _ in signals:
                    interrupted = True
                    tg.cancel_scope.cancel()
                    return

        await tg.start(watch)
        await body()
        tg.cancel_scope.cancel()
    return interrupted


def run(main: Callable[[], Awaitable[int]]) -> int:
    """Run a command's coroutine on asyncio."""
    return anyio.run(main)


LEAF: Final = global_options(suppress=True)

__all__ = [
    "LEAF",
    "Command",
    "add_command",
    "add_json",
    "admin_client",
    "admin_properties",
    "global_options",
    "key_value",
    "positive_float",
    "properties",
    "properties_for",
    "run",
    "until_interrupted",
]
