"""The engine's bulk appends, compiled and pure: `append_many` fills open batches over columns
of records (no handle per record) and stops where `append` must take over; `check_many`
refuses a bad record before any is appended."""

from __future__ import annotations

import random
from typing import Any

import pytest
from _producer_scripted import Cluster

from krafka.codec import murmur2_partition
from krafka.errors import MessageTooLargeError
from krafka.sansio.producer import BatchState, Due, ProducerConfig, ProducerEngine
from krafka.sansio.producer.batch import BATCH_OVERHEAD, ProducerBatch
from krafka.sansio.producer.engine import OPEN_APPENDER, SEALED_RUN

KINDS = ["pure", "compiled"] if OPEN_APPENDER is not None else ["pure"]


def twin(kind: str, **kw: Any) -> ProducerEngine:
    """An engine with its bulk appends compiled (as built) or the Python methods, on a fake
    cluster (topics "t" and "u" of 16 partitions)."""
    kw.setdefault("linger", 0.01)
    engine = ProducerEngine(ProducerConfig(**kw), Cluster())
    if kind == "pure":
        for name in ("append_open", "append_many", "check_many"):
            vars(engine).pop(name, None)
    return engine


def records(batch: ProducerBatch) -> list[tuple[Any, Any, Any]]:
    return [(r.key, r.value, r.timestamp) for r in batch.builder.records()]


@pytest.mark.parametrize("kind", KINDS)
def test_append_many_fills_open_batches_and_stops_where_append_must_go_on(kind: str) -> None:
    engine = twin(kind, buffer_memory=10_000, batch_size=BATCH_OVERHEAD + 300)
    acc = engine.accumulator
    values = [b"%d" % i * 79 for i in range(6)]  # 100 bytes each with the record overhead
    batches: dict[ProducerBatch, None] = {}
    assert engine.append_many("t", 0, None, values, None, 0, batches) == (0, 0)  # no batch
    _, first = acc.append("t", 0, None, None, values[0], None, 100, 0.0, 1)
    assert engine.append_many("t", 0, None, values, [None, None, 7, None, None, None], 1, batches)
    assert batches == {first.batch: None} and engine.due is Due.SEALED
    assert first.batch.state is BatchState.SEALED and first.batch.stamps == [1, 1, 7]
    assert records(first.batch)[2] == (None, values[2], 7)
    assert engine.append_many("t", 0, None, values, None, 3, batches) == (3, 0)  # sealed: append
    assert engine.append_many("t", 0, None, values, None, 6, batches) == (6, None)  # nothing left


@pytest.mark.parametrize("kind", KINDS)
def test_append_many_reports_a_sealed_run_and_partitions_per_record(kind: str) -> None:
    engine = twin(kind, buffer_memory=10_000, batch_size=BATCH_OVERHEAD + 21 + 201)
    acc = engine.accumulator
    for partition in (1, 2):
        acc.append("t", partition, None, None, b"", None, 21, 0.0, 1)
    values = [b"x" * 79] * 3
    batches: dict[ProducerBatch, None] = {}
    found = engine.append_many("t", [1, 2, 1], [b"a", None, None], values, None, 0, batches)
    assert found == (3, SEALED_RUN)  # the third record filled partition 1's batch exactly
    assert [(b.partition, b.count) for b in batches] == [(1, 3), (2, 2)]
    keyed = twin(kind)
    keyed.accumulator.append("u", 3, None, None, b"", None, 21, 0.0, 1)
    assert keyed.append_many("u", None, [b"key"], [b"v"], None, 0, {})[0] in (0, 1)
    assert twin(kind).append_many("absent", None, None, [b"v"], None, 0, {}) == (0, None)


@pytest.mark.parametrize("kind", KINDS)
def test_keys_go_where_murmur2_puts_them(kind: str) -> None:
    """The default partitioner's choice, made in C for bytes keys when compiled."""
    engine = twin(kind)
    for partition in range(16):
        engine.accumulator.append("t", partition, None, None, b"", None, 21, 0.0, 1)
    keys = [b"key-%d" % i for i in range(500)] + [b"", bytearray(b"buffer"), None]
    batches: dict[ProducerBatch, None] = {}
    assert engine.append_many("t", None, keys, [b"v"] * len(keys), None, 0, batches)[0] == 503
    placed = {bytes(r.key): b.partition for b in batches for r in b.builder.records() if r.key}
    assert placed == {bytes(k): murmur2_partition(k, 16) for k in keys if k}
    handle = engine.append_open("t", None, None, b"key-7", b"v")
    assert handle.batch.partition == murmur2_partition(b"key-7", 16)  # type: ignore[union-attr]


