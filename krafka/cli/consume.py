"""`krafka consume TOPIC`: print records, one line each, until `--count` or Ctrl-C.

Without `--group` every partition (or `--partition P`) is assigned and read from the end
(new records only), `--from-beginning`, `--offset N` or `--from-time ISO`. With `--group G`
the consumer joins the group (or, with `--partition`, commits to it without joining), starts
where the group left off (`--from-beginning` for partitions it never committed), commits what
it printed after every batch, and commits again when stopped by Ctrl-C. `--format` takes
kcat-style placeholders (`krafka.cli.template`); the default prints each value.
"""

from __future__ import annotations

import argparse
import sys
from datetime import datetime
from typing import Any

from krafka.cli.common import add_command, properties_for, run, until_interrupted
from krafka.cli.output import count_of, info
from krafka.cli.template import compile_template, render
from krafka.errors import ConfigError
from krafka.structs import TopicPartition


def add_parser(subparsers: Any) -> None:
    parser = add_command(subparsers, "consume", run_consume, "print records of a topic")
    parser.add_argument("topic", metavar="TOPIC")
    parser.add_argument("--group", metavar="G", help="consume as (or commit to) this group")
    start = parser.add_mutually_exclusive_group()
    start.add_argument("--from-beginning", action="store_true", help="start at the earliest")
    start.add_argument("--offset", type=int, metavar="N", help="start at offset N")
    start.add_argument("--from-time", metavar="ISO", help="start at the first record at/after")
    parser.add_argument("--count", type=int, metavar="N", help="stop after N records")
    parser.add_argument("--partition", type=int, metavar="P", help="only this partition")
    parser.add_argument("--format", default="%v", metavar="TEMPLATE", help="default %%v")


def _timestamp(text: str) -> int:
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise ConfigError(f"--from-time: not an ISO date/time: {text!r}") from None
    if moment.tzinfo is None:
        moment = moment.astimezone()
    return int(moment.timestamp() * 1000)


def run_consume(args: argparse.Namespace) -> int:
    from krafka.io.consumer import Consumer

    parts = compile_template(args.format)
    if args.count is not None and args.count <= 0:
        raise ConfigError("--count must be positive")
    if args.offset is not None and args.offset < 0:
        raise ConfigError("--offset must be >= 0")
    since = _timestamp(args.from_time) if args.from_time else None
    config = properties_for("consumer", args)
    options: dict[str, Any] = {
        "enable_auto_commit": False,
        "auto_offset_reset": "earliest" if args.from_beginning else "latest",
    }
    if args.group:
        options["group_id"] = args.group
    out = sys.stdout.buffer

    async def main() -> int:
        printed = 0
        async with Consumer.from_config(config, **options) as consumer:
            await _start(consumer, args, since)

            async def body() -> None:
                nonlocal printed
                while args.count is None or printed < args.count:
                    records = await consumer.poll(timeout=0.5)
                    if args.count is not None:
                        records = records[: args.count - printed]
                    if not records:
                        continue
                    out.write(b"".join(render(parts, r) for r in records))
                    out.flush()
                    printed += len(records)
                    if args.group:
                        await consumer.commit(_after(records))

            interrupted = await until_interrupted(body)
            if interrupted and args.group:
                await consumer.commit()
        info(f"Consumed {count_of(printed, 'record')} from {args.topic}.")
        return 0

    return run(main)


async def _start(consumer: Any, args: argparse.Namespace, since: int | None) -> None:
    if args.group and args.partition is None:
        await consumer.subscribe([args.topic])
        return
    partitions = (
        [args.partition]
        if args.partition is not None
        else await consumer.client.partitions_for(args.topic)
    )
    if not partitions:
        raise ConfigError(f"topic {args.topic} does not exist or has no partition")
    tps = [TopicPartition(args.topic, p) for p in partitions]
    await consumer.assign(tps)
    if args.offset is not None:
        await consumer.seek_many(dict.fromkeys(tps, args.offset))
    elif since is not None:
        found = await consumer.offsets_for_times(dict.fromkeys(tps, since))
        for tp, listed in found.items():
            if listed is None:
                await consumer.seek_to_end(tp)
            else:
                await consumer.seek(tp, listed.offset)
    elif args.from_beginning:
        await consumer.seek_to_beginning(*tps)


def _after(records: list[Any]) -> dict[TopicPartition, Any]:
    """The positions after `records`, per partition (what a commit of them stores)."""
    from krafka.structs import OffsetAndMetadata

    last: dict[TopicPartition, Any] = {}
    for record in records:
        last[TopicPartition(record.topic, record.partition)] = OffsetAndMetadata(record.offset + 1)
    return last
