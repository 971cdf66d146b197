"""Consumer poll metrics: time between polls and Java's poll idle ratio."""

from __future__ import annotations

import pytest

from krafka.sansio.consumer.metrics import ConsumerMetrics


def test_poll_idle_ratio_is_the_waits_share_of_the_time_since_the_last_poll() -> None:
    metrics = ConsumerMetrics()
    metrics.poll_started(10.0)
    metrics.poll_ended(10.5)  # the first poll: nothing before it, all idle
    metrics.poll_started(12.0)  # 2 s after the first one started
    metrics.poll_ended(12.5)  # waited 0.5 s: 0.5 / (0.5 + 2)
    metrics.poll_started(13.0)
    metrics.poll_ended(13.0)  # records were there: no wait at all
    snap = metrics.snapshot({})
    assert snap["poll_idle_ratio_avg"] == pytest.approx((1.0 + 0.2 + 0.0) / 3)
    assert snap["time_between_poll_avg"] == pytest.approx(1.5)
    assert snap["time_between_poll_max"] == pytest.approx(2.0)


def test_no_poll_yet_reports_zeros() -> None:
    snap = ConsumerMetrics().snapshot({})
    assert snap["poll_idle_ratio_avg"] == snap["time_between_poll_avg"] == 0.0
