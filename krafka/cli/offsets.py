"""Offsets the group commands compute: which partitions a reset covers (`--topic`, or
`--all-topics` the group committed, or those of `--from-file`), and where it moves them
(`--to-earliest | --to-latest | --to-current | --to-offset N | --shift-by N | --to-datetime ISO
| --by-duration PnDTnHnMnS | --from-file CSV`).

Like Kafka's `kafka-consumer-groups --reset-offsets`, a new offset is kept within the
partition's log (between its earliest and latest offsets), `--shift-by` moves from the
committed offset (from the earliest one where the group has none), `--to-current` keeps the
committed offset (the latest one where there is none), a time no record reaches resets to the
latest offset, `--by-duration` is the time that long before now (Java's `Duration` syntax),
and `--from-file` reads `topic,partition,offset` lines (or `group,topic,partition,offset`, as
the Java tool exports them for several groups).
"""

from __future__ import annotations

import argparse
import csv
import enum
import re
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Final

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
    CURRENT = "to-current"
    DURATION = "by-duration"
    FILE = "from-file"


#: The modes that find offsets by time.
_BY_TIME: Final = (ResetMode.DATETIME, ResetMode.DURATION)


@dataclass(frozen=True, slots=True)
class ResetSpec:
    mode: ResetMode
    value: int = 0  # the offset, the shift, or the time in ms
    offsets: Mapping[TopicPartition, int] = field(default_factory=dict)  # --from-file


def add_reset_options(parser: argparse.ArgumentParser) -> None:
    scope = parser.add_mutually_exclusive_group()
    scope.add_argument(
        "--topic", action="append", default=[], metavar="TOPIC[:P,P...]",
        help="a topic (all its partitions) or some of its partitions (repeatable)",
    )  # fmt: skip
    scope.add_argument(
        "--all-topics", action="store_true", help="every partition the group has offsets for"
    )
    to = parser.add_mutually_exclusive_group(required=True)
    to.add_argument("--to-earliest", action="store_true", help="the first offset still in the log")
    to.add_argument("--to-latest", action="store_true", help="the end of the log")
    to.add_argument("--to-current", action="store_true", help="the committed offset (else latest)")
    to.add_argument("--to-offset", type=int, metavar="N", help="offset N (kept within the log)")
    to.add_argument("--shift-by", type=int, metavar="N", help="move by N (negative: back)")
    to.add_argument("--to-datetime", metavar="ISO", help="the first record at or after a time")
    to.add_argument(
        "--by-duration", metavar="PnDTnHnMnS", help="the first record at or after that long ago"
    )
    to.add_argument("--from-file", metavar="CSV", help="offsets from topic,partition,offset lines")


def reset_spec(args: argparse.Namespace, group: str | None = None) -> ResetSpec:
    if args.from_file is not None:
        if args.topic or args.all_topics:
            raise ValueError("--from-file names its partitions: leave out --topic/--all-topics")
        return ResetSpec(ResetMode.FILE, offsets=read_reset_file(Path(args.from_file), group))
    if not args.topic and not args.all_topics:
        raise ValueError("name the partitions to reset: --topic TOPIC or --all-topics")
    if args.to_earliest:
        return ResetSpec(ResetMode.EARLIEST)
    if args.to_latest:
        return ResetSpec(ResetMode.LATEST)
    if args.to_current:
        return ResetSpec(ResetMode.CURRENT)
    if args.to_offset is not None:
        if args.to_offset < 0:
            raise ValueError("--to-offset must be >= 0")
        return ResetSpec(ResetMode.OFFSET, args.to_offset)
    if args.shift_by is not None:
        return ResetSpec(ResetMode.SHIFT, args.shift_by)
    if args.by_duration is not None:
        since = int(time.time() * 1000) - parse_duration_ms(args.by_duration)
        return ResetSpec(ResetMode.DURATION, since)
    return ResetSpec(ResetMode.DATETIME, parse_time_ms(args.to_datetime))


_DURATION: Final = re.compile(
    r"([-+]?)P(?:([-+]?[0-9]+)D)?"
    r"(T(?:([-+]?[0-9]+)H)?(?:([-+]?[0-9]+)M)?(?:([-+]?[0-9]+)(?:[.,]([0-9]{0,9}))?S)?)?",
    re.IGNORECASE,
)


