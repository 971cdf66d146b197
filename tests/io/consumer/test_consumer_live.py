"""The standalone Consumer on a live cluster (Apache Kafka and Tansu): what librdkafka and krafka
wrote, read back exactly, under asyncio and trio."""

from __future__ import annotations

import json
import time
from typing import Any

import anyio
import pytest

from krafka import Consumer, ConsumerRecord, OffsetAndMetadata, Producer, TopicPartition
from krafka.errors import (
    IllegalStateError,
    InvalidStateError,
    NoOffsetForPartitionError,
    RecordDeserializationError,
)
from krafka.testing.kafka import KafkaCluster

pytestmark = [pytest.mark.anyio, pytest.mark.broker, pytest.mark.timeout(90)]


def unique(prefix: str) -> str:
    return f"{prefix}-{time.time_ns()}"


def produce_with_librdkafka(
    bootstrap: str, topic: str, records: list[tuple[Any, Any, list[Any]]], **conf: Any
) -> None:
    from confluent_kafka import Producer as RdProducer

    producer = RdProducer({"bootstrap.servers": bootstrap, "linger.ms": 5, **conf})
    for key, value, headers in records:
        producer.produce(topic, value=value, key=key, partition=0, headers=headers or None)
    assert producer.flush(30) == 0


async def consume(consumer: Consumer, count: int, timeout: float = 20.0) -> list[ConsumerRecord]:
    got: list[ConsumerRecord] = []
    with anyio.fail_after(timeout):
        while len(got) < count:
            got += await consumer.poll(timeout=1.0)
    return got


@pytest.mark.parametrize("compression", ["none", "gzip", "snappy", "lz4", "zstd"])
async def test_reads_what_librdkafka_wrote_in_every_codec(broker: Any, compression: str) -> None:
    topic = unique(f"c-{compression}")
    sent = [
        (
            None if i % 5 == 0 else b"key-%d" % i,
            None if i % 7 == 0 else b"value-%d" % i * (i % 40 + 1),
            [("i", b"%d" % i), ("null", None)] if i % 3 else [],
        )
        for i in range(400)
    ]
    await anyio.to_thread.run_sync(
        lambda: produce_with_librdkafka(
            broker.bootstrap_servers, topic, sent, **{"compression.type": compression}
        )
    )
    async with Consumer(
        broker.bootstrap_servers, auto_offset_reset="earliest", fetch_max_wait=0.1
    ) as consumer:
        await consumer.assign([TopicPartition(topic, 0)])
        got = await consume(consumer, len(sent))
        assert [r.offset for r in got] == list(range(len(sent)))
        for record, (key, value, headers) in zip(got, sent, strict=True):
            assert (record.topic, record.partition) == (topic, 0)
            assert (record.key, record.value) == (key, value)
            assert [(k, v) for k, v in record.headers] == headers
            assert record.is_tombstone() is (value is None)
            assert record.timestamp > 1_600_000_000_000
        assert await consumer.poll(timeout=0.3) == []
        assert consumer.lag() == {TopicPartition(topic, 0): 0}
        assert consumer.metrics()["records_consumed"] == len(sent)


async def test_read_committed_drops_aborted_transactions(broker: Any) -> None:
    topic = unique("txn")
    tp = TopicPartition(topic, 0)
    async with Producer(broker.bootstrap_servers, transactional_id=unique("tx")) as producer:
        for batch, commit in (("a", True), ("b", False), ("c", True), ("d", False), ("e", True)):
            producer.begin_transaction()
            for i in range(20):
                await producer.send(topic, f"{batch}{i}".encode(), partition=0)
            if commit:
                await producer.commit_transaction()
            else:
                await producer.flush()
                await producer.abort_transaction()
    async with Producer(broker.bootstrap_servers) as plain:
        await plain.send_and_wait(topic, b"plain", partition=0)
    committed = [f"{b}{i}".encode() for b in "ace" for i in range(20)] + [b"plain"]
    everything = [f"{b}{i}".encode() for b in "abcde" for i in range(20)] + [b"plain"]
    for level, expected in (("read_committed", committed), ("read_uncommitted", everything)):
        async with Consumer(
            broker.bootstrap_servers,
            auto_offset_reset="earliest",
            isolation_level=level,
            fetch_max_wait=0.1,
        ) as consumer:
            await consumer.assign([tp])
            got = await consume(consumer, len(expected))
            assert [r.value for r in got] == expected, level
            assert await consumer.poll(timeout=0.3) == []


