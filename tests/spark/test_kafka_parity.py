"""`format("krafka")` against Spark's own Kafka connector (`format("kafka")`, the JVM one) on
Apache Kafka, same session: the same rows both ways (`exceptAll` each way empty) over a topic
with every codec, headers, null keys, a committed and an aborted transaction, under both
isolation levels; and the streaming sink writing what the JVM source reads back."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.broker, pytest.mark.timeout(300)]

CODECS = ("none", "gzip", "snappy", "lz4", "zstd")


def unique(prefix: str) -> str:
    return f"{prefix}-{time.time_ns()}"


def fill(bootstrap: str, topic: str) -> None:
    """40 records per codec from librdkafka (headers, null keys) and two krafka transactions,
    one committed and one aborted, over 3 partitions."""
    import confluent_kafka

    from krafka import NewTopic
    from krafka.sync import AdminClient, Producer

    with AdminClient(bootstrap) as admin:
        admin.create_topics([NewTopic(topic, 3)]).raise_for_errors()
    for codec in CODECS:
        producer = confluent_kafka.Producer(
            {"bootstrap.servers": bootstrap, "compression.type": codec, "linger.ms": 5}
        )
        for i in range(40):
            headers = [("codec", codec.encode()), ("empty", None), ("i", str(i).encode())]
            producer.produce(topic, value=f"{codec}-{i}".encode(), partition=i % 3,
                             key=None if i % 4 == 0 else f"k{i}".encode(),
                             headers=headers if i % 5 else None)  # fmt: skip
        assert producer.flush(30) == 0
    with Producer(bootstrap, transactional_id=unique("parity"), compression="zstd") as tx:
        for commit in (True, False):
            tx.begin_transaction()
            for i in range(30):
                tx.send(topic, b"tx-%d-%d" % (commit, i), key=b"t%d" % i, partition=i % 3,
                        headers=[("tx", b"1")])  # fmt: skip
            tx.flush()
            if commit:
                tx.commit_transaction()
            else:
                tx.abort_transaction()


def load(spark: Any, fmt: str, bootstrap: str, topic: str, isolation: str) -> Any:
    return (
        spark.read.format(fmt)
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", topic)
        .option("startingOffsets", "earliest")
        .option("includeHeaders", "true")
        .option("kafka.isolation.level", isolation)
        .load()
    )


def test_same_rows_as_sparks_kafka_source(spark: Any, kafka: Any) -> None:
    bootstrap, topic = kafka.bootstrap_servers, unique("parity")
    fill(bootstrap, topic)
    for isolation, transactional in (("read_uncommitted", 60), ("read_committed", 30)):
        jvm = load(spark, "kafka", bootstrap, topic, isolation)
        ours = load(spark, "krafka", bootstrap, topic, isolation)
        assert ours.schema == jvm.schema
        assert ours.exceptAll(jvm).count() == 0, isolation
        assert jvm.exceptAll(ours).count() == 0, isolation
        assert ours.count() == len(CODECS) * 40 + transactional


def test_streaming_sink_writes_what_the_jvm_source_reads(
    spark: Any, kafka: Any, tmp_path: Path
) -> None:
    """A streaming query through `format("krafka")` both ways (Spark hands a streaming sink
    its own options, `checkpointLocation` among them), read back by the JVM source."""
    from krafka import NewTopic
    from krafka.sync import AdminClient, Producer

    bootstrap, source, copy = kafka.bootstrap_servers, unique("sink-in"), unique("sink-out")
    with AdminClient(bootstrap) as admin:
        admin.create_topics([NewTopic(source, 2), NewTopic(copy, 2)]).raise_for_errors()
    with Producer(bootstrap) as producer:
        for i in range(200):
            producer.send(source, b"v%d" % i, key=None if i % 3 == 0 else b"k%d" % i,
                          partition=i % 2, headers=[("h", b"%d" % i)])  # fmt: skip
    query = (
        spark.readStream.format("krafka")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", source)
        .option("startingOffsets", "earliest")
        .option("includeHeaders", "true")
        .load()
        .select("key", "value", "partition", "headers")
        .writeStream.format("krafka")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("topic", copy)
        .option("checkpointLocation", str(tmp_path / "checkpoint"))
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination(120)
    assert query.exception() is None
    columns = ["key", "value", "partition", "headers"]
    written = load(spark, "kafka", bootstrap, copy, "read_uncommitted").select(columns)
    original = load(spark, "kafka", bootstrap, source, "read_uncommitted").select(columns)
    assert written.count() == 200
    assert written.exceptAll(original).count() == original.exceptAll(written).count() == 0
