"""`async for` over a consumer's buffered records: the compiled `RecordIterator` (a C awaitable
per buffered record) and its pure twin behave the same, under asyncio and trio."""

from __future__ import annotations

from collections import deque
from typing import Any

import anyio
import pytest

from krafka.io.iteration import implementations, tracing_implementations
from krafka.sansio.consumer.record import ConsumerRecord

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(30)]

IMPLEMENTATIONS = implementations()


@pytest.fixture(params=sorted(IMPLEMENTATIONS))
def iterator_type(request: pytest.FixtureRequest) -> Any:
    return IMPLEMENTATIONS[request.param]


def record(offset: int) -> ConsumerRecord:
    return ConsumerRecord("t", 0, offset, 0, 0, None, b"v%d" % offset, (), None)


async def test_buffered_records_then_refills_until_it_stops(iterator_type: Any) -> None:
    pending: deque[ConsumerRecord] = deque(record(i) for i in range(3))
    refills = 0

    async def refill() -> ConsumerRecord:
        nonlocal refills
        refills += 1
        await anyio.sleep(0)  # a real suspension, as a consumer waiting for a fetch
        if refills == 3:
            raise StopAsyncIteration
        pending.extend(record(100 * refills + i) for i in range(2))
        return record(100 * refills - 1)

    got = [r.offset async for r in iterator_type(pending, refill)]
    assert got == [0, 1, 2, 99, 100, 101, 199, 200, 201]
    assert refills == 3


async def test_records_added_while_iterating_are_seen(iterator_type: Any) -> None:
    pending: deque[ConsumerRecord] = deque([record(0)])

    async def refill() -> ConsumerRecord:
        raise StopAsyncIteration

    seen = []
    async for r in iterator_type(pending, refill):
        seen.append(r.offset)
        if r.offset < 3:
            pending.append(record(r.offset + 1))
    assert seen == [0, 1, 2, 3]


async def test_a_refill_error_propagates_and_iteration_can_resume(iterator_type: Any) -> None:
    pending: deque[ConsumerRecord] = deque()
    calls = 0

    async def refill() -> ConsumerRecord:
        nonlocal calls
        calls += 1
        if calls == 1:
            raise ValueError("boom")
        return record(7)

    iterator = iterator_type(pending, refill)
    with pytest.raises(ValueError, match="boom"):
        await iterator.__anext__()
    assert (await iterator.__anext__()).offset == 7


async def test_awaitables_taken_ahead_keep_their_own_records(iterator_type: Any) -> None:
    """Several `__anext__()` taken before any is awaited (as `gather` does) each give their
    own record, in order, and an awaitable held after its await does not change later ones."""
    pending: deque[ConsumerRecord] = deque(record(i) for i in range(6))

    async def refill() -> ConsumerRecord:
        raise StopAsyncIteration

    iterator = iterator_type(pending, refill)
    first, second, third = iterator.__anext__(), iterator.__anext__(), iterator.__anext__()
    assert [(await a).offset for a in (first, second, third)] == [0, 1, 2]
    held = iterator.__anext__()
    assert (await held).offset == 3
    assert [(await iterator.__anext__()).offset for _ in range(2)] == [4, 5]
    with pytest.raises(StopAsyncIteration):
        await iterator.__anext__()


async def test_records_handed_out_are_not_kept_alive(iterator_type: Any) -> None:
    """Once awaited, a record is referenced only by whoever took it (the iterator keeps none)."""
    import weakref

    class Value:
        pass

    pending: deque[ConsumerRecord] = deque(
        ConsumerRecord("t", 0, i, 0, 0, None, Value(), (), None) for i in range(2)
    )

    async def refill() -> ConsumerRecord:
        raise StopAsyncIteration

    iterator = iterator_type(pending, refill)
    value = weakref.ref((await iterator.__anext__()).value)
    assert value() is None
    assert (await iterator.__anext__()).offset == 1


def test_the_compiled_awaitable_gives_a_tuple_back_whole() -> None:
    """A record is a tuple: driven by hand, StopIteration carries it whole (not as args)."""
    compiled = pytest.importorskip("krafka.io._iteration")
    rec = record(5)
    step = compiled.ready(rec).__await__()
    with pytest.raises(StopIteration) as stop:
        next(step)
    assert stop.value.value is rec
    with pytest.raises(StopIteration) as again:  # spent: returns None, as a finished coroutine
        next(step)
    assert again.value.value is None


