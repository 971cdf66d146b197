"""The `format("krafka")` sink's task body on a live broker, without Spark: Arrow batches in,
records acknowledged; the executor process keeps one producer between tasks, and a task that
fails closes its producer instead of pooling it."""

from __future__ import annotations

import time
from typing import Any

import pytest

from krafka import NewTopic
from krafka.errors import KrafkaError
from krafka.spark.client_pool import PRODUCERS
from krafka.spark.kafka_options import SinkOptions
from krafka.spark.kafka_write import write_batches
from krafka.structs import TopicPartition
from krafka.sync import AdminClient, Consumer

pa = pytest.importorskip("pyarrow")

pytestmark = [pytest.mark.broker, pytest.mark.timeout(120)]


def rows(values: list[bytes]) -> Any:
    keys = [b"k%d" % i for i in range(len(values))]
    return pa.RecordBatch.from_arrays([pa.array(keys), pa.array(values)], names=["key", "value"])


def never() -> Any:
    raise AssertionError("the pool made a new producer instead of reusing its idle one")


def read_all(bootstrap: str, topic: str, n: int, partitions: int = 2) -> list[bytes]:
    with Consumer(bootstrap, auto_offset_reset="earliest") as consumer:
        consumer.assign([TopicPartition(topic, p) for p in range(partitions)])
        got: list[bytes] = []
        deadline = time.monotonic() + 30
        while len(got) < n and time.monotonic() < deadline:
            got += [r.value for r in consumer.poll(1.0) if r.value is not None]
    return sorted(got)


def test_tasks_share_one_producer_and_a_failed_task_closes_it(broker: Any) -> None:
    bootstrap, topic = broker.bootstrap_servers, f"sink-pool-{time.time_ns()}"
    with AdminClient(bootstrap) as admin:
        admin.create_topics([NewTopic(topic, 2)]).raise_for_errors()
    options = SinkOptions.parse({"kafka.bootstrap.servers": bootstrap, "topic": topic,
                                 "kafka.max.request.size": "4096"})  # fmt: skip
    PRODUCERS.close()
    assert write_batches(iter([rows([b"a", b"b"])]), options) == 2
    with PRODUCERS.lease(options.client, never) as first:
        pass
    assert write_batches(iter([rows([b"c"]), rows([b"d"])]), options) == 2
    with PRODUCERS.lease(options.client, never) as again:
        assert again is first and len(PRODUCERS) == 0
    with pytest.raises(KrafkaError):
        write_batches(iter([rows([b"x" * 10_000])]), options)  # over max.request.size
    assert len(PRODUCERS) == 0  # leased by the failed task, closed, not given back
    assert write_batches(iter([rows([b"e"])]), options) == 1
    PRODUCERS.close()
    assert read_all(bootstrap, topic, 5) == [b"a", b"b", b"c", b"d", b"e"]


def test_split_batches_are_written_and_a_rejected_record_fails_the_task(kafka_cluster: Any) -> None:
    """Apache Kafka refuses a batch over the topic's `max.message.bytes`: the producer splits
    it until each record goes alone, and a record still too large is the task's error."""
    bootstrap, topic = kafka_cluster.bootstrap_servers, f"sink-split-{time.time_ns()}"
    with AdminClient(bootstrap) as admin:
        small = NewTopic(topic, 1, configs={"max.message.bytes": "2000"})
        admin.create_topics([small]).raise_for_errors()
    options = SinkOptions.parse({"kafka.bootstrap.servers": bootstrap, "topic": topic,
                                 "kafka.linger.ms": "50"})  # fmt: skip
    values = [b"%04d" % i + b"v" * 1400 for i in range(12)]
    assert write_batches(iter([rows(values)]), options) == 12
    with pytest.raises(KrafkaError, match="not written"):
        write_batches(iter([rows([b"a" * 100, b"b" * 5000, b"c" * 100])]), options)
    PRODUCERS.close()
    written = read_all(bootstrap, topic, 14, partitions=1)
    assert [v for v in written if len(v) > 1000] == sorted(values)


def test_a_topic_column_sends_each_topics_rows_in_order(broker: Any) -> None:
    bootstrap, stamp = broker.bootstrap_servers, time.time_ns()
    topics = [f"sink-a-{stamp}", f"sink-b-{stamp}"]
    with AdminClient(bootstrap) as admin:
        admin.create_topics([NewTopic(t, 2) for t in topics]).raise_for_errors()
    options = SinkOptions.parse({"kafka.bootstrap.servers": bootstrap})
    n = 400
    headers = pa.array(
        [[{"key": "i", "value": b"%d" % i}] if i % 3 == 0 else None for i in range(n)],
        pa.list_(pa.struct([("key", pa.string()), ("value", pa.binary())])),
    )
    batch = pa.RecordBatch.from_arrays(
        [
            pa.array([topics[i % 2] for i in range(n)]),
            pa.array([b"%04d" % i for i in range(n)]),
            pa.array([i % 4 // 2 for i in range(n)], pa.int32()),
            headers,
        ],
        names=["topic", "value", "partition", "headers"],
    )
    assert write_batches(iter([batch, batch.slice(0, 0)]), options) == n
    with pytest.raises(KrafkaError, match="null topic"):
        write_batches(
            iter([batch.set_column(0, "topic", pa.array([None] * n, pa.string()))]), options
        )
    PRODUCERS.close()
    for index, topic in enumerate(topics):
        mine = [b"%04d" % i for i in range(n) if i % 2 == index]
        assert read_all(bootstrap, topic, len(mine)) == mine
    with Consumer(bootstrap, auto_offset_reset="earliest") as consumer:
        consumer.assign([TopicPartition(topics[0], 1)])
        got: list[Any] = []
        deadline = time.monotonic() + 30
        while len(got) < n // 4 and time.monotonic() < deadline:
            got += consumer.poll(1.0)
    expected = [i for i in range(0, n, 2) if i % 4 // 2 == 1]
    assert [r.value for r in got] == [b"%04d" % i for i in expected]  # row order kept
    assert expected[:2] == [2, 6] and [r.headers for r in got[:2]] == [(), (("i", b"6"),)]
