"""`krafka lag GROUP [--topic T ...] [--watch [--interval S]] [--json]` (also `krafka group lag`):
how far a group is behind, per partition, with totals per topic.

    TOPIC    PARTITION  CURRENT-OFFSET  LOG-END-OFFSET  LAG
    orders   0          12345           12350           5
    orders   1          23456           23460           4
    orders   total                                      9

CURRENT-OFFSET is the group's committed offset, LOG-END-OFFSET the partition's latest offset
(ListOffsets at its leader: the high watermark), LAG their difference (0 when a commit is past
the end). Partitions: those the group committed, and those its members own without a commit
yet (`-`); `--topic` names them instead (every partition of each topic, or `T:0,1`), which
also works on brokers that cannot list all of a group's offsets. `--json` prints a list of
`{"topic", "partition", "current_offset", "log_end_offset", "lag"}`; with `--watch` one such
list per line and refresh. `--watch` redraws the table every `--interval` seconds until
Ctrl-C.

`--max-lag N` makes the lag an alert, for cron and CI: the command exits with status 3 and
names the partitions (on stderr) when one's lag is above N - at once, or with `--watch` once
it stayed above N for `--for S` seconds of refreshes (then it stops watching).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import anyio
from rich.console import Group
from rich.live import Live
from rich.table import Table
from rich.text import Text

from krafka.cli.common import (
    add_command,
    add_json,
    admin_client,
    non_negative_float,
    non_negative_int,
    positive_float,
    run,
    until_interrupted,
)
from krafka.cli.lag_alert import EXIT_LAGGING, LagAlert, Lagging
from krafka.cli.offsets import committed, partitions_of
from krafka.cli.output import cell_text, console, info, print_json
from krafka.errors import KrafkaError, RemoteProtocolError, UnsupportedVersionError
from krafka.io.admin import AdminClient
from krafka.sansio.admin.offsets import ListedOffset
from krafka.structs import TopicPartition

COLUMNS = ("TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG")


@dataclass(frozen=True, slots=True)
class LagRow:
    topic: str
    partition: int
    current_offset: int | None
    log_end_offset: int | None

    @property
    def lag(self) -> int | None:
        if self.current_offset is None or self.log_end_offset is None:
            return None
        return max(self.log_end_offset - self.current_offset, 0)

    def as_json(self) -> dict[str, Any]:
        return {
            "topic": self.topic,
            "partition": self.partition,
            "current_offset": self.current_offset,
            "log_end_offset": self.log_end_offset,
            "lag": self.lag,
        }


def add_parser(subparsers: Any) -> None:
    parser = add_command(
        subparsers, "lag", run_lag, "a group's lag per partition", description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )  # fmt: skip
    add_lag_options(parser)


def add_lag_options(parser: argparse.ArgumentParser) -> None:
    """GROUP and the options of `krafka lag` (and its alias `krafka group lag`)."""
    parser.add_argument("group", metavar="GROUP")
    parser.add_argument(
        "--topic", action="append", default=[], metavar="TOPIC[:P,P...]",
        help="only these topics / partitions (repeatable)",
    )  # fmt: skip
    parser.add_argument("--watch", action="store_true", help="refresh until Ctrl-C")
    parser.add_argument(
        "--interval", type=positive_float, default=2.0, metavar="S",
        help="seconds between refreshes with --watch (default 2)",
    )  # fmt: skip
    parser.add_argument(
        "--max-lag", type=non_negative_int, default=None, metavar="N",
        help=f"exit {EXIT_LAGGING} naming the partitions whose lag is above N",
    )  # fmt: skip
    parser.add_argument(
        "--for", dest="hold", type=non_negative_float, default=0.0, metavar="S",
        help="with --watch and --max-lag: only once the lag stayed above N for S seconds",
    )  # fmt: skip
    add_json(parser)


async def assigned(admin: AdminClient, group: str) -> set[TopicPartition]:
    """What the group's members own now (nothing when the cluster cannot describe groups)."""
    try:
        described = (await admin.describe_groups([group]))[group]
    except UnsupportedVersionError:
        return set()
    if isinstance(described, KrafkaError):
        return set()
    return {tp for member in described.members for tp in member.assignment}


