"""The delivery handle, compiled and pure, against the same batches: results, errors, waiting,
splits; and the compiled one stays out of the garbage collector's way. `send`, which makes
handles, returns a coroutine compiled or not."""

from __future__ import annotations

import collections.abc
import gc
import inspect
from typing import Any

import anyio
import pytest

from krafka import Producer
from krafka.errors import KafkaTimeoutError, KrafkaError
from krafka.io.producer_handle import implementations, waiting, wake_waiters
from krafka.sansio.producer.batch import ProducerBatch
from krafka.sansio.producer.record import RecordMetadata

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(30)]

IMPLEMENTATIONS = implementations()


@pytest.fixture(params=sorted(IMPLEMENTATIONS))
def handle_type(request: pytest.FixtureRequest) -> Any:
    return IMPLEMENTATIONS[request.param]


def make_batch(*timestamps: int | None) -> ProducerBatch:
    batch = ProducerBatch("t", 3, 0.0, 1, created_ms=1_700_000_000_000)
    for ts in timestamps:
        batch.add(ts, None, b"v", None, 22)
    return batch


async def test_a_delivered_record_gives_its_metadata_at_once(handle_type: Any) -> None:
    batch = make_batch(None, 42, None)
    handles = [handle_type(batch, i) for i in range(3)]
    assert not handles[0].done and handles[0].exception() is None
    batch.complete(100)
    metas = [await h for h in handles]
    assert metas == [
        RecordMetadata("t", 3, 100, 1_700_000_000_000),
        RecordMetadata("t", 3, 101, 42),  # its own timestamp
        RecordMetadata("t", 3, 102, 1_700_000_000_000),
    ]
    assert handles[1].result() == metas[1] and handles[1].done
    assert repr(handles[2]) == "<DeliveryHandle t-3 #2 done>"
    log_append = make_batch(None)
    log_append.complete(-1, log_append_time=55)  # acks=0 has no offset; LogAppendTime wins
    assert await handle_type(log_append, 0) == RecordMetadata("t", 3, -1, 55)


async def test_a_failed_record_raises_a_fresh_copy_of_the_batch_error(handle_type: Any) -> None:
    batch = make_batch(None, None)
    cause = KrafkaError("the broker went away")
    error = KafkaTimeoutError("t-3: not delivered within delivery_timeout")
    error.__cause__ = cause
    batch.fail(error)
    raised = []
    for handle in (handle_type(batch, 0), handle_type(batch, 1)):
        with pytest.raises(KafkaTimeoutError, match="delivery_timeout") as info:
            await handle
        raised.append(info.value)
        assert info.value.__cause__ is cause
    with pytest.raises(KafkaTimeoutError):
        handle_type(batch, 0).result()
    assert raised[0] is not raised[1] and error not in raised
    assert error.__traceback__ is None  # the stored error never references a waiter's frame
    assert handle_type(batch, 1).exception() is error


async def test_awaiting_a_pending_record_waits_for_its_batch(handle_type: Any) -> None:
    batch = make_batch(None, None)
    got: list[RecordMetadata] = []

    async def waiter(index: int) -> None:
        got.append(await handle_type(batch, index))

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(waiter, 0)
            tg.start_soon(waiter, 1)
            await anyio.sleep(0.01)
            assert got == [] and waiting(batch)
            batch.complete(7)
            wake_waiters(batch)  # what the producer does on the engine's BatchDone
    assert sorted(m.offset for m in got) == [7, 8] and not waiting(batch)


async def test_a_handle_follows_its_record_into_a_half_after_a_split(handle_type: Any) -> None:
    batch = make_batch(None, None, None, None)
    handle = handle_type(batch, 3)
    result: list[RecordMetadata] = []

    async def waiter() -> None:
        result.append(await handle)

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(waiter)
            await anyio.sleep(0.01)
            first, second = batch.split()
            assert handle.locate() == (second, 1)
            wake_waiters(batch)  # the split is reported done: waiters follow their records
            await anyio.sleep(0.01)
            first.complete(10)
            wake_waiters(first)
            await anyio.sleep(0.01)
            assert not result
            second.complete(20)
            wake_waiters(second)
    assert result == [RecordMetadata("t", 3, 21, 1_700_000_000_000)]


