"""Records between krafka and Apache Kafka's Java client (kafka-clients 4.4) on Apache Kafka: what
`KafkaProducer` wrote in every codec and in transactions, read by krafka, and what krafka's
Producer wrote, read by `KafkaConsumer`: keys, values, headers, timestamps (CreateTime and
LogAppendTime) and offsets equal, each batch in the codec asked for (read back from the log)."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from _java import new_topics, read_to_end

from krafka import Producer, RecordMetadata
from krafka.codec import decode_batches
from krafka.sansio.partitioner import DefaultPartitioner
from krafka.testing.javapeer import (
    JavaPeer,
    OutgoingRecord,
    Role,
    TransactionStep,
    java_consume,
    java_produce,
)
from krafka.testing.kafka import KafkaCluster

pytestmark = [pytest.mark.anyio, pytest.mark.one_backend, pytest.mark.timeout(120)]

CODECS = ("none", "gzip", "snappy", "lz4", "zstd")
PER_CODEC = 24
BASE_TS = 1_700_000_000_000


def outgoing(codec: str, i: int, topic: str | None = None) -> OutgoingRecord:
    """Every shape a record takes: null and empty keys and values, repeated and null headers,
    explicit and producer-set timestamps, explicit and key-hashed partitions."""
    key = None if i % 4 == 0 else (b"" if i % 7 == 0 else b"key-%d" % i)
    value = None if i % 11 == 5 else (b"" if i % 5 == 0 else b"%s-value-%d" % (codec.encode(), i))
    headers: list[tuple[str, bytes | None]] = [("codec", codec.encode())]
    if i % 3:
        headers += [("dup", b"1"), ("dup", b"2"), ("nothing", None), ("empty", b"")]
    partition = i % 2 if key is None or i % 2 else None
    timestamp = BASE_TS + i if i % 2 else None
    return OutgoingRecord(value, key, headers, partition, timestamp, codec=codec, topic=topic)


async def two_topics(bootstrap: str, name: str) -> tuple[str, str]:
    """A CreateTime topic and a LogAppendTime one, two partitions each."""
    (created,) = await new_topics(bootstrap, 2, f"{name}-create")
    (appended,) = await new_topics(
        bootstrap, 2, f"{name}-append", configs={"message.timestamp.type": "LogAppendTime"}
    )
    return created, appended


def batch_codecs(cluster: KafkaCluster, topic: str, partitions: int) -> dict[bytes, set[str]]:
    """The codec of every data batch on disk, by the `codec` header of its records."""
    seen: dict[bytes, set[str]] = {}
    for p in range(partitions):
        for segment in cluster.partition_directory(1, topic, p).glob("*.log"):
            for batch in decode_batches(segment.read_bytes()):
                for record in [] if batch.is_control else batch.records:
                    codec = dict(record.headers)["codec"]
                    assert codec is not None
                    seen.setdefault(codec, set()).add(str(batch.compression.name).lower())
    return seen


def every_codec() -> dict[bytes, set[str]]:
    return {codec.encode(): {codec} for codec in CODECS}


async def test_krafka_reads_what_kafka_producer_wrote_in_every_codec(
    cluster: KafkaCluster,
) -> None:
    bootstrap = cluster.bootstrap_servers
    topics = await two_topics(bootstrap, "java-codecs")
    sent = [outgoing(c, i, t) for t in topics for c in CODECS for i in range(PER_CODEC)]
    deliveries = await anyio.to_thread.run_sync(
        lambda: java_produce(bootstrap, None, sent, config={"linger.ms": 20})
    )
    assert len(deliveries) == len(sent)
    got = {
        (r.topic, r.partition, r.offset): r
        for topic in topics
        for r in await read_to_end(bootstrap, topic, 2)
    }
    assert len(got) == len(sent)
    partitioner = DefaultPartitioner()
    for record, delivery in zip(sent, deliveries, strict=True):
        mine = got[(delivery.topic, delivery.partition, delivery.offset)]
        assert delivery.topic == record.topic
        assert (mine.key, mine.value, mine.headers) == (
            record.key,
            record.value,
            tuple(record.headers),
        )
        assert mine.timestamp == delivery.timestamp
        if record.topic == topics[0]:
            assert mine.timestamp_type == 0  # CreateTime
            assert record.timestamp in (None, mine.timestamp)
        else:
            assert mine.timestamp_type == 1  # LogAppendTime: the broker's, as Java was told
        if record.partition is None:  # Java hashed the key: krafka's partitioner agrees
            assert record.key is not None
            assert partitioner.partition(delivery.topic, record.key, 2) == delivery.partition
    for topic in topics:
        assert batch_codecs(cluster, topic, 2) == every_codec()


async def test_krafka_reads_kafka_producer_transactions(cluster: KafkaCluster) -> None:
    """Committed and aborted transactions, then one left open while krafka writes plain records
    after it: read_committed stops at the open transaction (the last stable offset) until Java
    commits it."""
    bootstrap = cluster.bootstrap_servers
    (topic,) = await new_topics(bootstrap, 3, "java-txn")
    sent: list[OutgoingRecord] = []
    committed: list[bytes] = []
    peer = JavaPeer(
        Role.PRODUCE, bootstrap, topic=topic, codec="lz4", transactional_id=f"jtx-{topic}"
    )
    async with peer:
        for txn, outcome in enumerate(["commit", "abort", "commit", "abort", "commit", "open"]):
            peer.send({"op": TransactionStep.BEGIN.value})
            values = [b"txn%d-%s-%d" % (txn, outcome.encode(), i) for i in range(12)]
            for i, value in enumerate(values):
                record = OutgoingRecord(value, key=b"k%d" % i, headers=[("t", b"%d" % txn)])
                peer.send(record.to_json())
                sent.append(record)
            step = {"commit": TransactionStep.COMMIT, "abort": TransactionStep.ABORT}.get(
                outcome, TransactionStep.FLUSH
            )
            peer.send({"op": step.value})
            committed += values if outcome == "commit" else []
        await peer.aexpect("flushed")  # the open transaction's records are in the log
        async with Producer(bootstrap) as producer:
            for p in range(3):
                await producer.send_and_wait(topic, b"plain-%d" % p, partition=p)
        visible = await read_to_end(bootstrap, topic, 3, "read_committed")
        assert sorted(r.value for r in visible) == sorted(committed)
        peer.send({"op": TransactionStep.COMMIT.value})
        await peer.aexpect("committed")
    deliveries = sorted(
        (e.delivery() for e in peer.events if e.kind == "sent"), key=lambda d: d.index
    )
    assert len(deliveries) == len(sent) == 72
    visible = await read_to_end(bootstrap, topic, 3, "read_committed")
    plain = [b"plain-%d" % p for p in range(3)]
    assert sorted(r.value for r in visible) == sorted(
        committed + [r.value for r in sent[60:]] + plain
    )
    everything = await read_to_end(bootstrap, topic, 3, "read_uncommitted")
    by_offset = {(r.partition, r.offset): r for r in everything}
    assert len(everything) == 75
    for delivery, record in zip(deliveries, sent, strict=True):
        mine = by_offset[(delivery.partition, delivery.offset)]
        assert (mine.key, mine.value, mine.headers) == (
            record.key,
            record.value,
            tuple(record.headers),
        )
        assert mine.timestamp == delivery.timestamp


async def produce_with_krafka(
    bootstrap: str, codec: str, records: list[OutgoingRecord], **options: Any
) -> list[RecordMetadata]:
    async with Producer(bootstrap, compression=codec, linger=0.01, **options) as producer:
        handles = []
        for r in records:
            assert r.topic is not None
            handles.append(
                await producer.send(
                    r.topic,
                    r.value,
                    r.key,
                    headers=list(r.headers),
                    partition=r.partition,
                    timestamp=r.timestamp,
                )
            )
        return [await handle for handle in handles]


async def test_kafka_consumer_reads_what_krafka_wrote_in_every_codec(
    cluster: KafkaCluster,
) -> None:
    bootstrap = cluster.bootstrap_servers
    topics = await two_topics(bootstrap, "krafka-codecs")
    written: dict[tuple[str, int, int], tuple[OutgoingRecord, RecordMetadata]] = {}
    for n, codec in enumerate(CODECS):
        records = [outgoing(codec, i, t) for t in topics for i in range(PER_CODEC)]
        idempotent = n % 2 == 0  # idempotent and plain producers alike
        metas = await produce_with_krafka(bootstrap, codec, records, enable_idempotence=idempotent)
        written.update(
            ((m.topic, m.partition, m.offset), (r, m)) for r, m in zip(records, metas, strict=True)
        )
    got = await anyio.to_thread.run_sync(lambda: java_consume(bootstrap, list(topics)))
    assert len(got) == len(written)
    for record in got:
        mine, meta = written[(record.topic, record.partition, record.offset)]
        assert (record.key, record.value, list(record.headers)) == (
            mine.key,
            mine.value,
            list(mine.headers),
        )
        assert record.timestamp == meta.timestamp  # krafka reported what Java reads
        if record.topic == topics[0]:
            assert record.timestamp_type == "CreateTime"
            assert mine.timestamp in (None, record.timestamp)
        else:
            assert record.timestamp_type == "LogAppendTime"
    for topic in topics:
        assert batch_codecs(cluster, topic, 2) == every_codec()
    # krafka's consumer sees the very same records as Java's, field by field
    java_view = {(r.topic, r.partition, r.offset): r for r in got}
    for topic in topics:
        for r in await read_to_end(bootstrap, topic, 2):
            peer = java_view[(r.topic, r.partition, r.offset)]
            assert (r.key, r.value, r.headers, r.timestamp, r.leader_epoch) == (
                peer.key,
                peer.value,
                tuple(peer.headers),
                peer.timestamp,
                peer.leader_epoch,
            )
            assert ("CreateTime", "LogAppendTime")[r.timestamp_type] == peer.timestamp_type


async def test_kafka_consumer_reads_krafka_transactions_committed_only(
    cluster: KafkaCluster,
) -> None:
    (topic,) = await new_topics(cluster.bootstrap_servers, 3, "krafka-txn")
    committed: list[bytes] = []
    async with Producer(
        cluster.bootstrap_servers, transactional_id=f"ktx-{topic}", compression="zstd", linger=0.005
    ) as producer:
        for txn, outcome in enumerate(["commit", "abort", "commit", "abort", "commit"]):
            await producer.begin_transaction()
            values = [b"txn%d-%s-%d" % (txn, outcome.encode(), i) for i in range(12)]
            for i, value in enumerate(values):
                await producer.send(topic, value, b"k%d" % i, headers=[("t", b"%d" % txn)])
            if outcome == "commit":
                await producer.commit_transaction()
                committed += values
            else:
                await producer.flush()  # the aborted records reach the log
                await producer.abort_transaction()
    got = await anyio.to_thread.run_sync(
        lambda: java_consume(cluster.bootstrap_servers, [topic], isolation="read_committed")
    )
    assert sorted(r.value for r in got if r.value is not None) == sorted(committed)
    assert len(got) == len(committed)
    assert all(r.headers == (("t", r.value[3:4]),) for r in got if r.value is not None)