async def test_seek_pause_resume_position_and_iteration(broker: Any) -> None:
    topic = unique("seek")
    tps = [TopicPartition(topic, 0), TopicPartition(topic, 1)]
    async with Producer(broker.bootstrap_servers) as producer:
        for i in range(200):
            await producer.send(topic, b"%d" % i, partition=i % 2)
        await producer.flush()
    async with Consumer(
        broker.bootstrap_servers, auto_offset_reset="earliest", fetch_max_wait=0.1
    ) as consumer:
        await consumer.assign(tps)
        assert consumer.assignment() == set(tps)
        assert await consumer.position(tps[0]) == 0
        consumer.pause(tps[1])
        assert consumer.paused() == {tps[1]}
        got = await consume(consumer, 100)
        assert {r.partition for r in got} == {0}
        assert await consumer.poll(timeout=0.3) == []
        consumer.resume(tps[1])
        got = await consume(consumer, 100)
        assert {r.partition for r in got} == {1}
        await consumer.seek(tps[0], 90)
        assert await consumer.position(tps[0]) == 90
        first = await consumer.recv()
        assert (first.partition, first.offset) == (0, 90)
        rest = []
        async for record in consumer:
            rest.append(record.offset)
            if len(rest) == 9:
                break
        assert rest == list(range(91, 100))
        await consumer.seek_to_beginning(tps[1])
        batch = await consumer.batch_recv(max_records=5, timeout=5)
        assert [(r.partition, r.offset) for r in batch] == [(1, i) for i in range(5)]
        assert await consumer.position(tps[1]) == 5
        await consumer.seek_many({tps[0]: 10, tps[1]: OffsetAndMetadata(99)})
        offsets = {(r.partition, r.offset) for r in await consume(consumer, 91)}
        assert offsets == {(0, i) for i in range(10, 100)} | {(1, 99)}


async def test_assign_with_group_id_commits_and_resumes(broker: Any) -> None:
    topic, group = unique("commit"), unique("g")
    tp = TopicPartition(topic, 0)
    async with Producer(broker.bootstrap_servers) as producer:
        for i in range(50):
            await producer.send(topic, b"%d" % i, partition=0)
        await producer.flush()
    options = dict(
        group_id=group, auto_offset_reset="earliest", enable_auto_commit=False, fetch_max_wait=0.1
    )
    async with Consumer(broker.bootstrap_servers, **options) as consumer:
        await consumer.assign([tp])
        got = await consumer.batch_recv(max_records=20, timeout=10)
        assert len(got) == 20
        await consumer.commit()
        committed = await consumer.committed([tp])
        assert committed[tp] == OffsetAndMetadata(20, "", got[-1].leader_epoch)
        await consumer.commit({tp: OffsetAndMetadata(30, "meta", 0)})
        again = (await consumer.committed([tp]))[tp]
        if isinstance(broker, KafkaCluster):
            assert again == OffsetAndMetadata(30, "meta", 0)
        else:  # Tansu 0.6 keeps neither commit metadata nor the leader epoch
            assert again is not None and again.offset == 30
        with pytest.raises(IllegalStateError):
            await consumer.commit({TopicPartition(topic, 7): OffsetAndMetadata(1)})
        with pytest.raises((IllegalStateError, InvalidStateError)):
            await consumer.subscribe([topic])
    async with Consumer(broker.bootstrap_servers, **options) as again:
        await again.assign([tp])
        got = await consume(again, 20)
        assert [r.offset for r in got] == list(range(30, 50))


