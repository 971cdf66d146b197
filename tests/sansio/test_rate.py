"""`WindowedRate`: Java's two-sample rate with an explicit `now`."""

from __future__ import annotations

import pytest

from krafka.sansio.rate import WindowedRate


def test_a_rate_covers_at_least_one_window() -> None:
    rate = WindowedRate(window=10.0)
    assert rate.rate(0.0) == 0.0
    rate.record(50, 0.0)
    assert rate.rate(1.0) == pytest.approx(5.0)  # 50 over the 10 s minimum, not over 1 s


def test_a_steady_stream_reads_its_rate_and_an_idle_one_falls_to_zero() -> None:
    rate = WindowedRate(window=10.0)
    for second in range(40):
        rate.record(7, float(second))
    assert rate.rate(39.5) == pytest.approx(7.0, rel=0.1)
    assert rate.rate(45.0) < 7.0
    assert rate.rate(80.0) == 0.0
