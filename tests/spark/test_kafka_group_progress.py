"""`commitOffsetsToGroup` on Apache Kafka: a streaming `format("krafka")` query's progress
committed to a consumer group, as `krafka lag` and Java's `Admin.listConsumerGroupOffsets` see
it (Spark's own Kafka source never commits: SPARK-27549); and the option refused in batch reads."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from krafka import NewTopic, TopicPartition
from krafka.sync import AdminClient, Producer

pytestmark = [pytest.mark.broker, pytest.mark.timeout(300)]

ROOT = Path(__file__).resolve().parents[2]


def krafka_lag(bootstrap: str, group: str) -> dict[int, tuple[int, int]]:
    """`krafka lag GROUP --json` as an operator runs it: {partition: (current offset, lag)}."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-m", "krafka.cli", "-b", bootstrap, "lag", group, "--json"],
        capture_output=True, text=True, timeout=60, env=env, check=True,
    )  # fmt: skip
    rows = json.loads(done.stdout)
    return {row["partition"]: (row["current_offset"], row["lag"]) for row in rows}


def produce(bootstrap: str, topic: str, count: int) -> None:
    with Producer(bootstrap) as producer:
        for i in range(count):
            producer.send(topic, b"%d" % i, partition=i % 2)


def test_each_micro_batch_is_committed_to_the_group(spark: Any, kafka: Any, tmp_path: Path) -> None:
    from krafka.testing.javapeer import java_group_offsets

    bootstrap = kafka.bootstrap_servers
    topic, group = f"progress-{time.time_ns()}", f"spark-etl-{time.time_ns()}"
    with AdminClient(bootstrap) as admin:
        admin.create_topics([NewTopic(topic, 2)]).raise_for_errors()
    produce(bootstrap, topic, 100)

    def run() -> Any:
        query = (
            spark.readStream.format("krafka")
            .option("kafka.bootstrap.servers", bootstrap)
            .option("subscribe", topic)
            .option("startingOffsets", "earliest")
            .option("maxOffsetsPerTrigger", "40")
            .option("commitOffsetsToGroup", group)
            .load()
            .writeStream.format("noop")
            .option("checkpointLocation", str(tmp_path / "checkpoint"))
            .trigger(availableNow=True)
            .start()
        )
        query.awaitTermination(120)
        assert query.exception() is None
        return query

    query = run()
    assert len([p for p in query.recentProgress if p["numInputRows"]]) >= 3  # 40 at a time
    assert krafka_lag(bootstrap, group) == {0: (50, 0), 1: (50, 0)}
    produce(bootstrap, topic, 40)  # the query is behind: lag tools see it
    assert krafka_lag(bootstrap, group) == {0: (50, 20), 1: (50, 20)}
    run()  # resumes from its checkpoint, the group follows
    offsets = java_group_offsets(bootstrap, group)
    assert offsets == {TopicPartition(topic, p): (70, "krafka-spark") for p in (0, 1)}
    assert krafka_lag(bootstrap, group) == {0: (70, 0), 1: (70, 0)}


def test_refused_in_a_batch_read(spark: Any, kafka: Any) -> None:
    df = (
        spark.read.format("krafka")
        .option("kafka.bootstrap.servers", kafka.bootstrap_servers)
        .option("subscribe", "t")
        .option("commitOffsetsToGroup", "g")
    )
    with pytest.raises(Exception, match="commitOffsetsToGroup: only for streaming queries"):
        df.load().collect()
