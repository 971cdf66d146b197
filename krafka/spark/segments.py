"""Finding archived `.log` segments and planning byte-range splits, without Spark.

A Kafka log directory holds one folder per partition, named `<topic>-<partition>` (topics may
contain dashes: the partition is after the LAST dash), with segment files named by their base
offset (`00000000000000000000.log`) and an offset index beside each (`.index`: 8-byte entries,
relative offset int32 + byte position int32, both big-endian). Beside them Kafka may keep
folders it set aside, `<topic>-<partition>.<id>-delete` (a deleted topic's, removed a minute
later), `-future` (a replica being moved to another log dir) and `-stray`: scanning a directory
or a glob skips them; naming one (or a file in it) reads it. Splits start and end at batch
boundaries, taken from the `.index` when it is there and plausible, else from a header-only scan.
"""

from __future__ import annotations

import contextlib
import glob
import itertools
import mmap
import os
import re
import struct
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from krafka.arrow import AbortIndex
from krafka.codec import scan_batches

DEFAULT_MAX_PARTITION_BYTES = 128 * 1024 * 1024
_PARTITION_DIR = re.compile(r"^(?P<topic>.+)-(?P<partition>\d+)$")
_SET_ASIDE_DIR = re.compile(r"^(?P<topic>.+)-(?P<partition>\d+)\.\w+-(?:delete|future|stray)$")
_INDEX_ENTRY = struct.Struct(">ii")
_ENTRY_PREFIX = struct.Struct(">qib")  # base offset, length, (leader epoch/crc first byte)


@dataclass(frozen=True, slots=True)
class Segment:
    """One segment file and the topic-partition it belongs to."""

    path: str
    topic: str
    partition: int | None
    base_offset: int | None
    size: int


@dataclass(frozen=True, slots=True)
class Split:
    """A byte range [start, end) of one segment, starting and ending on batch boundaries."""

    segment: Segment
    start: int
    end: int


def topic_partition(path: str) -> tuple[str, int | None]:
    """Topic and partition of a segment file, from its folder name; else the file stem."""
    folder = Path(os.path.abspath(path)).parent.name  # not resolve(): symlinks keep their folder
    match = _PARTITION_DIR.match(folder) or _SET_ASIDE_DIR.match(folder)
    if match:
        return match["topic"], int(match["partition"])
    return Path(path).stem, None


def find_segments(location: str) -> list[Segment]:
    """Segment files under `location`: a log dir, a partition dir, a file, or a glob."""
    paths: list[str] = []
    pattern = glob.has_magic(location)
    for entry in sorted(glob.glob(location)) if pattern else [location]:
        if pattern and _set_aside(entry):
            continue
        if os.path.isdir(entry):
            paths.extend(_logs_under(entry))
        elif os.path.isfile(entry):
            paths.append(entry)
    if not paths:
        raise FileNotFoundError(f"no .log segment found at {location!r}")
    return sorted((_segment(p) for p in paths), key=_order)


def _set_aside(path: str) -> bool:
    """Whether `path` is, or is in, a partition folder Kafka set aside (`-delete`, ...)."""
    full = Path(os.path.abspath(path))
    return any(_SET_ASIDE_DIR.match(name) for name in (full.name, full.parent.name))


def _logs_under(directory: str) -> list[str]:
    found = sorted(glob.glob(os.path.join(directory, "*.log")))
    if found:
        return found
    nested = glob.glob(os.path.join(directory, "*", "*.log"))
    return sorted(p for p in nested if not _set_aside(os.path.dirname(p)))


def _segment(path: str) -> Segment:
    topic, partition = topic_partition(path)
    stem = Path(path).stem
    base = int(stem) if stem.isdigit() else None
    return Segment(path, topic, partition, base, os.path.getsize(path))


def _order(s: Segment) -> tuple[str, int, int, str]:
    return (s.topic, -1 if s.partition is None else s.partition, s.base_offset or 0, s.path)


