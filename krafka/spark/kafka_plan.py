"""Planning a `krafka` read on the driver: which partitions, which offset ranges.

Partitions come from Metadata (named topics, a pattern, or `assign`); earliest and by-time
offsets from ListOffsets; latest offsets from the high watermark (last stable offset under
read_committed) of a Fetch at the earliest offset, which every broker reports the same way
(some answer ListOffsets "latest" wrongly, Tansu among them). Ranges are half-open
`[start, end)`; `minPartitions` splits large ones, `maxOffsetsPerTrigger` caps a micro-batch
in proportion to each partition's backlog, as Spark's Kafka source does.

A planner opens one admin client and one end-offsets consumer on first use and keeps them
until `close()`: a streaming query asks for offsets at every trigger, and a client made per
call paid its connection, API versions and metadata each time.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from krafka.config.options import table_for
from krafka.errors import ConfigError, KafkaTimeoutError, KrafkaError
from krafka.spark.kafka_options import EARLIEST, LATEST, Bound, SourceOptions
from krafka.structs import TopicPartition

Offsets = dict[TopicPartition, int]


@dataclass(frozen=True, slots=True)
class OffsetRange:
    """Offsets [start, end) of one partition, read by one Spark task."""

    topic: str
    partition: int
    start: int
    end: int

    @property
    def size(self) -> int:
        return self.end - self.start


class Planner:
    """Driver-side lookups through blocking krafka clients, kept open until `close()`."""

    def __init__(self, options: SourceOptions) -> None:
        self.options = options
        admin = table_for("admin")
        self.admin_config = {k: v for k, v in options.client.items() if admin.option(k)}
        self._admin: Any = None
        self._ends: Any = None

    def __getstate__(self) -> dict[str, Any]:
        """Pickled (to Spark's workers) without its open clients."""
        return {"options": self.options, "admin_config": self.admin_config}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.options, self.admin_config = state["options"], state["admin_config"]
        self._admin = self._ends = None

    def close(self) -> None:
        """Close the clients opened so far (a later lookup opens new ones)."""
        admin, ends, self._admin, self._ends = self._admin, self._ends, None, None
        try:
            if ends is not None:
                ends.close()
        finally:
            if admin is not None:
                admin.close()

    def admin(self) -> Any:
        from krafka.sync import AdminClient

        if self._admin is None:
            self._admin = AdminClient.from_config(self.admin_config)
        return self._admin

    def _ends_consumer(self) -> Any:
        from krafka.sync import Consumer

        if self._ends is None:
            self._ends = Consumer.from_config(
                dict(self.options.client),
                auto_offset_reset="earliest",
                enable_auto_commit=False,
                group_id=None,
                max_partition_fetch_bytes=1,
                fetch_max_bytes=1,
                fetch_max_wait=0.01,
            )
        return self._ends

    def partitions(self) -> list[TopicPartition]:
        """The partitions the options select, sorted; an unknown named topic is an error."""
        topics = self.options.topics
        if topics.partitions:
            return sorted(set(topics.partitions))
        admin = self.admin()
        names = list(topics.names)
        if topics.pattern is not None:
            names = [t for t in admin.list_topics() if topics.matches(t)]
        if not names:
            return []
        described = admin.describe_topics(names)
        out: list[TopicPartition] = []
        for name, value in described.items():
            if isinstance(value, KrafkaError):
                raise ConfigError(f"topic {name!r}: {value}")
            out += [TopicPartition(name, p.partition) for p in value.partitions]
        return sorted(out)

    def earliest(self, partitions: Iterable[TopicPartition]) -> Offsets:
        return self._list_offsets(dict.fromkeys(partitions, "earliest"))

    def by_timestamp(self, partitions: Mapping[TopicPartition, int]) -> dict[TopicPartition, int]:
        """The first offset at or after each timestamp; the latest offset when none is."""
        found = self._list_offsets(dict(partitions))
        missing = [tp for tp, offset in found.items() if offset < 0]
        if missing:
            found.update(self.latest(missing))
        return found

    def latest(self, partitions: Iterable[TopicPartition]) -> Offsets:
        """High watermarks (last stable offsets under read_committed) from a Fetch of each
        partition at its earliest offset (assigned afresh: no end offset of an earlier call
        is left to be read as this one's)."""
        wanted = sorted(set(partitions))
        if not wanted:
            return {}
        consumer = self._ends_consumer()
        consumer.assign(wanted)
        try:
            deadline = time.monotonic() + self.options.poll_timeout
            ends: Offsets = {}
            while len(ends) < len(wanted):
                if time.monotonic() > deadline:
                    raise KafkaTimeoutError(f"no end offsets for {sorted(set(wanted) - set(ends))}")
                consumer.poll_batches(0.05)
                for tp in wanted:
                    lag = consumer.current_lag(tp)
                    if lag is not None and tp not in ends:
                        ends[tp] = consumer.position(tp) + lag
        finally:
            consumer.assign([])  # fetches nothing until the next call
        return ends

    def _list_offsets(self, query: Mapping[TopicPartition, int | str]) -> Offsets:
        if not query:
            return {}
        isolation = "read_committed" if self.options.read_committed else "read_uncommitted"
        results = self.admin().list_offsets(query, isolation_level=isolation)
        out: Offsets = {}
        for tp, value in results.items():
            if isinstance(value, KrafkaError):
                raise ConfigError(f"offsets of {tp.topic}-{tp.partition}: {value}")
            out[tp] = -1 if value is None else value.offset
        return out

    def resolve(self, bound: Bound, partitions: Iterable[TopicPartition]) -> Offsets:
        """Concrete offsets for `bound` on `partitions` (only the lookups needed are made)."""
        wanted = sorted(set(partitions))
        if bound.timestamp is not None:
            return self.by_timestamp(dict.fromkeys(wanted, bound.timestamp))
        if bound.timestamps:
            unknown = set(bound.timestamps) - set(wanted)
            if unknown:
                raise ConfigError(f"offsets by timestamp name unknown partitions {sorted(unknown)}")
            timed = {tp: bound.timestamps[tp] for tp in wanted if tp in bound.timestamps}
            rest = [tp for tp in wanted if tp not in timed]
            return {**self.by_timestamp(timed), **self.resolve(Bound(bound.default), rest)}
        if bound.offsets:
            unknown = set(bound.offsets) - set(wanted)
            if unknown:
                raise ConfigError(f"offsets name partitions that are not read: {sorted(unknown)}")
        chosen = {tp: bound.offsets.get(tp, bound.default) for tp in wanted}
        need_earliest = [tp for tp, o in chosen.items() if o == EARLIEST]
        need_latest = [tp for tp, o in chosen.items() if o == LATEST]
        resolved = {**self.earliest(need_earliest), **self.latest(need_latest)}
        return {tp: resolved.get(tp, o) for tp, o in chosen.items()}


def split(ranges: list[OffsetRange], min_partitions: int | None) -> list[OffsetRange]:
    """At least `min_partitions` tasks: large ranges are cut in proportion to their size."""
    ranges = [r for r in ranges if r.size > 0]
    if not min_partitions or len(ranges) >= min_partitions:
        return ranges
    total = sum(r.size for r in ranges)
    out: list[OffsetRange] = []
    for r in ranges:
        pieces = max(1, round(min_partitions * r.size / total))
        step = -(-r.size // pieces)
        for start in range(r.start, r.end, step):
            out.append(OffsetRange(r.topic, r.partition, start, min(r.end, start + step)))
    return out


def cap(start: Offsets, latest: Offsets, limit: int) -> Offsets:
    """End offsets of a micro-batch of at most `limit` records, shared in proportion to each
    partition's backlog (each partition moves at least one record when it has some)."""
    backlog = {tp: max(0, latest[tp] - start.get(tp, latest[tp])) for tp in latest}
    total = sum(backlog.values())
    if total <= limit:
        return dict(latest)
    out: Offsets = {}
    for tp, end in latest.items():
        begin = start.get(tp, end)
        share = backlog[tp] * limit // total
        out[tp] = min(end, begin + max(share, 1 if backlog[tp] else 0))
    return out


__all__ = ["OffsetRange", "Planner", "cap", "split"]
