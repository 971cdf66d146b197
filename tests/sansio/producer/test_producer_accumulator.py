"""The record accumulator (a part of the engine): batch_size sealing, linger, flush, buffer
accounting, retry order; and the engine's `append_open` over it, compiled and pure."""

from __future__ import annotations

from typing import Any

import pytest
from _producer_scripted import Cluster

from krafka.codec import Compression
from krafka.sansio.partitioner import DefaultPartitioner, Partitioner
from krafka.sansio.producer import BatchState, Due, ProducerConfig, ProducerEngine, RecordHandle
from krafka.sansio.producer.accumulator import APPENDED, OPENED, SEALED, RecordAccumulator
from krafka.sansio.producer.batch import BATCH_OVERHEAD
from krafka.sansio.producer.engine import OPEN_APPENDER

TP = ("t", 0)


Fields = tuple[int | None, bytes | None, bytes | None, None]


def rec(value: bytes = b"x" * 79) -> Fields:
    """(timestamp, key, value, headers) of a record without timestamp, key or headers."""
    return (None, None, value, None)


def make(**kw: object) -> RecordAccumulator:
    kw.setdefault("linger", 0.01)
    return RecordAccumulator(ProducerConfig(**kw))  # type: ignore[arg-type]


def test_append_opens_fills_and_seals_at_batch_size() -> None:
    sealed: list[tuple[str, int]] = []
    acc = RecordAccumulator(
        ProducerConfig(batch_size=BATCH_OVERHEAD + 300, linger=1.0),
        on_seal=lambda t, p: sealed.append((t, p)),
    )
    results = [acc.append("t", 0, *rec(), 100, 0.0, 1)[0] for _ in range(4)]
    assert results == [OPENED, APPENDED, SEALED, OPENED]
    assert sealed == [TP]
    assert list(acc.sendable(0.0)) == [TP]  # the sealed batch goes without waiting for linger
    batch = acc.pop(TP)
    assert batch.count == 3 and batch.state is BatchState.SEALED


def test_a_record_that_does_not_fit_seals_the_open_batch_first() -> None:
    acc = make(batch_size=BATCH_OVERHEAD + 250)
    acc.append("t", 0, *rec(), 100, 0.0, 1)
    acc.append("t", 0, *rec(), 100, 0.0, 1)
    result, handle = acc.append("t", 0, *rec(), 100, 0.0, 1)
    assert result == SEALED and handle.locate()[1] == 0
    first = acc.pop(TP)
    assert first.count == 2 and handle.batch is not first


def test_linger_holds_an_open_batch_until_it_expires() -> None:
    acc = make(linger=0.05)
    acc.append("t", 0, *rec(), 100, 10.0, now_ms=1234)
    assert list(acc.sendable(10.04)) == []
    assert acc.next_change(10.04) == 10.05
    assert acc.next_change(10.05) == 10.0 + 120.0  # sendable since: its delivery timeout
    assert list(acc.sendable(10.05)) == [TP]
    batch = acc.pop(TP)
    assert batch.created_ms == 1234 and batch.state is BatchState.SEALED
    assert acc.next_change(10.05) is None


def test_timer_slack_counts_a_batch_lingered_half_of_it_early() -> None:
    """A driver whose timers fire up to 1 ms late (epoll's rounded-up milliseconds) has the
    batch go `linger` after it opened on average: due 0.5 ms early, woken 0-1 ms after."""
    acc = make(linger=0.005, timer_slack=0.001)
    acc.append("t", 0, *rec(), 100, 10.0, now_ms=1234)
    assert acc.next_change(10.0) == pytest.approx(10.0045)
    assert list(acc.sendable(10.0044)) == []
    assert list(acc.sendable(10.0045)) == [TP]
    zero = make(linger=0.0, timer_slack=0.001)
    zero.append("t", 0, *rec(), 100, 10.0, now_ms=1234)
    assert list(zero.sendable(10.0)) == [TP]  # never before it opened
    with pytest.raises(ValueError, match="timer_slack"):
        ProducerConfig(timer_slack=-1.0)


def test_flush_makes_open_batches_sendable_at_once() -> None:
    acc = make(linger=10.0)
    acc.append("t", 0, *rec(), 100, 0.0, 1)
    acc.append("t", 1, *rec(), 100, 0.0, 1)
    assert list(acc.sendable(0.0)) == []
    acc.flushing = True
    assert sorted(acc.sendable(0.0)) == [("t", 0), ("t", 1)]
    acc.flushing = False
    assert list(acc.sendable(0.0)) == []


def test_buffer_memory_back_pressure_counts_open_and_sealed_batches() -> None:
    acc = make(buffer_memory=1000, batch_size=10_000)
    assert acc.has_room(5000)  # an empty buffer takes anything
    acc.append("t", 0, *rec(), 400, 0.0, 1)
    acc.append("t", 1, *rec(), 400, 0.0, 1)
    assert acc.has_room(200) and not acc.has_room(201)
    batch = acc.pop(TP)  # sealed: counted in `buffered` now
    assert acc.buffered == 400
    assert not acc.has_room(201)
    acc.release(batch)
    assert acc.buffered == 0 and acc.has_room(600)


