"""`krafka consume` as a subprocess against Tansu."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from _cli import run_cli
from _members import unique

pytestmark = [pytest.mark.timeout(120), pytest.mark.broker]


def test_from_beginning_count_format_and_offset(broker: Any) -> None:
    b, topic = broker.bootstrap_servers, unique("cli-consume")
    run_cli("-b", b, "topics", "create", topic, "--partitions", "1")
    lines = "".join(f"k{i}:v{i}\n" for i in range(20))
    assert run_cli("-b", b, "produce", topic, "--key-separator", ":", input=lines).returncode == 0
    done = run_cli(
        "-b", b, "consume", topic, "--from-beginning", "--count", "5", "--format", "%o %k=%v"
    )  # fmt: skip
    assert done.returncode == 0, done
    assert done.lines == [f"{i} k{i}=v{i}" for i in range(5)]
    assert "Consumed 5 records" in done.stderr
    one = run_cli("-b", b, "produce", topic, input="v20\n")
    assert one.stderr.startswith(f"Produced 1 record to {topic} ("), one
    at = run_cli("-b", b, "consume", topic, "--offset", "20", "--count", "1", "--partition", "0")
    assert at.lines == ["v20"] and f"Consumed 1 record from {topic}." in at.stderr


def test_group_commits_and_resumes(broker: Any, tmp_path: Path) -> None:
    b, topic, group = broker.bootstrap_servers, unique("cli-consume-g"), unique("cli-g")
    # Tansu holds a new group's first JoinGroup for about half the session timeout
    config = tmp_path / "client.properties"
    config.write_text("session.timeout.ms=6000\nmax.poll.interval.ms=10000\n")
    run_cli("-b", b, "topics", "create", topic, "--partitions", "2")
    run_cli("-b", b, "produce", topic, input="".join(f"v{i}\n" for i in range(10)))
    first = run_cli("-b", b, "--command-config", str(config), "consume", topic, "--group", group,
                    "--from-beginning", "--count", "6")  # fmt: skip
    assert first.returncode == 0, first
    second = run_cli("-b", b, "--command-config", str(config), "consume", topic, "--group", group,
                     "--count", "4")  # fmt: skip
    assert second.returncode == 0, second
    assert sorted(first.lines + second.lines) == sorted(f"v{i}" for i in range(10))


def test_bad_options_are_one_line(broker: Any) -> None:
    done = run_cli("-b", broker.bootstrap_servers, "consume", "x", "--from-time", "yesterday")
    assert done.returncode != 0
    assert len(done.stderr.strip().splitlines()) == 1 and "--from-time" in done.stderr


def test_a_partition_the_topic_lacks_fails_naming_its_count(broker: Any) -> None:
    b, topic = broker.bootstrap_servers, unique("cli-consume-p")
    run_cli("-b", b, "topics", "create", topic, "--partitions", "2")
    done = run_cli("-b", b, "consume", topic, "--partition", "99", timeout=60)
    assert done.returncode == 1, done
    assert f"{topic}-99 does not exist: '{topic}' has 2 partitions (0..1)" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