def parse_duration_ms(text: str) -> int:
    """An ISO 8601 duration as Java's `Duration.parse` reads it (`P1DT2H`, `PT15M`,
    `PT0.5S`, `-PT1H`), in ms."""
    found = _DURATION.fullmatch(text.strip())
    if found is None or found.group(3) == "T" or not any(found.group(i) for i in (2, 4, 5, 6)):
        raise ValueError(f"not a duration: {text!r} (PnDTnHnMnS, e.g. PT30M or P1DT12H)")
    sign, days, _, hours, minutes, seconds, fraction = found.groups()
    whole = (
        int(days or 0) * 86_400 + int(hours or 0) * 3600 + int(minutes or 0) * 60
    ) * 1000 + int(seconds or 0) * 1000
    secs_sign = -1 if (seconds or "").startswith("-") else 1
    whole += secs_sign * int(((fraction or "") + "000")[:3])
    return -whole if sign == "-" else whole


def read_reset_file(path: Path, group: str | None) -> dict[TopicPartition, int]:
    """`topic,partition,offset` lines (or `group,topic,partition,offset`: this group's)."""
    try:
        text = path.read_text()
    except OSError as exc:
        raise ValueError(f"cannot read {path}: {exc.strerror or exc}") from None
    offsets: dict[TopicPartition, int] = {}
    for number, row in enumerate(csv.reader(text.splitlines()), 1):
        cells = [c.strip() for c in row]
        if not any(cells):
            continue
        if len(cells) == 4:
            owner, *cells = cells
            if owner != group:
                continue
        if len(cells) != 3:
            raise ValueError(f"{path}:{number}: expected topic,partition,offset")
        topic, partition, offset = cells
        try:
            offsets[TopicPartition(topic, int(partition))] = int(offset)
        except ValueError:
            raise ValueError(f"{path}:{number}: partition and offset must be numbers") from None
    if not offsets:
        raise ValueError(f"{path} holds no offsets for group {group}")
    return offsets


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


async def reset_partitions(
    admin: AdminClient, group: str, topics: Sequence[str], spec: ResetSpec
) -> list[TopicPartition]:
    """The partitions a reset covers: the file's, the named topics', or (`--all-topics`) every
    one the group committed."""
    if spec.mode is ResetMode.FILE:
        return sorted(spec.offsets)
    if topics:
        return await partitions_of(admin, topics)
    return sorted(await committed(admin, group, None))


async def plan_reset(
    admin: AdminClient, group: str, topics: Sequence[str], spec: ResetSpec
) -> dict[TopicPartition, tuple[int | None, int]]:
    """`{partition: (committed offset or None, new offset)}`."""
    parts = await reset_partitions(admin, group, topics, spec)
    if not parts:
        raise ValueError(f"group {group} has no committed offsets to reset")
    current = await committed(admin, group, parts)
    earliest = await log_offsets(admin, parts, OffsetSpec.EARLIEST)
    latest = await log_offsets(admin, parts, OffsetSpec.LATEST)
    by_time = await log_offsets(admin, parts, spec.value) if spec.mode in _BY_TIME else {}
    plan: dict[TopicPartition, tuple[int | None, int]] = {}
    for tp in parts:
        low, high = earliest[tp] or 0, latest[tp] or 0
        before = current.get(tp)
        plan[tp] = (before, min(max(_wanted(spec, tp, before, low, high, by_time), low), high))
    return plan


def _wanted(
    spec: ResetSpec,
    tp: TopicPartition,
    before: int | None,
    low: int,
    high: int,
    by_time: Mapping[TopicPartition, int | None],
) -> int:
    mode = spec.mode
    if mode is ResetMode.EARLIEST:
        return low
    if mode is ResetMode.LATEST:
        return high
    if mode is ResetMode.CURRENT:
        return high if before is None else before
    if mode is ResetMode.OFFSET:
        return spec.value
    if mode is ResetMode.SHIFT:
        return (low if before is None else before) + spec.value
    if mode is ResetMode.FILE:
        return spec.offsets[tp]
    found = by_time.get(tp)
    return high if found is None or found < 0 else found
