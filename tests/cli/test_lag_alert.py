"""`krafka lag --max-lag N [--watch --for S]`: exit 3 naming the lagging partitions, for cron
and CI; the rule (above N in every refresh for S seconds) with an explicit `now`, the command
as a subprocess against Apache Kafka."""

from __future__ import annotations

import time
from typing import Any

import pytest
from _cli import assert_one_error_line, run_cli

from krafka.cli.lag import LagRow
from krafka.cli.lag_alert import EXIT_LAGGING, LagAlert
from krafka.structs import TopicPartition
from krafka.sync import AdminClient, Producer

pytestmark = [pytest.mark.timeout(120)]


def rows(*lags: int | None) -> list[LagRow]:
    return [
        LagRow("t", p, None if lag is None else 0, None if lag is None else lag)
        for p, lag in enumerate(lags)
    ]


def test_a_partition_breaches_once_it_stayed_above_the_limit_for_the_hold() -> None:
    alert = LagAlert(max_lag=10, hold=5.0)
    assert alert.observe(rows(11, 3), 0.0) == []
    assert alert.observe(rows(50, 3), 4.9) == []
    assert [r.partition for r in alert.observe(rows(12, 3), 5.0)] == [0]
    assert alert.observe(rows(10, 30), 6.0) == []  # back at the limit: starts over
    assert alert.observe(rows(None, 30), 10.0) == []  # unknown is not above
    assert [r.partition for r in alert.observe(rows(11, 31), 11.0)] == [1]
    assert "t-1 (lag 31)" in alert.message("g", alert.observe(rows(11, 31), 11.0))


def test_without_a_hold_the_first_refresh_above_breaches() -> None:
    assert LagAlert(max_lag=0).observe(rows(1), 0.0) == rows(1)


def test_lag_alerts_against_a_live_group(kafka: Any) -> None:
    b = kafka.bootstrap_servers
    topic, group = f"lag-alert-{time.time_ns()}", f"lag-alert-g-{time.time_ns()}"
    with Producer(bootstrap_servers=b) as producer:
        for i in range(5):
            producer.send(topic, b"%d" % i, partition=0)
        producer.flush()
    with AdminClient(bootstrap_servers=b) as admin:
        offsets = {TopicPartition(topic, 0): 1}
        admin.alter_group_offsets(group, offsets).raise_for_errors()

    calm = run_cli("-b", b, "lag", group, "--max-lag", "4", "--json")
    assert calm.returncode == 0 and calm.json()[0]["lag"] == 4
    lagging = run_cli("-b", b, "lag", group, "--max-lag", "3")
    assert lagging.returncode == EXIT_LAGGING
    assert f"{topic}-0 (lag 4)" in lagging.stderr and "above 3" in lagging.stderr

    started = time.monotonic()
    watched = run_cli(
        "-b", b, "lag", group, "--watch", "--interval", "0.2", "--max-lag", "3", "--for", "1",
        "--json",
    )  # fmt: skip
    assert watched.returncode == EXIT_LAGGING, watched
    assert time.monotonic() - started >= 1.0
    assert len(watched.lines) >= 2  # refreshes until the lag held for a second
    assert "for 1s" in watched.stderr and f"{topic}-0 (lag 4)" in watched.stderr

    assert_one_error_line(run_cli("-b", b, "lag", group, "--for", "1"), "--for needs --watch")