def twin(kind: str, partitioner: Partitioner | None = None, **kw: Any) -> ProducerEngine:
    """An engine with its `append_open` compiled (as built) or the Python method (the
    reference), on a fake cluster (topics "t" and "u" of 16 partitions)."""
    kw.setdefault("linger", 0.01)
    engine = ProducerEngine(ProducerConfig(**kw), Cluster(), partitioner=partitioner)
    if kind == "pure":
        vars(engine).pop("append_open", None)
    return engine


APPEND_OPEN = ["pure", "compiled"] if OPEN_APPENDER is not None else ["pure"]


@pytest.mark.parametrize("kind", APPEND_OPEN)
def test_append_open_fills_the_open_batch_and_seals_it_when_full(kind: str) -> None:
    engine = twin(kind, buffer_memory=10_000, batch_size=BATCH_OVERHEAD + 300)
    acc = engine.accumulator
    value = b"x" * 79  # 100 bytes with the record overhead
    assert engine.append_open("t", 0, None, None, value) == 0  # no open batch: go on with 0
    _, first = acc.append("t", 0, *rec(b"a" * 79), 100, 0.0, 1)
    handle = engine.append_open("t", 0, None, None, b"b" * 79)
    assert isinstance(handle, RecordHandle) and engine.due is Due.NOTHING
    assert handle.locate() == (first.batch, 1) and first.batch.stamps is None
    assert engine.append_open("t", 0, None, None, value + b"!") == 0  # over the limit
    assert engine.append_open("t", 7, None, None, b"") == 7  # another partition
    handle = engine.append_open("t", 0, 42, b"k", b"c" * 78)
    assert isinstance(handle, RecordHandle) and engine.due is Due.SEALED
    assert handle.batch.state is BatchState.SEALED and TP not in acc.open_batches
    assert engine.append_open("t", 0, None, None, b"") == 0
    batch = acc.pop(TP)
    created = batch.created_ms  # records without a timestamp get the batch's
    assert [(r.key, r.value[:1], r.timestamp) for r in batch.builder.records()] == [
        (None, b"a", created),
        (None, b"b", created),
        (b"k", b"c", 42),
    ]
    assert batch.stamps == [created, created, 42]
    assert batch.size == BATCH_OVERHEAD + 300


@pytest.mark.parametrize("kind", APPEND_OPEN)
def test_append_open_chooses_the_partition_once(kind: str) -> None:
    """With no partition given it asks the partitioner (murmur2 of the key here) and hands
    back the choice when the record needs `append`; unknown topics choose nothing."""
    engine = twin(kind)
    chosen = engine.append_open("t", None, None, b"key", b"v")
    assert isinstance(chosen, int) and 0 <= chosen < 16
    engine.accumulator.append("t", chosen, None, b"key", b"v", None, 30, 0.0, 1)
    handle = engine.append_open("t", None, None, b"key", b"w")
    assert isinstance(handle, RecordHandle) and handle.batch.partition == chosen
    assert engine.append_open("unknown", None, None, b"key", b"v") is None
    engine.open_appends = False  # a transactional producer: every record through `append`
    if kind == "compiled":
        engine._appender.enabled = False
    assert engine.append_open("t", None, None, b"key", b"v") is None
    assert engine.append_open("t", 3, None, b"key", b"v") == 3


def test_retried_batches_go_back_in_front_in_their_original_order() -> None:
    acc = make(linger=0.0, batch_size=BATCH_OVERHEAD + 100)
    for _ in range(4):
        acc.append("t", 0, *rec(), 100, 0.0, 1)
    b1, b2, b3 = acc.pop(TP), acc.pop(TP), acc.pop(TP)
    acc.reenqueue(b3, retry_at=1.0)
    acc.reenqueue(b1, retry_at=1.0)
    assert list(acc.sendable(0.5)) == []  # head is b1, backing off: b4 may not overtake it
    assert list(acc.sendable(1.0)) == [TP]
    assert [acc.pop(TP) for _ in range(2)] == [b1, b3]
    assert b2.order < b3.order
    assert acc.pop(TP).order > b3.order


def test_expire_and_drop_all() -> None:
    acc = make(delivery_timeout=5.0)
    acc.append("t", 0, *rec(), 100, 0.0, 1)
    acc.append("t", 1, *rec(), 100, 3.0, 1)
    expired = acc.expire(5.0)
    assert [b.tp for b in expired] == [("t", 0)]
    assert [b.tp for b in acc.drop_all()] == [("t", 1)]
    assert acc.empty and acc.open_batches == {}