def by_partition(segments: list[Segment]) -> dict[tuple[str, int | None], list[Segment]]:
    """Segments grouped by topic-partition, each group in base-offset order."""
    groups: dict[tuple[str, int | None], list[Segment]] = {}
    for s in segments:
        key = (s.topic, s.partition) if s.partition is not None else (s.path, None)
        groups.setdefault(key, []).append(s)
    return groups


def prune(segments: list[Segment], start: int | None, end: int | None) -> list[Segment]:
    """Drop segments that cannot hold offsets in [start, end) (by their file-name offsets)."""
    kept = []
    for i, s in enumerate(segments):
        nxt = segments[i + 1].base_offset if i + 1 < len(segments) else None
        if start is not None and nxt is not None and nxt <= start:
            continue
        if end is not None and s.base_offset is not None and s.base_offset >= end:
            continue
        kept.append(s)
    return kept


def plan_splits(segment: Segment, max_bytes: int) -> list[Split]:
    """Cut a segment into ranges of about `max_bytes`, at batch boundaries."""
    if segment.size <= max_bytes:
        return [Split(segment, 0, segment.size)]
    cuts: list[int] = []
    last = 0
    for position in boundaries(segment):
        if position - last >= max_bytes:
            cuts.append(position)
            last = position
    edges = [0, *cuts, segment.size]
    return [Split(segment, a, b) for a, b in itertools.pairwise(edges) if b > a]


def boundaries(segment: Segment) -> Iterator[int]:
    """Byte positions where batches start: from the `.index` if plausible, else a scan."""
    index = _index_positions(segment)
    if index is not None:
        yield from index
        return
    with _mapped(segment.path) as view:
        positions = [h.byte_offset for h in scan_batches(view)]
    yield from positions


def _index_positions(segment: Segment) -> list[int] | None:
    index_path = os.path.splitext(segment.path)[0] + ".index"
    try:
        raw = Path(index_path).read_bytes()
    except OSError:
        return None
    positions = []
    for _, pos in _INDEX_ENTRY.iter_unpack(raw[: len(raw) // 8 * 8]):
        if pos <= 0:  # an active segment's index is preallocated with zero entries
            break
        positions.append(pos)
    if not positions or positions != sorted(set(positions)):
        return None
    return positions if _plausible(segment.path, positions) else None


def _plausible(path: str, positions: list[int]) -> bool:
    """Every indexed position must look like a batch start inside the file."""
    size = os.path.getsize(path)
    with open(path, "rb") as f:
        for pos in positions:
            if pos + 17 > size:
                return False
            f.seek(pos)
            head = f.read(17)
            _, length, _ = _ENTRY_PREFIX.unpack_from(head)
            if head[16] not in (0, 1, 2) or length < 14 or pos + 12 + length > size:
                return False
    return True


def abort_index(segments: list[Segment]) -> AbortIndex:
    """Aborted transactions of one partition, by scanning its control markers (`.txnindex`)."""
    index = AbortIndex()
    for s in segments:
        if s.size == 0:
            continue
        with _mapped(s.path) as view:
            for header in scan_batches(view):
                index.observe(view, header)
    return index.close()


@contextlib.contextmanager
def _mapped(path: str) -> Iterator[memoryview]:
    """The file's bytes, memory-mapped (headers are read; pages not touched stay on disk)."""
    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
        view = memoryview(m)
        try:
            yield view
        finally:
            view.release()


def read_range(split: Split) -> bytes:
    with open(split.segment.path, "rb") as f:
        f.seek(split.start)
        return f.read(split.end - split.start)


def map_range(split: Split) -> memoryview:
    """The split's bytes without copying them: a view of the memory-mapped file.

    The mapping is released when the last reference to the view goes away.
    """
    if split.end <= split.start:
        return memoryview(b"")
    with open(split.segment.path, "rb") as f:
        mapped = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    return memoryview(mapped)[split.start : split.end]
