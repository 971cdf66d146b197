"""Rows `Consumer.poll_arrow` fetched but did not hand out (`max_records` cut them short), kept
for its next calls as `poll()` keeps a fetch's records: they are neither fetched nor
decompressed again, and are decoded as they are handed out (a chunk ahead, to know the
position), not all at once. A partition's rows are held under its subscription epoch: a seek,
reset or reassignment (a new epoch) drops them; a paused partition's wait for its resume. A
decode error is raised once the rows before it are handed out, as `poll()` raises it."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from krafka.errors import KrafkaError
from krafka.structs import TopicPartition

if TYPE_CHECKING:
    from krafka.sansio.consumer.engine import ConsumerEngine


@dataclass(slots=True)
class _Held:
    """A partition's rows not handed out; `end` is its position once they all are, `refetch`
    that `end` is a last stable offset to fetch again from (not where the fetcher goes on)."""

    epoch: int
    end: int
    refetch: bool = False
    rows: deque[Any] = field(default_factory=deque)
    sources: deque[Iterator[Any]] = field(default_factory=deque)
    error: KrafkaError | None = None

    def fill(self) -> None:
        """Decode the next chunk when no row is left decoded (an error is kept for later)."""
        sources = self.sources
        while not self.rows and sources:
            try:
                chunk = next(sources[0], None)
            except KrafkaError as exc:
                self.error = exc
                sources.clear()
                return
            if chunk is None:
                sources.popleft()
            elif chunk.num_rows:
                self.rows.append(chunk)


@dataclass(frozen=True, slots=True)
class Taken:
    """What a call hands out, and each partition's position after it (`seek`: fetch again
    from there, as after a read_committed cut at the last stable offset)."""

    rows: list[Any]
    positions: dict[TopicPartition, int]
    seek: dict[TopicPartition, int]


class ArrowBacklog:
    """Each partition's decoded rows (Spark's Kafka row batches) in offset order."""

    __slots__ = ("_held",)

    def __init__(self) -> None:
        self._held: dict[TopicPartition, _Held] = {}

    def servable(self, engine: ConsumerEngine) -> bool:
        """Rows a call can hand out now (stale partitions dropped)."""
        self._drop_stale(engine)
        return any(
            (h.rows or h.sources) and not engine.is_paused(tp) for tp, h in self._held.items()
        )

    def add(
        self,
        engine: ConsumerEngine,
        tp: TopicPartition,
        rows: Iterator[Any],
        end: int,
        refetch: bool,
    ) -> None:
        """`tp`'s rows fetched up to `end`, after those held (dropped after a cut to refetch)."""
        epoch = engine.partition_epoch(tp)
        if epoch is None:
            return
        held = self._held.get(tp)
        if held is None or held.epoch != epoch:
            held = self._held[tp] = _Held(epoch, end)
        elif held.refetch:
            return
        held.sources.append(rows)
        held.end, held.refetch = end, refetch

    def take(self, engine: ConsumerEngine, budget: int | None) -> Taken:
        """Up to `budget` rows (all when None), partition by partition."""
        self._drop_stale(engine)
        out: list[Any] = []
        positions: dict[TopicPartition, int] = {}
        seek: dict[TopicPartition, int] = {}
        for tp, held in list(self._held.items()):
            if engine.is_paused(tp) or budget == 0:
                continue
            before = len(out)
            budget = _take_rows(held, out, budget)
            held.fill()
            if held.error is not None and not held.rows:
                if out:
                    if len(out) > before:
                        positions[tp] = _next_offset(out)
                    break
                del self._held[tp]
                raise held.error
            if held.rows:
                positions[tp] = held.rows[0].column("offset")[0].as_py()
                continue
            del self._held[tp]
            (seek if held.refetch else positions)[tp] = held.end
        return Taken(out, positions, seek)

    def _drop_stale(self, engine: ConsumerEngine) -> None:
        for tp, held in list(self._held.items()):
            if engine.partition_epoch(tp) != held.epoch:
                del self._held[tp]


def _next_offset(out: list[Any]) -> int:
    return int(out[-1].column("offset")[-1].as_py()) + 1


def _take_rows(held: _Held, out: list[Any], budget: int | None) -> int | None:
    """Move up to `budget` of `held`'s rows to `out` (slicing the last batch); the budget left."""
    rows = held.rows
    while budget != 0:
        held.fill()
        if not rows:
            break
        batch = rows.popleft()
        if budget is not None and batch.num_rows > budget:
            out.append(batch.slice(0, budget))
            rows.appendleft(batch.slice(budget))
            return 0
        out.append(batch)
        if budget is not None:
            budget -= batch.num_rows
    return budget


__all__ = ["ArrowBacklog", "Taken"]