@pytest.mark.parametrize("kind", APPEND_OPEN)
def test_append_open_takes_no_partition_outside_the_open_ones(kind: str) -> None:
    engine = twin(kind)
    acc = engine.accumulator
    acc.append("t", 0, *rec(), 100, 0.0, 1)
    acc.append("t", 1, *rec(), 100, 0.0, 1)
    for partition in (-1, -2, 2):  # never counted from the end, never past the last
        assert engine.append_open("t", partition, None, None, b"v") == partition
    assert engine.append_open("other", 0, None, None, b"v") == 0
    handle = engine.append_open("t", 1, 5, None, b"v")
    assert isinstance(handle, RecordHandle) and handle.locate()[0].partition == 1
    assert handle.batch.stamps == [handle.batch.created_ms, 5]


@pytest.mark.skipif(OPEN_APPENDER is None, reason="extensions not built")
def test_the_compiled_append_open_writes_what_the_python_one_writes() -> None:
    engines = [twin(kind, batch_size=BATCH_OVERHEAD + 700) for kind in ("pure", "compiled")]
    results = []
    for engine in engines:
        acc = engine.accumulator
        acc.append("t", 0, *rec(b"first"), 26, 0.0, now_ms=1_000)
        got = []
        for k, v, ts in [
            (b"k", b"v" * 50, None), (None, bytearray(b"b" * 90), 7), (b"kk", None, None),
            (None, b"x" * 600, None), (b"k", b"v" * 300, 9),
        ]:  # fmt: skip
            handle = engine.append_open("t", 0, ts, k, v)
            got.append((isinstance(handle, RecordHandle), engine.due))
            engine.due = Due.NOTHING
        batch = acc.pop(("t", 0))
        results.append((
            got, batch.size, batch.state, batch.stamps, batch.encode(Compression.NONE),
        ))  # fmt: skip
    assert results[0] == results[1]


def test_a_record_that_could_never_be_sent_is_refused() -> None:
    from krafka.errors import RecordTooLargeError

    acc = make(max_request_size=1000, buffer_memory=2000)
    acc.check_record_size(1000 - BATCH_OVERHEAD)
    with pytest.raises(RecordTooLargeError, match="max_request_size=1000"):
        acc.check_record_size(1001 - BATCH_OVERHEAD)
    wide = make(max_request_size=5000, buffer_memory=2000)
    with pytest.raises(RecordTooLargeError, match="buffer_memory=2000"):
        wide.check_record_size(2001 - BATCH_OVERHEAD)


def test_a_batch_never_grows_past_max_request_size() -> None:
    """batch_size above max_request_size: the fast path (`append_open`) still stops there."""
    acc = make(batch_size=10_000, max_request_size=1000, linger=1.0)
    acc.append("t", 0, *rec(b"x" * 100), 121, 0.0, 1)
    batch = acc.open_batches[TP]
    assert batch.limit == 1000
    appended = 0
    while acc.append_open("t", 0, None, b"x" * 100, None)[0] is not None:  # the Python twin
        appended += 1
    assert batch.size <= 1000 and appended < 10


@pytest.mark.parametrize("kind", APPEND_OPEN)
def test_a_keyless_record_that_overflows_its_sticky_batch_goes_to_the_next_sticky_partition(
    kind: str,
) -> None:
    """KIP-480: a record the sticky partition's batch has no room for seals that batch, and the
    partitioner's next choice takes the record. It did not go back to the full partition, in a
    batch of its own that lingered and went out alone: half of all batches of 12 partitions x
    1 KB held a single record."""
    order = iter([0, 4, 8, 1, 5, 9])
    engine = twin(
        kind,
        DefaultPartitioner(rand=lambda n: next(order)),
        batch_size=BATCH_OVERHEAD + 3 * 31 + 5,
    )
    handles = [engine.append("t", None, None, None, b"v%09d" % i, None, 0.0, 1) for i in range(10)]
    placed = [(h.batch.partition, h.index) for h in handles]
    assert placed == [(0, 0), (0, 1), (0, 2), (5, 0), (5, 1), (5, 2), (9, 0), (9, 1), (9, 2),
                      (1, 0)]  # fmt: skip
    assert [b.count for b in engine.accumulator.batches()] == [3, 3, 3, 1]
    keyed = [engine.append("t", None, None, b"k", b"k%08d" % i, None, 0.0, 1) for i in range(4)]
    assert len({h.batch.partition for h in keyed}) == 1  # a key's partition never changes


@pytest.mark.parametrize("kind", APPEND_OPEN)
def test_a_sticky_partition_beyond_a_shrunk_topic_is_repicked_by_either_appender(
    kind: str,
) -> None:
    """Null-keyed records stick where the partitioner's `choices` say (read directly by the
    compiled appender) only while that partition exists."""
    picks = iter([7, 1])
    engine = twin(kind, DefaultPartitioner(rand=lambda n: next(picks)))
    engine.metadata.partition_counts["t"] = 8

    def placed(value: bytes) -> int:
        return engine.append("t", None, None, None, value, None, 0.0, 1).batch.partition

    assert [placed(b"v"), placed(b"w")] == [7, 7]
    engine.metadata.partition_counts["t"] = 2
    assert placed(b"x") == 1
