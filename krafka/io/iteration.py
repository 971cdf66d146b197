"""`RecordIterator`: what `async for record in consumer` iterates, record by record.

The consumer keeps the records of its last fetch in a deque; the iterator hands them out and
calls `refill()` (a coroutine function that waits for the next record or raises
StopAsyncIteration) only when the deque is empty; every `every`-th record goes out through
`pause(record)` (the consumer's lets the loop's I/O tasks read the next fetch meanwhile). The
compiled twin (`_iteration.pyx`) returns buffered records without making a coroutine per
record; this pure one is the readable reference and the fallback (`KRAFKA_NO_EXTENSIONS=1`).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Awaitable, Callable, Iterable
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from krafka import _twins

T = TypeVar("T")


class PureRecordIterator(Generic[T]):
    """`async for` over `pending`, refilled by `refill()` when it runs dry; every `every`-th
    buffered record (0: none) goes out through `pause(record)`, an awaitable that may let the
    loop's other tasks run first."""

    __slots__ = ("_count", "_every", "_pause", "_pending", "_refill")

    def __init__(
        self,
        pending: deque[T],
        refill: Callable[[], Awaitable[T]],
        pause: Callable[[T], Awaitable[T]] | None = None,
        every: int = 0,
    ) -> None:
        self._pending = pending
        self._refill = refill
        self._pause = pause
        self._every = every if pause is not None and every > 0 else 0
        self._count = 0

    def __aiter__(self) -> PureRecordIterator[T]:
        return self

    async def __anext__(self) -> T:
        if self._pending:
            if self._every:
                self._count += 1
                if self._count >= self._every:
                    self._count = 0
                    assert self._pause is not None
                    return await self._pause(self._pending.popleft())
            return self._pending.popleft()
        return await self._refill()


def pure_traceparent(record: Any) -> bytes | None:
    """The `traceparent` header's value of `record`, or None (a record without headers costs
    only the look at them)."""
    headers = record.headers
    if not headers:
        return None
    for key, value in headers:
        if key == "traceparent":
            return value  # type: ignore[no-any-return]
    return None


def pure_traced(records: Iterable[Any]) -> list[Any]:
    """The records of `records` that carry a `traceparent` header."""
    return [r for r in records if pure_traceparent(r) is not None]


def pure_scan(records: Iterable[Any]) -> tuple[set[str], list[Any]]:
    """(the distinct topics of `records`, those carrying a `traceparent` header)."""
    records = list(records)
    return {r.topic for r in records}, pure_traced(records)


class PureTracedRecordIterator(Generic[T]):
    """`PureRecordIterator` with tracing on: a record carrying a trace context is handed out
    in a `process` span (`tracing.process(record)`), ended at the next record. `pause` and
    `every` as `PureRecordIterator`'s."""

    __slots__ = ("_count", "_every", "_open", "_pause", "_pending", "_refill", "_tracing")

    def __init__(
        self,
        pending: deque[T],
        refill: Callable[[], Awaitable[T]],
        tracing: Any,
        pause: Callable[[T], Awaitable[T]] | None = None,
        every: int = 0,
    ) -> None:
        self._pending = pending
        self._refill = refill
        self._tracing = tracing
        self._pause = pause
        self._every = every if pause is not None and every > 0 else 0
        self._count = 0
        self._open = False

    def __aiter__(self) -> PureTracedRecordIterator[T]:
        return self

    async def __anext__(self) -> T:
        if self._open:
            self._open = False
            self._tracing.finish_current()
        buffered = bool(self._pending)
        record = self._pending.popleft() if buffered else await self._refill()
        if pure_traceparent(record) is not None:
            self._tracing.process(record)
            self._open = True
        if buffered and self._every:
            self._count += 1
            if self._count >= self._every:
                self._count = 0
                assert self._pause is not None
                return await self._pause(record)
        return record


def implementations() -> dict[str, Any]:
    """Every implementation importable here, by name (ignores KRAFKA_NO_EXTENSIONS)."""
    return _twins.implementations(PureRecordIterator, "krafka.io._iteration", "RecordIterator")


def tracing_implementations() -> dict[str, Any]:
    """(TracedRecordIterator, traceparent, traced, scan) of each implementation, by name."""
    return _twins.implementations(
        (PureTracedRecordIterator, pure_traceparent, pure_traced, pure_scan),
        "krafka.io._iteration",
        "TracedRecordIterator",
        "traceparent",
        "traced",
        "scan",
    )


if TYPE_CHECKING:
    RecordIterator = PureRecordIterator
    TracedRecordIterator = PureTracedRecordIterator
    traceparent = pure_traceparent
    traced = pure_traced
    scan = pure_scan
else:
    RecordIterator = _twins.selected(implementations())
    TracedRecordIterator, traceparent, traced, scan = _twins.selected(tracing_implementations())

__all__ = [
    "PureRecordIterator",
    "PureTracedRecordIterator",
    "RecordIterator",
    "TracedRecordIterator",
    "implementations",
    "pure_scan",
    "pure_traced",
    "pure_traceparent",
    "scan",
    "traced",
    "traceparent",
    "tracing_implementations",
]
