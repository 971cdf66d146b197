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


def read_all(bootstrap: str, topic: str, n: int) -> list[bytes]:
    with Consumer(bootstrap, auto_offset_reset="earliest") as consumer:
        consumer.assign([TopicPartition(topic, 0), TopicPartition(topic, 1)])
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