@pytest.mark.parametrize("kind", KINDS)
def test_check_many_refuses_the_first_bad_record_naming_it(kind: str) -> None:
    engine = twin(kind, max_request_size=1000)
    engine.check_many([b"k", None], [b"v", bytearray(b"w")], None)
    engine.check_many(None, [b"v"], [5])
    with pytest.raises(MessageTooLargeError, match="max_request_size=1000") as large:
        engine.check_many(None, [b"v", b"x" * 1000], None)
    assert large.value.__notes__ == ["send_many: record 1"]
    with pytest.raises(TypeError, match="key"):
        engine.check_many([b"k", "text"], [b"v", b"w"], None)  # type: ignore[list-item]
    with pytest.raises(ValueError, match="timestamp"):
        engine.check_many(None, [b"v", b"w"], [1, -1])
    assert engine.accumulator.open_batches == {}


def test_the_compiled_run_leaves_the_batches_as_the_python_one_does() -> None:
    """Random columns (keys, explicit partitions, timestamps now and then) appended by both
    twins, `append` taking over where they stop: the same batches, sizes, stamps and records."""
    if OPEN_APPENDER is None:
        pytest.skip("the compiled extension is not built")
    rng = random.Random(25)
    count = 3000
    keys = [None if rng.random() < 0.3 else b"k%d" % rng.randrange(50) for _ in range(count)]
    values = [b"v" * rng.randrange(0, 300) for _ in range(count)]
    parts: list[int | None] = [None if rng.random() < 0.5 else rng.randrange(4) for _ in keys]
    stamps = [None if rng.random() < 0.9 else rng.randrange(10**12) for _ in keys]
    seen = []
    for kind in ("pure", "compiled"):
        engine = twin(kind, batch_size=4000, buffer_memory=10**8)
        engine.partitioner._rand = lambda n: 0  # type: ignore[attr-defined]
        batches: dict[ProducerBatch, None] = {}
        start = 0
        while start < count:
            start, found = engine.append_many("t", parts, keys, values, stamps, start, batches)
            if start < count and found != SEALED_RUN:
                handle = engine.append(
                    "t", found, stamps[start], keys[start], values[start], None, 0.0, 1
                )
                batches[handle.batch] = None
                start += 1
        seen.append(
            [(b.partition, b.count, b.size, b.stamps, b.state, records(b)) for b in batches]
        )
    assert seen[0] == seen[1]


@pytest.mark.parametrize("kind", KINDS)
def test_a_keyless_run_that_overflows_its_sticky_batch_moves_on_without_a_lone_record(
    kind: str,
) -> None:
    """As `append_open` (KIP-480): the sticky partition's full batch is sealed and the run is
    asked again, so the record that did not fit opens the next sticky partition's batch instead
    of a batch of its own on the full one."""
    from krafka.sansio.partitioner import DefaultPartitioner

    order = iter([0, 4, 8, 1, 5, 9])
    engine = twin(kind, batch_size=BATCH_OVERHEAD + 3 * 31 + 5)
    engine.partitioner = DefaultPartitioner(rand=lambda n: next(order))
    if kind == "compiled":
        assert OPEN_APPENDER is not None
        appender = OPEN_APPENDER(engine)
        engine.append_open, engine.append_many = appender.append_open, appender.append_many  # type: ignore[method-assign]
    values = [b"v%09d" % i for i in range(10)]
    batches: dict[ProducerBatch, None] = {}
    start = 0
    while start < len(values):  # the driver's loop (`Producer.send_many`)
        start, found = engine.append_many("t", None, None, values, None, start, batches)
        if start >= len(values) or found == SEALED_RUN:
            continue
        assert found is not None and not engine.seal_open("t", found)
        handle = engine.append("t", found, None, None, values[start], None, 0.0, 1)
        batches[handle.batch] = None
        start += 1
    assert [(b.partition, b.count) for b in engine.accumulator.batches()] == [
        (0, 3), (5, 3), (9, 3), (1, 1)
    ]  # fmt: skip
