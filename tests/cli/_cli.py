"""Running `krafka` as a subprocess (`python -m krafka.cli`), the way operators run it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Result:
    returncode: int
    stdout: str
    stderr: str

    def json(self) -> Any:
        return json.loads(self.stdout)

    @property
    def lines(self) -> list[str]:
        return [line.rstrip() for line in self.stdout.splitlines()]


def run_cli(*args: str, input: bytes | str | None = None, timeout: float = 60) -> Result:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200"}
    env.pop("KRAFKA_BOOTSTRAP_SERVERS", None)
    data = input.encode() if isinstance(input, str) else input
    done = subprocess.run(
        [sys.executable, "-m", "krafka.cli", *args],
        input=data,
        capture_output=True,
        timeout=timeout,
        env=env,
        cwd=ROOT,
    )
    return Result(done.returncode, done.stdout.decode(), done.stderr.decode())


def assert_one_error_line(result: Result, *fragments: str) -> None:
    """A failed command: non-zero, one line on stderr naming the problem, no traceback."""
    assert result.returncode != 0, result
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("krafka: error: "), lines
    assert "Traceback" not in result.stderr
    for fragment in fragments:
        assert fragment in lines[0], lines[0]


def read_back(bootstrap: str, topic: str, count: int, partitions: int = 1) -> list[Any]:
    """`count` records of `topic` read from the start by librdkafka (an independent reader)."""
    import time

    import confluent_kafka

    consumer = confluent_kafka.Consumer(
        {"bootstrap.servers": bootstrap, "group.id": "cli-read-back", "enable.auto.commit": False}
    )
    consumer.assign(
        [confluent_kafka.TopicPartition(topic, p, confluent_kafka.OFFSET_BEGINNING)
         for p in range(partitions)]
    )  # fmt: skip
    records: list[Any] = []
    deadline = time.monotonic() + 30
    try:
        while len(records) < count and time.monotonic() < deadline:
            for message in consumer.consume(1000, 0.2):
                if message.error() is None:
                    records.append(message)
    finally:
        consumer.close()
    return records
