"""The producer engine's metrics under Java's names: rates over a window of the sender's `now`,
errors in records, compression and the buffer."""

from __future__ import annotations

import pytest
from _producer_scripted import Harness

from krafka.errors import KafkaConnectionError
from krafka.protocol.error_codes import ErrorCode
from krafka.sansio.producer import ProducerConfig
from krafka.sansio.producer.metrics import JAVA_NAMES


def test_java_names_answer_the_snapshot() -> None:
    h = Harness()
    for i in range(10):
        h.send(b"v%d" % i)
    (plan,) = h.drain()
    h.advance(0.5)
    h.answer(plan, base_offset=0)
    snap = h.engine.metrics_snapshot(h.now)
    assert set(snap.java()) == set(JAVA_NAMES)
    assert snap["record-send-total"] == 10 and snap["request-total"] == 1
    assert snap["record-send-rate"] == pytest.approx(10 / 30)  # one 30 s window at least
    assert snap["request-latency-avg"] == pytest.approx(0.5)
    assert snap["buffer-total-bytes"] == h.engine.accumulator.buffer_memory
    assert snap["buffer-available-bytes"] == snap["buffer-total-bytes"]
    assert snap["record-error-total"] == 0 and snap["compression-rate-avg"] > 0
    with pytest.raises(KeyError):
        snap["records_sent"]


def test_failed_records_count_in_records_and_retries_in_batches() -> None:
    h = Harness(ProducerConfig(linger=0.0, retry_backoff=0.01, retries=1, enable_idempotence=False))
    for i in range(3):
        h.send(b"v%d" % i)
    (plan,) = h.drain()
    h.fail(plan, KafkaConnectionError("lost"))
    h.advance(1.0)
    (retry,) = h.drain()
    h.answer(retry, ErrorCode.NOT_LEADER_OR_FOLLOWER)
    h.advance(1.0)
    for again in h.drain():
        h.answer(again, ErrorCode.CORRUPT_MESSAGE)
    snap = h.engine.metrics_snapshot(h.now)
    assert snap["record-error-total"] == 3 and snap.errors == 1
    assert snap["record-retry-total"] >= 1
    assert snap["record-error-rate"] == pytest.approx(3 / 30)
    assert snap["record-send-total"] == 0
