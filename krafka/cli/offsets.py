"""Offsets the group commands compute: which partitions `--topic` names, where a reset moves a
group (`--to-earliest | --to-latest | --to-offset N | --shift-by N | --to-datetime ISO`).

Like Kafka's `kafka-consumer-groups --reset-offsets`, a new offset is kept within the
partition's log (between its earliest and latest offsets), `--shift-by` moves from the
committed offset (from the earliest one where the group has none), and a time no record
reaches resets to the latest offset.
"""

from __future__ import annotations

import argparse
import enum
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

from krafka.errors import KrafkaError
from krafka.io.admin import AdminClient
from krafka.sansio.admin.offsets import ListedOffset, OffsetSpec
from krafka.structs import OffsetAndMetadata, TopicPartition


class ResetMode(enum.Enum):
    EARLIEST = "to-earliest"
    LATEST = "to-latest"
    OFFSET = "to-offset"
    SHIFT = "shift-by"
    DATETIME = "to-datetime"


@dataclass(frozen=True, slots=True)
class ResetSpec:
    mode: ResetMode
    value: int = 0  # the offset, the shift, or the time in ms


def add_reset_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--topic", action="append", required=True, metavar="TOPIC[:P,P...]",
        help="a topic (all its partitions) or some of its partitions (repeatable)",
    )  # fmt: skip
    to = parser.add_mutually_exclusive_group(required=True)
    to.add_argument("--to-earliest", action="store_true", help="the first offset still in the log")
    to.add_argument("--to-latest", action="store_true", help="the end of the log")
    to.add_argument("--to-offset", type=int, metavar="N", help="offset N (kept within the log)")
    to.add_argument("--shift-by", type=int, metavar="N", help="move by N (negative: back)")
    to.add_argument("--to-datetime", metavar="ISO", help="the first record at or after a time")


def reset_spec(args: argparse.Namespace) -> ResetSpec:
    if args.to_earliest:
        return ResetSpec(ResetMode.EARLIEST)
    if args.to_latest:
        return ResetSpec(ResetMode.LATEST)
    if args.to_offset is not None:
        if args.to_offset < 0:
            raise ValueError("--to-offset must be >= 0")
        return ResetSpec(ResetMode.OFFSET, args.to_offset)
    if args.shift_by is not None:
        return ResetSpec(ResetMode.SHIFT, args.shift_by)
    return ResetSpec(ResetMode.DATETIME, parse_time_ms(args.to_datetime))


def parse_time_ms(text: str) -> int:
    """An ISO 8601 time (`2024-05-01T12:00:00Z`, `2024-05-01 12:00+02:00`, `2024-05-01`) as
    ms since the epoch; without a zone it is local time, as Kafka's tools read it."""
    cleaned = text.strip()
    if cleaned.endswith(("Z", "z")):
        cleaned = cleaned[:-1] + "+00:00"
    try:
        moment = datetime.fromisoformat(cleaned)
    except ValueError:
        raise ValueError(f"not an ISO 8601 time: {text!r} (try 2024-05-01T12:00:00Z)") from None
    return int(moment.timestamp() * 1000)


def parse_topic_spec(spec: str) -> tuple[str, list[int] | None]:
    """`orders` (every partition) or `orders:0,2`."""
    topic, sep, parts = spec.partition(":")  # topic names never hold ':'
    if not sep:
        return spec, None
    try:
        return topic, [int(p) for p in parts.split(",") if p.strip()]
    except ValueError:
        raise ValueError(f"bad --topic {spec!r}: expected TOPIC or TOPIC:P,P...") from None


async def partitions_of(admin: AdminClient, specs: Sequence[str]) -> list[TopicPartition]:
    """The partitions `--topic` options name (whole topics looked up), in order."""
    parsed = [parse_topic_spec(s) for s in specs]
    whole = [topic for topic, parts in parsed if parts is None]
    described = (await admin.describe_topics(whole)).raise_for_errors() if whole else {}
    out: dict[TopicPartition, None] = {}
    for topic, parts in parsed:
        numbers = parts if parts is not None else [p.partition for p in described[topic].partitions]
        out.update((TopicPartition(topic, p), None) for p in sorted(numbers))
    return list(out)


async def log_offsets(
    admin: AdminClient, partitions: Iterable[TopicPartition], spec: OffsetSpec | int
) -> dict[TopicPartition, int | None]:
    """Each partition's offset for `spec`: None when no record reaches a time; raises the
    first partition's error."""
    found = (await admin.list_offsets(list(partitions), spec)).raise_for_errors()
    return {tp: _offset(listed) for tp, listed in found.items()}


def _offset(listed: ListedOffset | None) -> int | None:
    return None if listed is None else listed.offset


async def committed(
    admin: AdminClient, group: str, partitions: Sequence[TopicPartition] | None
) -> dict[TopicPartition, int | None]:
    """The group's committed offsets (None: none), for `partitions` or every one it has."""
    found = await admin.list_group_offsets(group, partitions)
    out: dict[TopicPartition, int | None] = {}
    for tp, value in found.items():
        if isinstance(value, KrafkaError):
            raise value
        out[tp] = value.offset if isinstance(value, OffsetAndMetadata) else None
    return out


async def plan_reset(
    admin: AdminClient, group: str, topics: Sequence[str], spec: ResetSpec
) -> dict[TopicPartition, tuple[int | None, int]]:
    """`{partition: (committed offset or None, new offset)}`."""
    parts = await partitions_of(admin, topics)
    current = await committed(admin, group, parts)
    earliest = await log_offsets(admin, parts, OffsetSpec.EARLIEST)
    latest = await log_offsets(admin, parts, OffsetSpec.LATEST)
    by_time = await log_offsets(admin, parts, spec.value) if spec.mode is ResetMode.DATETIME else {}
    plan: dict[TopicPartition, tuple[int | None, int]] = {}
    for tp in parts:
        low, high = earliest[tp] or 0, latest[tp] or 0
        before = current.get(tp)
        if spec.mode is ResetMode.EARLIEST:
            wanted = low
        elif spec.mode is ResetMode.LATEST:
            wanted = high
        elif spec.mode is ResetMode.OFFSET:
            wanted = spec.value
        elif spec.mode is ResetMode.SHIFT:
            wanted = (low if before is None else before) + spec.value
        else:
            found = by_time.get(tp)
            wanted = high if found is None or found < 0 else found
        plan[tp] = (before, min(max(wanted, low), high))
    return plan
