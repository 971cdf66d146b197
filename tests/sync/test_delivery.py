"""`DeliveryFuture.result`: the compiled first step (`_result.pyx`) answers exactly as the Python
method does, for delivered, failed, split and not-yet-appended records."""

from __future__ import annotations

import pytest

from krafka.errors import KrafkaError
from krafka.io.producer_handle import DeliveryHandle
from krafka.sansio.producer.batch import ProducerBatch
from krafka.sansio.producer.record import RecordMetadata
from krafka.sync.delivery import _RESULT, DeliveryFuture, future_class
from krafka.sync.untracked import new_untracked

KINDS = [False, True] if _RESULT is not None else [False]


def batch_of(*timestamps: int | None) -> ProducerBatch:
    batch = ProducerBatch("t", 2, 0.0, 1, created_ms=1_000)
    for ts in timestamps:
        batch.add(ts, None, b"v", None, 22)
    return batch


def future_on(batch: ProducerBatch | None, index: int, compiled: bool) -> DeliveryFuture:
    future = new_untracked(future_class(None, compiled=compiled))
    if batch is not None:
        future._handle = DeliveryHandle(batch, index)
    return future


@pytest.mark.parametrize("compiled", KINDS)
def test_a_delivered_record_gives_its_metadata(compiled: bool) -> None:
    batch = batch_of(None, 5)
    batch.complete(30)
    assert future_on(batch, 0, compiled).result() == RecordMetadata("t", 2, 30, 1_000)
    assert future_on(batch, 1, compiled).result() == RecordMetadata("t", 2, 31, 5)


@pytest.mark.parametrize("compiled", KINDS)
def test_a_failed_record_raises_and_a_split_one_follows_its_half(compiled: bool) -> None:
    failed = batch_of(None)
    failed.fail(KrafkaError("gone"))
    with pytest.raises(KrafkaError, match="gone"):
        future_on(failed, 0, compiled).result()
    split = batch_of(None, None, None)
    _, second = split.split()
    second.complete(8)
    assert future_on(split, 2, compiled).result() == RecordMetadata("t", 2, 9, 1_000)


@pytest.mark.parametrize("compiled", KINDS)
def test_a_pending_record_waits_for_its_timeout(compiled: bool) -> None:
    with pytest.raises(TimeoutError):
        future_on(batch_of(None), 0, compiled).result(timeout=0.01)
    with pytest.raises(TimeoutError):  # not even appended yet
        future_on(None, 0, compiled).result(timeout=0.01)


@pytest.mark.parametrize("compiled", KINDS)
def test_a_future_completed_the_standard_way_still_gives_its_metadata(compiled: bool) -> None:
    batch = batch_of(7)
    batch.complete(3)
    future = future_on(batch, 0, compiled)
    future.complete()  # what the loop does for a watched future
    assert future.done() and future.result() == RecordMetadata("t", 2, 3, 7)
