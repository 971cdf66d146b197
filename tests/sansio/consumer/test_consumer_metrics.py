"""The consumer's commit and rebalance metrics (Java's consumer-coordinator names)."""

from __future__ import annotations

import pytest

from krafka.sansio.consumer.metrics import ConsumerMetrics
from krafka.structs import TopicPartition

T0, T1 = TopicPartition("t", 0), TopicPartition("t", 1)


def test_rebalances_are_timed_from_their_start_to_the_assignment() -> None:
    metrics = ConsumerMetrics()
    assert metrics.snapshot({}, 1.0)["last-rebalance-seconds-ago"] is None
    metrics.rebalance_begun(10.0)
    metrics.rebalance_begun(11.0)  # a JoinGroup retried: the same rebalance
    metrics.rebalance_ended(13.0)
    metrics.rebalance_ended(20.0)  # an assignment in one heartbeat: no time
    snap = metrics.snapshot({T0: 4, T1: 6}, 25.0, {T0, T1})
    assert snap["rebalance-total"] == 2
    assert snap["rebalance-latency-max"] == 3.0
    assert snap["rebalance-latency-avg"] == pytest.approx(1.5)
    assert snap["last-rebalance-seconds-ago"] == 5.0
    assert snap["assigned-partitions"] == 2
    assert snap["records-lag-max"] == 6 and snap["records-lag"] == {T0: 4, T1: 6}
    assert snap["lag"] == 10  # the existing keys stay


def test_commits_and_consumption_rates() -> None:
    metrics = ConsumerMetrics()
    metrics.committed(0.02, failed=False)
    metrics.committed(0.04, failed=True)
    metrics.fetch_answered(0.1, 0.0, now=1.0)
    metrics.fetched(3000)
    metrics.consumed([], now=1.0)
    snap = metrics.snapshot({}, 2.0)
    assert snap["commit-total"] == 2 and snap["commit-failed-total"] == 1
    assert snap["commit-latency-avg"] == pytest.approx(0.03)
    assert snap["bytes-consumed-rate"] == pytest.approx(100.0)
    assert snap["fetch-total"] == 1 and snap["last-poll-seconds-ago"] is None
