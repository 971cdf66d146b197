"""`format("krafka")` against Apache Kafka and Tansu in Spark local[2]: batch reads equal what
librdkafka reads, ending offsets, read_committed over krafka transactions (on Kafka alone,
interleaved with another producer's and an open one), a streaming query stopped and restarted
from its checkpoint while a producer writes, the sink, and option errors."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.broker, pytest.mark.timeout(300)]

CODECS = ("none", "gzip", "snappy", "lz4", "zstd")


def unique(prefix: str) -> str:
    return f"{prefix}-{time.time_ns()}"


def create(bootstrap: str, topic: str, partitions: int) -> None:
    from krafka import NewTopic
    from krafka.sync import AdminClient

    with AdminClient(bootstrap) as admin:
        admin.create_topics([NewTopic(topic, partitions)]).raise_for_errors()


def librdkafka_produce(bootstrap: str, topic: str, per_codec: int) -> None:
    """`per_codec` records in every codec over 4 partitions, with headers, from librdkafka."""
    import confluent_kafka

    for codec in CODECS:
        producer = confluent_kafka.Producer(
            {"bootstrap.servers": bootstrap, "compression.type": codec, "linger.ms": 5}
        )
        for i in range(per_codec):
            producer.produce(
                topic,
                value=f"{codec}-{i}".encode(),
                key=None if i % 7 == 0 else f"k{i}".encode(),
                partition=i % 4,
                headers=[("codec", codec.encode()), ("i", str(i).encode())],
            )
        assert producer.flush(30) == 0


def librdkafka_consume(bootstrap: str, topic: str, count: int) -> list[tuple[Any, ...]]:
    import confluent_kafka

    consumer = confluent_kafka.Consumer(
        {"bootstrap.servers": bootstrap, "group.id": unique("ref"), "enable.auto.commit": False}
    )
    consumer.assign([confluent_kafka.TopicPartition(topic, p, 0) for p in range(4)])
    rows = []
    deadline = time.monotonic() + 60
    while len(rows) < count and time.monotonic() < deadline:
        for m in consumer.consume(1000, 1.0):
            assert m.error() is None, m.error()
            headers = [(k, v) for k, v in (m.headers() or [])]
            rows.append((m.key(), m.value(), m.topic(), m.partition(), m.offset(),
                         m.timestamp()[1], headers))  # fmt: skip
    consumer.close()
    return rows


def reader(spark: Any, bootstrap: str) -> Any:
    return spark.read.format("krafka").option("kafka.bootstrap.servers", bootstrap)


def test_batch_read_equals_librdkafka_every_codec_with_headers(spark: Any, broker: Any) -> None:
    bootstrap, topic = broker.bootstrap_servers, unique("sk-codecs")
    create(bootstrap, topic, 4)
    librdkafka_produce(bootstrap, topic, 200)
    expected = librdkafka_consume(bootstrap, topic, 1000)
    df = (
        reader(spark, bootstrap)
        .option("subscribe", topic)
        .option("startingOffsets", "earliest")
        .option("includeHeaders", "true")
        .load()
    )
    assert [f.name for f in df.schema.fields] == [
        "key", "value", "topic", "partition", "offset", "timestamp", "timestampType", "headers",
    ]  # fmt: skip
    got = [
        (r.key, r.value, r.topic, r.partition, r.offset, int(r.timestamp.timestamp() * 1000),
         [(h.key, h.value) for h in r.headers])
        for r in df.collect()
    ]  # fmt: skip
    assert len(got) == 1000
    assert sorted(got, key=lambda r: (r[3], r[4])) == sorted(expected, key=lambda r: (r[3], r[4]))
    assert {r.timestampType for r in df.select("timestampType").distinct().collect()} == {0}


def test_ending_offsets_bound_and_min_partitions_split(spark: Any, broker: Any) -> None:
    bootstrap, topic = broker.bootstrap_servers, unique("sk-ends")
    create(bootstrap, topic, 4)
    librdkafka_produce(bootstrap, topic, 40)  # 200 records, 50 per partition
    ending = json.dumps({topic: {"0": 10, "1": -1, "2": 0, "3": 25}})
    starting = json.dumps({topic: {"0": 2, "1": -2, "2": -2, "3": 20}})
    df = (
        reader(spark, bootstrap)
        .option("subscribe", topic)
        .option("startingOffsets", starting)
        .option("endingOffsets", ending)
        .option("minPartitions", "6")
        .load()
    )
    offsets = sorted((r.partition, r.offset) for r in df.select("partition", "offset").collect())
    expected = [(0, o) for o in range(2, 10)] + [(1, o) for o in range(50)]
    expected += [(3, o) for o in range(20, 25)]
    assert offsets == expected
    assert df.rdd.getNumPartitions() >= 6


def test_read_committed_drops_aborted_transactions(spark: Any, broker: Any) -> None:
    from krafka.sync import Producer

    bootstrap, topic = broker.bootstrap_servers, unique("sk-txn")
    create(bootstrap, topic, 2)
    with Producer(bootstrap, transactional_id=unique("tx")) as producer:
        for round_, commit in enumerate((True, False, True, False, True)):
            producer.begin_transaction()
            for i in range(10):
                producer.send(topic, f"{round_}-{i}".encode(), partition=i % 2)
            producer.flush()  # the aborted records reach the broker before the abort
            if commit:
                producer.commit_transaction()
            else:
                producer.abort_transaction()
    with Producer(bootstrap) as plain:  # a non-transactional record after them
        plain.send(topic, b"plain", partition=0).result(30)
    committed = (
        reader(spark, bootstrap)
        .option("subscribe", topic)
        .option("kafka.isolation.level", "read_committed")
        .load()
    )
    values = sorted(r.value.decode() for r in committed.collect())
    assert values == sorted([f"{r}-{i}" for r in (0, 2, 4) for i in range(10)] + ["plain"])
    everything = reader(spark, bootstrap).option("subscribe", topic).load().collect()
    assert len(everything) == 51


def test_on_kafka_read_committed_interleaved_and_open_transactions(spark: Any, kafka: Any) -> None:
    """Two producers' transactions interleaved in one partition, the first aborted after the
    second's records, then a third left open: Kafka lists the aborted one in its fetch
    answers and holds the last stable offset before the open one, so a read_committed read
    ends there until it commits (Tansu's answers show neither)."""
    from krafka.sync import Producer

    bootstrap, topic = kafka.bootstrap_servers, unique("sk-ktxn")
    create(bootstrap, topic, 1)

    def values(isolation: str) -> list[str]:
        df = reader(spark, bootstrap).option("subscribe", topic)
        rows = df.option("kafka.isolation.level", isolation).load().collect()
        return [r.value.decode() for r in sorted(rows, key=lambda r: r.offset)]

    def send(producer: Any, *names: str) -> None:
        for name in names:
            producer.send(topic, name.encode(), partition=0)
        producer.flush()

    with (
        Producer(bootstrap, transactional_id=unique("sk-a")) as a,
        Producer(bootstrap, transactional_id=unique("sk-b")) as b,
        Producer(bootstrap, transactional_id=unique("sk-c")) as c,
        Producer(bootstrap) as plain,
    ):
        a.begin_transaction()
        send(a, "a0", "a1", "a2")
        b.begin_transaction()
        send(b, "b0", "b1")
        send(plain, "p0")
        a.abort_transaction()  # its marker comes after b's and the plain records
        send(b, "b2")
        b.commit_transaction()
        c.begin_transaction()
        send(c, "c0", "c1")
        send(plain, "p1")  # after the open transaction: past the last stable offset
        assert values("read_committed") == ["b0", "b1", "p0", "b2"]
        assert values("read_uncommitted") == [
            "a0", "a1", "a2", "b0", "b1", "p0", "b2", "c0", "c1", "p1",
        ]  # fmt: skip
        c.commit_transaction()
    assert values("read_committed") == ["b0", "b1", "p0", "b2", "c0", "c1", "p1"]


def test_streaming_with_checkpoint_restart_reads_every_record_once(
    spark: Any, broker: Any, tmp_path: Path
) -> None:
    from krafka.sync import Producer

    bootstrap, topic = broker.bootstrap_servers, unique("sk-stream")
    create(bootstrap, topic, 3)
    total = 3000
    written = threading.Event()

    def produce() -> None:
        with Producer(bootstrap, linger=0.01) as producer:
            for i in range(total):  # about 9 s: the first query stops in the middle
                producer.send(topic, b"%d" % i, partition=i % 3)
                if i % 50 == 0:
                    time.sleep(0.15)
            producer.flush()
        written.set()

    thread = threading.Thread(target=produce, daemon=True)
    thread.start()
    sink, checkpoint = tmp_path / "sink", tmp_path / "checkpoint"

    def start_query() -> Any:
        stream = (
            spark.readStream.format("krafka")
            .option("kafka.bootstrap.servers", bootstrap)
            .option("subscribe", topic)
            .option("startingOffsets", "earliest")
            .option("maxOffsetsPerTrigger", "400")
            .load()
        )
        return (
            stream.selectExpr("CAST(value AS STRING) AS value", "partition", "offset")
            .writeStream.format("parquet")
            .option("path", str(sink))
            .option("checkpointLocation", str(checkpoint))
            .trigger(processingTime="200 milliseconds")
            .start()
        )

    query = start_query()
    try:  # stopped once a micro-batch committed, while the producer is still writing
        deadline = time.monotonic() + 120
        while not any(p["numInputRows"] for p in query.recentProgress):
            assert query.exception() is None, str(query.exception())
            assert time.monotonic() < deadline, "no micro-batch within 120 s"
            time.sleep(0.2)
    finally:
        query.stop()
    assert spark.read.parquet(str(sink)).count() > 0
    thread.join(60)
    assert written.is_set()
    # Restarted from the checkpoint, it reads the rest at 400 records a micro-batch: a fixed
    # time for that is too short on a loaded machine (records were only not read yet, never
    # lost), so it runs until it has processed everything there is.
    query = start_query()
    try:
        query.processAllAvailable()
    finally:
        query.stop()
    rows = spark.read.parquet(str(sink)).select("value").collect()
    values = [r.value for r in rows]
    assert len(values) == len(set(values)) == total, (len(values), len(set(values)))


def test_write_then_read_back(spark: Any, broker: Any) -> None:
    bootstrap, topic = broker.bootstrap_servers, unique("sk-write")
    create(bootstrap, topic, 2)
    rows = [(f"k{i}", f"v{i}".encode(), i % 2, [("h", b"%d" % i)]) for i in range(500)]
    df = spark.createDataFrame(
        rows,
        "key string, value binary, partition int, headers array<struct<key:string,value:binary>>",
    )
    df.write.format("krafka").mode("append").option("kafka.bootstrap.servers", bootstrap).option(
        "topic", topic
    ).save()
    back = (
        reader(spark, bootstrap).option("subscribe", topic).option("includeHeaders", "true").load()
    )
    got = sorted(
        (r.key.decode(), r.value, r.partition, [(h.key, h.value) for h in r.headers])
        for r in back.collect()
    )
    assert got == sorted((k, v, p, h) for k, v, p, h in rows)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"subscribe": "t", "bogus": "1"}, "unknown option 'bogus'"),
        ({"subscribe": "t", "startingOffsets": "{not json"}, "option startingOffsets: malformed"),
        ({"subscribe": "t", "kafka.no.such.property": "1"}, "no.such.property"),
        ({"subscribe": "t", "assign": '{"t": [0]}'}, "exactly one of the options"),
        ({"subscribe": "t", "endingOffsets": "earliest"}, "option endingOffsets"),
    ],
)
def test_bad_options_name_the_option(
    spark: Any, broker: Any, options: dict[str, str], message: str
) -> None:
    df = reader(spark, broker.bootstrap_servers)
    for key, value in options.items():
        df = df.option(key, value)
    with pytest.raises(Exception, match=message):
        df.load().collect()