async def test_auto_commit_on_close(broker: Any) -> None:
    topic, group = unique("autocommit"), unique("g")
    tp = TopicPartition(topic, 0)
    async with Producer(broker.bootstrap_servers) as producer:
        for i in range(30):
            await producer.send(topic, b"%d" % i, partition=0)
        await producer.flush()
    async with Consumer(
        broker.bootstrap_servers, group_id=group, auto_offset_reset="earliest"
    ) as consumer:
        await consumer.assign([tp])
        got = await consume(consumer, 30)
        assert len(got) == 30
    async with Consumer(broker.bootstrap_servers, group_id=group) as again:
        await again.assign([tp])
        # with the leader epoch of the last record consumed, as Java commits (Apache Kafka
        # stamps batches with the leader's epoch, 0 here; Tansu leaves it unset: None)
        expected = OffsetAndMetadata(30, "", got[-1].leader_epoch)
        assert (await again.committed([tp]))[tp] == expected


class CommitWatcher:
    """An interceptor that keeps what each commit committed."""

    def __init__(self) -> None:
        self.commits: list[dict[TopicPartition, OffsetAndMetadata]] = []

    def on_commit(self, offsets: dict[TopicPartition, OffsetAndMetadata]) -> None:
        self.commits.append(dict(offsets))


async def test_automatic_commits_reach_the_interceptors(broker: Any) -> None:
    """Java's ConsumerInterceptor.onCommit sees automatic commits too, on the polling task."""
    topic, group = unique("oncommit"), unique("g")
    tp = TopicPartition(topic, 0)
    async with Producer(broker.bootstrap_servers) as producer:
        for i in range(3):
            await producer.send(topic, b"%d" % i, partition=0)
        await producer.flush()
    watcher = CommitWatcher()
    async with Consumer(
        broker.bootstrap_servers,
        group_id=group,
        auto_offset_reset="earliest",
        auto_commit_interval=0.2,
        fetch_max_wait=0.1,
        interceptors=[watcher],
    ) as consumer:
        await consumer.assign([tp])
        assert len(await consume(consumer, 3)) == 3
        with anyio.fail_after(20):
            while not any(c.get(tp, OffsetAndMetadata(-1)).offset == 3 for c in watcher.commits):
                await consumer.poll(0.1)


async def test_an_explicit_commit_survives_closing_without_a_poll(broker: Any) -> None:
    """Auto-commit on close commits what the application consumed: a consumer that assigned,
    committed an offset of its own and closed without polling leaves that offset alone (the
    position its reset policy found in the background was never polled; the sans-IO engine
    test pins that down deterministically)."""
    topic, group = unique("explicit"), unique("g")
    tp = TopicPartition(topic, 0)
    async with Producer(broker.bootstrap_servers) as producer:
        for i in range(10):
            await producer.send(topic, b"%d" % i, partition=0)
        await producer.flush()
    async with Consumer(broker.bootstrap_servers, group_id=group) as consumer:
        await consumer.assign([tp])
        await consumer.committed([tp])  # meanwhile the reset policy finds the latest offset
        await consumer.commit({tp: OffsetAndMetadata(5)})
    async with Consumer(broker.bootstrap_servers, group_id=group) as again:
        await again.assign([tp])
        committed = (await again.committed([tp]))[tp]
        assert committed is not None and committed.offset == 5