def test_compiled_handles_are_not_tracked_by_the_garbage_collector() -> None:
    compiled = IMPLEMENTATIONS.get("compiled")
    if compiled is None:
        pytest.skip("the compiled extensions are not built (KRAFKA_NO_EXTENSIONS?)")
    assert not gc.is_tracked(compiled(make_batch(None), 0))


def test_compiled_metadata_is_a_record_metadata_the_collector_does_not_track() -> None:
    """One `RecordMetadata` is made per confirmed record: built in C, untracked (its fields are
    a topic name and ints), so confirming many records triggers no collections."""
    compiled = IMPLEMENTATIONS.get("compiled")
    if compiled is None:
        pytest.skip("the compiled extensions are not built (KRAFKA_NO_EXTENSIONS?)")
    batch = make_batch(None, 5)
    batch.complete(8)
    metadata = [compiled(batch, i).delivered() for i in range(2)]
    assert metadata == [RecordMetadata("t", 3, 8, 1_700_000_000_000), RecordMetadata("t", 3, 9, 5)]
    assert all(type(m) is RecordMetadata and not gc.is_tracked(m) for m in metadata)
    assert metadata[1].offset == 9 and metadata[1].timestamp == 5 and metadata[1].topic == "t"


def test_a_delivered_handle_driven_by_hand_stops_with_its_metadata(handle_type: Any) -> None:
    """`await` needs no event loop for a delivered record: its awaitable is finished at once
    (the compiled handle returns a C awaitable; both speak the iterator protocol too)."""
    batch = make_batch(None, 7)
    batch.complete(40)
    for index, expected in ((0, RecordMetadata("t", 3, 40, 1_700_000_000_000)),
                            (1, RecordMetadata("t", 3, 41, 7))):  # fmt: skip
        awaitable = handle_type(batch, index).__await__()
        with pytest.raises(StopIteration) as stop:
            next(awaitable)
        assert stop.value.value == expected and type(stop.value.value) is RecordMetadata


def test_delivered_is_the_metadata_once_delivered_and_none_otherwise(handle_type: Any) -> None:
    pending = make_batch(None, 9)
    assert handle_type(pending, 1).delivered() is None
    pending.complete(10)
    assert handle_type(pending, 1).delivered() == RecordMetadata("t", 3, 11, 9)
    assert handle_type(pending, 0).delivered() == RecordMetadata("t", 3, 10, 1_700_000_000_000)
    failed = make_batch(None)
    failed.fail(KrafkaError("gone"))
    assert handle_type(failed, 0).delivered() is None
    split = make_batch(None, None)
    _, second = split.split()
    second.complete(70, log_append_time=3)
    assert handle_type(split, 1).delivered() is None  # the parent: use locate()/result()
    assert handle_type(split, 1).result() == RecordMetadata("t", 3, 70, 3)


class _TaggedBatch(ProducerBatch):
    """A batch of a subclass: the compiled handle reads its outcome as an attribute, not from
    `ProducerBatch`'s slot."""

    __slots__ = ("tag",)


async def test_a_batch_of_a_subclass_gives_the_same_metadata(handle_type: Any) -> None:
    batch = _TaggedBatch("t", 3, 0.0, 1, created_ms=1_700_000_000_000)
    batch.add(None, None, b"v", None, 22)
    handle = handle_type(batch, 0)
    assert handle.delivered() is None
    batch.complete(7)
    assert await handle == RecordMetadata("t", 3, 7, 1_700_000_000_000)


def test_send_returns_a_coroutine_whichever_implementation_runs() -> None:
    """`send` (compiled when built, else `Producer.send`) keeps its contract: a coroutine."""
    producer = Producer()
    assert inspect.iscoroutinefunction(producer.send)
    pending = producer.send("t", b"v")
    assert isinstance(pending, collections.abc.Coroutine)
    pending.close()