def test_missing_bootstrap_is_named(spark: Any) -> None:
    with pytest.raises(Exception, match=r"kafka\.bootstrap\.servers is required"):
        spark.read.format("krafka").option("subscribe", "t").load().collect()


def test_streaming_pattern_picks_up_new_topics(spark: Any, broker: Any, tmp_path: Path) -> None:
    from krafka.sync import Producer

    bootstrap, prefix = broker.bootstrap_servers, unique("skpat")
    create(bootstrap, f"{prefix}-a", 2)
    with Producer(bootstrap) as producer:
        for i in range(20):
            producer.send(f"{prefix}-a", b"a%d" % i, partition=i % 2)
    stream = (
        spark.readStream.format("krafka")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribePattern", f"{prefix}-.*")
        .option("startingOffsets", "earliest")
        .load()
    )
    query = (
        stream.selectExpr("topic", "CAST(value AS STRING) AS value")
        .writeStream.format("memory")
        .queryName("pattern_sink")
        .start()
    )
    try:
        query.processAllAvailable()
        create(bootstrap, f"{prefix}-b", 1)  # a new topic matching the pattern, from offset 0
        with Producer(bootstrap) as producer:
            for i in range(5):
                producer.send(f"{prefix}-b", b"b%d" % i, partition=0)
        deadline = time.monotonic() + 60
        while spark.sql("SELECT count(*) AS n FROM pattern_sink").first().n < 25:
            assert time.monotonic() < deadline, "the new topic was not picked up"
            time.sleep(0.5)
    finally:
        query.stop()
    values = sorted(r.value for r in spark.sql("SELECT value FROM pattern_sink").collect())
    assert values == sorted([f"a{i}" for i in range(20)] + [f"b{i}" for i in range(5)])


@pytest.mark.parametrize("fail_on_data_loss", [True, False])
def test_deleted_records_fail_or_are_skipped(
    spark: Any, make_mock_cluster: Any, fail_on_data_loss: bool
) -> None:
    """On librdkafka's mock cluster (Tansu never answers OFFSET_OUT_OF_RANGE)."""
    from krafka.sync import Producer

    cluster = make_mock_cluster(1, topics={"gone": 1})
    with Producer(cluster.bootstrap_servers, linger=0.001) as producer:
        for i in range(100):
            producer.send("gone", b"%d" % i, partition=0)
    cluster.delete_records("gone", 0, 50)
    df = (
        reader(spark, cluster.bootstrap_servers)
        .option("assign", json.dumps({"gone": [0]}))
        .option("startingOffsets", json.dumps({"gone": {"0": 0}}))
        .option("failOnDataLoss", str(fail_on_data_loss).lower())
        .load()
    )
    if fail_on_data_loss:
        with pytest.raises(Exception, match="data was lost"):
            df.collect()
    else:
        assert sorted(r.offset for r in df.collect()) == list(range(50, 100))