async def test_deserializers_and_a_failing_one(broker: Any) -> None:
    topic = unique("deser")
    tp = TopicPartition(topic, 0)
    async with Producer(broker.bootstrap_servers) as producer:
        for value in (b'{"a": 1}', b"not json", b'{"a": 3}'):
            await producer.send(topic, value, key=b"k", partition=0)
        await producer.flush()
    async with Consumer(
        broker.bootstrap_servers,
        auto_offset_reset="earliest",
        fetch_max_wait=0.1,
        key_deserializer=bytes.decode,
        value_deserializer=json.loads,
    ) as consumer:
        await consumer.assign([tp])
        first = await consume(consumer, 1)
        assert (first[0].key, first[0].value) == ("k", {"a": 1})
        with pytest.raises(RecordDeserializationError) as info:
            await consume(consumer, 1)
        assert (info.value.topic, info.value.partition, info.value.offset) == (topic, 0, 1)
        assert f"{topic}-0 offset 1" in str(info.value)
        await consumer.seek(tp, 2)
        assert [r.value for r in await consume(consumer, 1)] == [{"a": 3}]


async def test_no_reset_policy_raises_and_mixing_assign_subscribe(broker: Any) -> None:
    topic = unique("none")
    tp = TopicPartition(topic, 0)
    async with Producer(broker.bootstrap_servers) as producer:
        await producer.send_and_wait(topic, b"x", partition=0)
    async with Consumer(broker.bootstrap_servers, auto_offset_reset="none") as consumer:
        await consumer.assign([tp])
        with pytest.raises(NoOffsetForPartitionError) as info:
            await consume(consumer, 1, timeout=10)
        assert tp in info.value.partitions
        await consumer.seek(tp, 0)
        assert [r.value for r in await consume(consumer, 1)] == [b"x"]
        with pytest.raises(IllegalStateError):
            await consumer.subscribe([topic])


async def test_poll_batches_gives_raw_data(broker: Any) -> None:
    from krafka.codec import decode_batches

    topic = unique("raw")
    tp = TopicPartition(topic, 0)
    async with Producer(broker.bootstrap_servers) as producer:
        for i in range(100):
            await producer.send(topic, b"%d" % i, partition=0)
        await producer.flush()
    async with Consumer(
        broker.bootstrap_servers, auto_offset_reset="earliest", fetch_max_wait=0.1
    ) as consumer:
        await consumer.assign([tp])
        await consumer.seek(tp, 10)
        values = []
        with anyio.fail_after(20):
            while len(values) < 90:
                for batch in await consumer.poll_batches(timeout=1):
                    assert batch.partition == tp and batch.high_watermark == 100
                    values += [
                        r.value
                        for b in decode_batches(batch.data)
                        for r in b.records
                        if r.offset >= batch.start
                    ]
        assert values == [b"%d" % i for i in range(10, 100)]
        assert await consumer.position(tp) == 100


async def test_close_within_timeout_when_the_broker_is_gone() -> None:
    from krafka.testing import LocalBroker

    with LocalBroker() as lonely:
        consumer = Consumer(lonely.bootstrap_servers, group_id="g", auto_offset_reset="earliest")
        await consumer.start()
        await consumer.assign([TopicPartition("gone", 0)])
        lonely.kill()
        started = anyio.current_time()
        await consumer.close(timeout=3)
        assert anyio.current_time() - started < 5


async def test_close_from_another_task_ends_a_waiting_iteration(broker: Any) -> None:
    topic = unique("close-wait")
    async with Producer(broker.bootstrap_servers) as producer:
        await producer.send_and_wait(topic, b"only", partition=0)
    consumer = Consumer(broker.bootstrap_servers, auto_offset_reset="earliest", fetch_max_wait=0.1)
    await consumer.start()
    await consumer.assign([TopicPartition(topic, 0)])
    seen: list[bytes] = []

    async def iterate() -> None:
        async for record in consumer:
            seen.append(record.value)

    with anyio.fail_after(20):
        async with anyio.create_task_group() as tg:
            tg.start_soon(iterate)
            while not seen:
                await anyio.sleep(0.05)
            await consumer.close(timeout=5)
    assert seen == [b"only"]