async def every_committed(admin: AdminClient, group: str) -> dict[TopicPartition, int | None]:
    """Every offset the group committed. A broker that cannot list them all answers that
    request malformed (librdkafka's mock cluster echoes its null topic list): the operator is
    told to name the topics instead of being shown a decoding error."""
    try:
        return await committed(admin, group, None)
    except RemoteProtocolError as exc:
        raise ValueError(
            f"the cluster could not list every offset of group {group} ({exc}): "
            "name the topics with --topic"
        ) from exc


async def lag_rows(admin: AdminClient, group: str, topics: list[str]) -> list[LagRow]:
    if topics:
        wanted = await partitions_of(admin, topics)
        current = await committed(admin, group, wanted)
    else:
        current = await every_committed(admin, group)
        for tp in await assigned(admin, group):
            current.setdefault(tp, None)
    if not current:
        return []
    ends = await admin.list_offsets(list(current))
    rows = []
    for tp in sorted(current):
        end = ends.get(tp)
        rows.append(
            LagRow(
                tp.topic,
                tp.partition,
                current[tp],
                end.offset if isinstance(end, ListedOffset) else None,
            )
        )
    return rows


def lag_table(rows: list[LagRow], title: str | None = None) -> Table:
    """The lag table, with a total row after each topic's partitions."""
    table = Table(box=None, pad_edge=False, header_style="bold", title=title, title_justify="left")
    for column in COLUMNS:
        table.add_column(column)
    topics = sorted({r.topic for r in rows})
    for topic in topics:
        mine = [r for r in rows if r.topic == topic]
        for r in mine:
            table.add_row(
                *(cell_text(c) for c in (r.topic, r.partition, r.current_offset,
                                          r.log_end_offset, r.lag))
            )  # fmt: skip
        if len(topics) > 1 or len(mine) > 1:
            total = sum(r.lag or 0 for r in mine)
            table.add_row(cell_text(topic), "total", "", "", Text(str(total), style="bold"))
    return table


def run_lag(args: argparse.Namespace) -> int:
    alert = None if args.max_lag is None else LagAlert(args.max_lag, args.hold)

    async def once() -> int:
        async with admin_client(args) as admin:
            rows = await lag_rows(admin, args.group, args.topic)
        if args.json:
            print_json([r.as_json() for r in rows])
        elif not rows:
            info(f"Group {args.group} has no committed offsets and no assigned partitions.")
        else:
            console().print(lag_table(rows))
        return _verdict(args.group, alert, alert.observe(rows, 0.0) if alert else [])

    async def watch() -> int:
        breach: list[LagRow] = []
        async with admin_client(args) as admin:
            body = _watch_json if args.json else _watch_table
            await until_interrupted(lambda: body(admin, args, alert, breach))
        return _verdict(args.group, alert, breach)

    if args.hold and not (args.watch and alert):
        raise ValueError("--for needs --watch and --max-lag")
    return run(watch if args.watch else once)


def _verdict(group: str, alert: LagAlert | None, breach: Sequence[Lagging]) -> int:
    if alert is None or not breach:
        return 0
    sys.stderr.write(alert.message(group, breach) + "\n")
    return EXIT_LAGGING


async def _watch_json(
    admin: AdminClient, args: argparse.Namespace, alert: LagAlert | None, breach: list[LagRow]
) -> None:
    while True:
        rows = await lag_rows(admin, args.group, args.topic)
        sys.stdout.write(json.dumps([r.as_json() for r in rows]) + "\n")
        sys.stdout.flush()
        if _breached(alert, rows, breach):
            return
        await anyio.sleep(args.interval)


async def _watch_table(
    admin: AdminClient, args: argparse.Namespace, alert: LagAlert | None, breach: list[LagRow]
) -> None:
    out = console()
    with Live(console=out, auto_refresh=False, transient=False) as live:
        while True:
            rows = await lag_rows(admin, args.group, args.topic)
            stamp = time.strftime("%H:%M:%S")
            title = f"Group {args.group} - {stamp} - every {args.interval:g}s, Ctrl-C to stop"
            body = lag_table(rows) if rows else Text("no committed offsets yet")
            live.update(Group(Text(title, style="dim"), body), refresh=True)
            if _breached(alert, rows, breach):
                return
            await anyio.sleep(args.interval)


def _breached(alert: LagAlert | None, rows: list[LagRow], breach: list[LagRow]) -> bool:
    """Whether the alert fired on `rows` (its rows then fill `breach`)."""
    if alert is None:
        return False
    found = alert.observe(rows, anyio.current_time())
    breach.extend(r for r in rows if r in found)
    return bool(found)
