"""`krafka group reset-offsets` scopes and targets as `kafka-consumer-groups.sh` has them
(`--all-topics`, `--to-current`, `--by-duration`, `--from-file`), and `krafka group lag`, on
Apache Kafka; `--from-file` reads the CSV the Java tool exports."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from _cli import assert_one_error_line, run_cli
from _members import unique

from krafka.cli.offsets import parse_duration_ms

pytestmark = [pytest.mark.timeout(180)]


def _produce(bootstrap: str, topic: str, stamps: dict[int, list[int]]) -> None:
    import confluent_kafka

    producer = confluent_kafka.Producer({"bootstrap.servers": bootstrap, "acks": "all"})
    for partition, times in stamps.items():
        for i, stamp in enumerate(times):
            producer.produce(topic, b"v%d" % i, partition=partition, timestamp=stamp)
    assert producer.flush(30) == 0


def _offsets(result: Any) -> list[tuple[str, int, int | None, int]]:
    assert result.returncode == 0, result
    return [
        (r["topic"], r["partition"], r["current_offset"], r["new_offset"]) for r in result.json()
    ]


def test_reset_scopes_and_targets_on_kafka(kafka: Any, tmp_path: Path) -> None:
    b, group = kafka.bootstrap_servers, unique("cli-rst")
    a, other = unique("cli-rst-a"), unique("cli-rst-b")
    run_cli("-b", b, "topics", "create", a, "--partitions", "2")
    run_cli("-b", b, "topics", "create", other, "--partitions", "1")
    now = int(time.time() * 1000)
    old, recent = now - 600_000, now - 1_000
    _produce(b, a, {0: [old] * 4 + [recent] * 3, 1: [recent] * 2})
    _produce(b, other, {0: [recent] * 5})

    def reset(*args: str) -> Any:
        return run_cli("-b", b, "group", "reset-offsets", group, *args, "--json")

    assert _offsets(reset("--topic", a, "--to-offset", "1", "--execute")) == [
        (a, 0, None, 1), (a, 1, None, 1),
    ]  # fmt: skip
    lag = run_cli("-b", b, "group", "lag", group, "--json")
    assert lag.json() == run_cli("-b", b, "lag", group, "--json").json()
    assert [(r["topic"], r["lag"]) for r in lag.json()] == [(a, 6), (a, 1)]

    # --all-topics: the partitions the group has offsets for (not `other`)
    assert _offsets(reset("--all-topics", "--to-current")) == [(a, 0, 1, 1), (a, 1, 1, 1)]
    assert _offsets(reset("--topic", other, "--to-current")) == [(other, 0, None, 5)]  # no commit
    assert _offsets(reset("--all-topics", "--by-duration", "PT5M", "--execute")) == [
        (a, 0, 1, 4), (a, 1, 1, 0),
    ]  # fmt: skip
    assert _offsets(reset("--all-topics", "--by-duration", "P1D")) == [(a, 0, 4, 0), (a, 1, 0, 0)]

    # --from-file: the CSV Java's tool exports, then one by hand (offsets kept within the log)
    exported = kafka.java(
        "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand",
        "--bootstrap-server", b, "--group", group, "--reset-offsets", "--all-topics",
        "--to-offset", "2", "--export", "--dry-run",
    )  # fmt: skip
    java_plan = tmp_path / "java.csv"
    java_plan.write_text(exported)
    assert _offsets(reset("--from-file", str(java_plan), "--execute")) == [
        (a, 0, 4, 2), (a, 1, 0, 2),
    ]  # fmt: skip
    by_hand = tmp_path / "plan.csv"
    by_hand.write_text(f"{a},1,99\n\n{other},0,3\n")
    assert _offsets(reset("--from-file", str(by_hand), "--execute")) == [
        (a, 1, 2, 2), (other, 0, None, 3),
    ]  # fmt: skip
    several = tmp_path / "groups.csv"
    several.write_text(f"someone-else,{a},0,0\n{group},{a},0,6\n")
    assert _offsets(reset("--from-file", str(several))) == [(a, 0, 2, 6)]
    assert [r["current_offset"] for r in run_cli("-b", b, "lag", group, "--json").json()] == [
        2, 2, 3,
    ]  # fmt: skip

    assert_one_error_line(reset("--all-topics", "--by-duration", "5 minutes"), "not a duration")
    assert_one_error_line(
        reset("--all-topics", "--from-file", str(by_hand)), "--from-file names its partitions"
    )
    assert_one_error_line(reset("--to-earliest"), "--topic TOPIC or --all-topics")
    several.write_text(f"someone-else,{a},0,0\n")
    assert_one_error_line(reset("--from-file", str(several)), "no offsets for group")


@pytest.mark.parametrize(
    ("text", "ms"),
    [
        ("PT30M", 1_800_000),
        ("P1DT2H", 93_600_000),
        ("pt0.5s", 500),
        ("PT-1.5S", -1_500),
        ("-PT1H", -3_600_000),
        ("P2D", 172_800_000),
        ("PT1H30M15.25S", 5_415_250),
    ],
)
def test_durations_read_as_javas_duration_parse(text: str, ms: int) -> None:
    assert parse_duration_ms(text) == ms


@pytest.mark.parametrize("text", ["P", "PT", "1H", "P1H", "PT1D", "P1Y", "PT1.5M", ""])
def test_bad_durations(text: str) -> None:
    with pytest.raises(ValueError, match="not a duration"):
        parse_duration_ms(text)