async def test_the_compiled_awaitable_in_a_task_wrapper() -> None:
    """Wrapped the way event loops wrap awaitables (a coroutine doing `await`)."""
    compiled = pytest.importorskip("krafka.io._iteration")

    async def wrapped(awaitable: Any) -> Any:
        return await awaitable

    async with anyio.create_task_group() as tg:
        results: list[Any] = []

        async def run() -> None:
            results.append(await wrapped(compiled.ready(record(9))))

        tg.start_soon(run)
    assert results == [record(9)]


TRACING = tracing_implementations()


@pytest.fixture(params=sorted(TRACING))
def tracing_twins(request: pytest.FixtureRequest) -> Any:
    return TRACING[request.param]


class FakeTracing:
    """Records what a traced iterator asks of `krafka.io.tracing.Tracing`."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def process(self, record: ConsumerRecord) -> None:
        self.calls.append(f"process {record.offset}")

    def finish_current(self) -> None:
        self.calls.append("finish")


def traced_record(offset: int, headers: list[tuple[str, bytes | None]]) -> ConsumerRecord:
    return ConsumerRecord("t", 0, offset, 0, 0, None, b"v", tuple(headers), None)


async def test_traced_iteration_spans_only_traced_records(tracing_twins: Any) -> None:
    """A record with a `traceparent` header is processed in a span ended at the next record;
    one without (or with other headers only) costs no call."""
    iterator_type, traceparent, traced, scan = tracing_twins
    parent = [("traceparent", b"00-1-2-01")]
    records = [
        traced_record(0, []),
        traced_record(1, parent),
        traced_record(2, [("h", b"x")]),
        traced_record(3, [("h", b"x"), *parent]),
    ]
    pending: deque[ConsumerRecord] = deque(records[:3])
    left = [records[3]]

    async def refill() -> ConsumerRecord:
        if not left:
            raise StopAsyncIteration
        await anyio.sleep(0)
        return left.pop()

    tracing = FakeTracing()
    got = [r.offset async for r in iterator_type(pending, refill, tracing)]
    assert got == [0, 1, 2, 3]
    assert tracing.calls == ["process 1", "finish", "process 3", "finish"]
    assert [traceparent(r) for r in (records[0], records[1])] == [None, b"00-1-2-01"]
    assert [r.offset for r in traced(records)] == [1, 3]
    assert scan(records) == ({"t"}, [records[1], records[3]])


async def test_every_nth_buffered_record_goes_out_through_pause(iterator_type: Any) -> None:
    """`pause` gets every `every`-th buffered record (counted across refills, never a refilled
    one) and its awaitable's result is what the iteration yields; order is kept."""
    pending: deque[ConsumerRecord] = deque(record(i) for i in range(7))
    paused: list[int] = []
    refilled = False

    async def refill() -> ConsumerRecord:
        nonlocal refilled
        if refilled:
            raise StopAsyncIteration
        refilled = True
        pending.extend(record(i) for i in range(8, 12))
        return record(7)

    async def pause(r: ConsumerRecord) -> ConsumerRecord:
        paused.append(r.offset)
        await anyio.sleep(0)
        return r

    got = [r.offset async for r in iterator_type(pending, refill, pause, 3)]
    assert got == list(range(12))
    assert paused == [2, 5, 9]


async def test_no_pause_when_every_is_zero(iterator_type: Any) -> None:
    pending: deque[ConsumerRecord] = deque(record(i) for i in range(4))

    async def refill() -> ConsumerRecord:
        raise StopAsyncIteration

    async def pause(r: ConsumerRecord) -> ConsumerRecord:
        raise AssertionError("not paused")

    assert [r.offset async for r in iterator_type(pending, refill, pause, 0)] == [0, 1, 2, 3]


async def test_traced_iteration_pauses_every_nth_buffered_record(tracing_twins: Any) -> None:
    """With tracing on, every `every`-th buffered record goes out through `pause` too, in its
    `process` span when it carries a trace context."""
    iterator_type = tracing_twins[0]
    parent = [("traceparent", b"00-1-2-01")]
    pending: deque[ConsumerRecord] = deque(
        traced_record(i, parent if i % 2 else []) for i in range(5)
    )
    paused: list[int] = []

    async def refill() -> ConsumerRecord:
        raise StopAsyncIteration

    async def pause(r: ConsumerRecord) -> ConsumerRecord:
        paused.append(r.offset)
        await anyio.sleep(0)
        return r

    tracing = FakeTracing()
    got = [r.offset async for r in iterator_type(pending, refill, tracing, pause, 2)]
    assert got == [0, 1, 2, 3, 4]
    assert paused == [1, 3]
    assert tracing.calls == ["process 1", "finish", "process 3", "finish"]
