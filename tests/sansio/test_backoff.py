from __future__ import annotations

import pytest

from krafka.sansio.backoff import Backoff, BackoffPolicy


def test_delays_double_up_to_the_cap() -> None:
    policy = BackoffPolicy(initial=0.1, maximum=1.0, jitter=0.0)
    assert [policy.delay(n) for n in range(6)] == pytest.approx([0, 0.1, 0.2, 0.4, 0.8, 1.0])


def test_endless_failures_stay_at_the_cap() -> None:
    policy = BackoffPolicy(initial=0.1, maximum=1.0, jitter=0.0, max_retries=None)
    assert policy.delay(5000) == pytest.approx(1.0)


def test_jitter_stays_within_bounds() -> None:
    policy = BackoffPolicy(initial=1.0, maximum=10.0, jitter=0.2)
    assert policy.delay(1, lambda: 0.0) == pytest.approx(0.8)
    assert policy.delay(1, lambda: 0.999999) == pytest.approx(1.2, rel=1e-5)


def test_backoff_tracks_failures_and_exhaustion() -> None:
    backoff = Backoff(BackoffPolicy(initial=0.5, jitter=0.0, max_retries=2))
    assert backoff.wait_time(10.0) == 0
    assert backoff.failed(10.0) == pytest.approx(10.5)
    assert backoff.wait_time(10.2) == pytest.approx(0.3)
    backoff.failed(11.0)
    assert not backoff.exhausted
    backoff.failed(12.0)
    assert backoff.exhausted
    backoff.succeeded()
    assert backoff.failures == 0 and backoff.wait_time(0) == 0


def test_invalid_policy_rejected() -> None:
    with pytest.raises(ValueError):
        BackoffPolicy(jitter=1.5)
