"""`RecordIterator`: what `async for record in consumer` iterates, record by record.

The consumer keeps the records of its last fetch in a deque; the iterator hands them out and
calls `refill()` (a coroutine function that waits for the next record or raises
StopAsyncIteration) only when the deque is empty. The compiled twin (`_iteration.pyx`) returns
buffered records without making a coroutine per record; this pure one is the readable
reference and the fallback (`KRAFKA_NO_EXTENSIONS=1`).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from krafka import _twins

T = TypeVar("T")


class PureRecordIterator(Generic[T]):
    """`async for` over `pending`, refilled by `refill()` when it runs dry."""

    __slots__ = ("_pending", "_refill")

    def __init__(self, pending: deque[T], refill: Callable[[], Awaitable[T]]) -> None:
        self._pending = pending
        self._refill = refill

    def __aiter__(self) -> PureRecordIterator[T]:
        return self

    async def __anext__(self) -> T:
        if self._pending:
            return self._pending.popleft()
        return await self._refill()


def implementations() -> dict[str, Any]:
    """Every implementation importable here, by name (ignores KRAFKA_NO_EXTENSIONS)."""
    return _twins.implementations(PureRecordIterator, "krafka.io._iteration", "RecordIterator")


if TYPE_CHECKING:
    RecordIterator = PureRecordIterator
else:
    RecordIterator = _twins.selected(implementations())

__all__ = ["PureRecordIterator", "RecordIterator", "implementations"]
