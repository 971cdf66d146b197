"""Reading one offset range under read_committed, driven by a scripted consumer (no Spark, no
broker): transactions whose marker lies past the last stable offset, as Apache Kafka leaves
them when another transaction opened before the marker was written."""

from __future__ import annotations

import struct
from collections.abc import Sequence
from typing import Any

import pytest

from krafka.codec import Record, encode_batch
from krafka.sansio.consumer.record import FetchedBatch
from krafka.spark.kafka_options import SourceOptions
from krafka.spark.kafka_plan import OffsetRange
from krafka.spark.kafka_read import _read
from krafka.structs import TopicPartition

pytest.importorskip("pyarrow")

TP = TopicPartition("t", 0)
A, B, C = 1, 2, 3


def data(base: int, values: list[bytes], pid: int = -1) -> bytes:
    records = [Record(i, 1000, None, v, []) for i, v in enumerate(values)]
    txn = pid >= 0
    return encode_batch(records, "none", base, pid, 0 if txn else -1, 0 if txn else -1, txn)


def marker(offset: int, pid: int, commit: bool) -> bytes:
    key, value = struct.pack(">hh", 0, 1 if commit else 0), struct.pack(">hi", 0, 0)
    return encode_batch([Record(0, 1000, key, value, [])], "none", offset, pid, 0, -1, True,
                        control=True)  # fmt: skip


class Scripted:
    """A consumer whose one fetch answers `log` up to the last stable offset, then nothing."""

    def __init__(self, log: bytes, lso: int, aborted: Sequence[tuple[int, int]]) -> None:
        self.fetches = [FetchedBatch(TP, log, 0, lso, lso + 4, lso, 0, tuple(aborted))]
        self.lso = lso

    def poll_batches(self, timeout: float) -> list[FetchedBatch]:
        return [self.fetches.pop(0)] if self.fetches else []

    def current_lag(self, tp: TopicPartition) -> int:
        return 0 if not self.fetches else self.lso


def read(log: bytes, lso: int, aborted: Sequence[tuple[int, int]]) -> list[bytes]:
    options = SourceOptions.parse(
        {
            "kafka.bootstrap.servers": "h:1",
            "subscribe": "t",
            "kafka.isolation.level": "read_committed",
        },
        streaming=False,
    )
    consumer: Any = Scripted(log, lso, aborted)
    batches = _read(consumer, TP, OffsetRange("t", 0, 0, lso), options)
    return [v for b in batches for v in b.column("value").to_pylist()]


def below_the_lso() -> bytes:
    """A aborts after B's first records; C opens (c0 at 8) before B's commit marker is written
    (at 11), so the last stable offset, 8, stops short of that marker: a read_committed fetch
    returns offsets 0-7 only."""
    return b"".join(
        [
            data(0, [b"a0", b"a1", b"a2"], A),
            data(3, [b"b0", b"b1"], B),
            data(5, [b"p0"]),
            data(6, [b"b2"], B),
            marker(7, A, commit=False),
        ]
    )


@pytest.mark.parametrize("listed", [((A, 0),), ()], ids=["kafka", "no-list"])
def test_a_transaction_decided_past_the_last_stable_offset_is_committed_unless_listed(
    listed: tuple[tuple[int, int], ...],
) -> None:
    """Below the last stable offset every transaction is decided; one whose marker the read
    cannot reach is aborted only if the broker lists it (Java's rule), not dropped as open."""
    assert read(below_the_lso(), 8, listed) == [b"b0", b"b1", b"p0", b"b2"]


def test_a_listed_transaction_without_its_marker_is_dropped() -> None:
    assert read(below_the_lso(), 8, [(A, 0), (B, 3)]) == [b"p0"]
