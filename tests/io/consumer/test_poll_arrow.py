"""`Consumer.poll_arrow`: fetched batches straight to Arrow, on Apache Kafka and Tansu. The rows
equal what `poll()` returns for the same topic (every codec, headers, null keys), positions and
commits follow what was handed out (`max_records` cuts a fetch short and the rest comes next),
read_committed drops aborted transactions as `poll()` does, and Polars and DuckDB read the
batches as they are."""

from __future__ import annotations

import time
from typing import Any

import anyio
import pytest

from krafka import Consumer, Producer, TopicPartition
from krafka.arrow import kafka_schema
from krafka.sync import Consumer as SyncConsumer

pytest.importorskip("pyarrow")
pytestmark = [pytest.mark.broker, pytest.mark.timeout(60)]

CODECS = (None, "gzip", "snappy", "lz4", "zstd")
PER_CODEC = 40


def unique(prefix: str) -> str:
    return f"{prefix}-{time.time_ns()}"


async def produce_mixed(bootstrap: str, topic: str) -> int:
    """`PER_CODEC` records in each codec over 2 partitions: some null keys, some headers."""
    for codec in CODECS:
        async with Producer(bootstrap, compression=codec, linger=0.005) as producer:
            for i in range(PER_CODEC):
                headers = [("codec", (codec or "none").encode()), ("i", None)] if i % 3 else None
                key = None if i % 5 == 0 else b"k%d" % i
                await producer.send(topic, b"%s-%d" % ((codec or "none").encode(), i), key=key,
                                    partition=i % 2, headers=headers)  # fmt: skip
            await producer.flush()
    return len(CODECS) * PER_CODEC


def arrow_rows(batches: list[Any]) -> list[tuple[Any, ...]]:
    rows = []
    for batch in batches:
        assert batch.schema == kafka_schema()
        for r in batch.to_pylist():
            headers = [(h["key"], h["value"]) for h in r["headers"] or ()]
            millis = int(r["timestamp"].timestamp() * 1000)
            rows.append((r["topic"], r["partition"], r["offset"], r["key"], r["value"], millis,
                         r["timestampType"], headers))  # fmt: skip
    return rows


def record_rows(records: list[Any]) -> list[tuple[Any, ...]]:
    return [
        (r.topic, r.partition, r.offset, r.key, r.value, r.timestamp, r.timestamp_type,
         [(k, v) for k, v in r.headers])
        for r in records
    ]  # fmt: skip


def reader(bootstrap: str, **options: Any) -> Consumer:
    settings: dict[str, Any] = {"auto_offset_reset": "earliest", "fetch_max_wait": 0.1}
    return Consumer(bootstrap, **{**settings, **options})


@pytest.mark.anyio
async def test_rows_equal_poll_and_commits_follow(broker: Any) -> None:
    bootstrap, topic = broker.bootstrap_servers, unique("arrow")
    total = await produce_mixed(bootstrap, topic)
    tps = [TopicPartition(topic, p) for p in range(2)]
    async with reader(bootstrap) as plain:
        await plain.assign(tps)
        expected: list[Any] = []
        with anyio.fail_after(30):
            while len(expected) < total:
                expected += await plain.poll(timeout=1)
    group = unique("arrow-group")
    async with reader(bootstrap, group_id=group, enable_auto_commit=False) as consumer:
        await consumer.assign(tps)
        batches: list[Any] = []
        with anyio.fail_after(30):
            while sum(b.num_rows for b in batches) < total:
                batches += await consumer.poll_arrow(timeout=1)
        got = arrow_rows(batches)
        assert sorted(got, key=lambda r: (r[1], r[2])) == sorted(
            record_rows(expected), key=lambda r: (r[1], r[2])
        )
        ends = {tp: max(r.offset for r in expected if r.partition == tp.partition) + 1
                for tp in tps}  # fmt: skip
        assert {tp: await consumer.position(tp) for tp in tps} == ends
        await consumer.commit()
        committed = await consumer.committed(set(tps))
        assert {tp: committed[tp].offset for tp in tps} == ends
        assert await consumer.poll_arrow(timeout=0.2) == []


@pytest.mark.anyio
async def test_max_records_hands_out_the_rest_next(broker: Any) -> None:
    bootstrap, topic = broker.bootstrap_servers, unique("arrow-max")
    tp = TopicPartition(topic, 0)
    async with Producer(bootstrap, linger=0.01) as producer:
        for i in range(500):
            await producer.send(topic, b"%d" % i, partition=0)
        await producer.flush()
    async with reader(bootstrap) as consumer:
        await consumer.assign([tp])
        offsets: list[int] = []
        with anyio.fail_after(30):
            while len(offsets) < 500:
                batches = await consumer.poll_arrow(timeout=1, max_records=70)
                rows = [o for b in batches for o in b.column("offset").to_pylist()]
                assert len(rows) <= 70
                offsets += rows
                if rows:
                    assert await consumer.position(tp) == rows[-1] + 1
        assert offsets == list(range(500))


@pytest.mark.anyio
async def test_read_committed_on_kafka_drops_aborted(kafka: Any) -> None:
    bootstrap, topic = kafka.bootstrap_servers, unique("arrow-txn")
    tp = TopicPartition(topic, 0)
    async with (
        Producer(bootstrap, transactional_id=unique("a")) as a,
        Producer(bootstrap, transactional_id=unique("b")) as b,
    ):
        a.begin_transaction()
        b.begin_transaction()
        for i in range(3):
            await a.send(topic, b"a%d" % i, partition=0)
            await b.send(topic, b"b%d" % i, partition=0)
        await a.flush()
        await b.flush()
        await a.abort_transaction()  # its marker after b's records
        await b.commit_transaction()
        a.begin_transaction()
        await a.send(topic, b"a-late", partition=0)
        await a.commit_transaction()
    async with (
        reader(bootstrap, isolation_level="read_committed") as arrow,
        reader(bootstrap, isolation_level="read_committed") as plain,
    ):
        await arrow.assign([tp])
        await plain.assign([tp])
        expected: list[bytes] = []
        got: list[bytes] = []
        with anyio.fail_after(30):
            while len(expected) < 4:
                expected += [r.value for r in await plain.poll(timeout=1)]
            while len(got) < 4:
                got += [v for b in await arrow.poll_arrow(1) for v in b.column("value").to_pylist()]
        assert got == expected == [b"b0", b"b1", b"b2", b"a-late"]
        assert await arrow.position(tp) == await plain.position(tp)


def test_sync_twin_polars_and_duckdb(broker: Any) -> None:
    polars = pytest.importorskip("polars")
    duckdb = pytest.importorskip("duckdb")
    import pyarrow as pa

    from krafka.sync import Producer as SyncProducer

    bootstrap, topic = broker.bootstrap_servers, unique("arrow-sync")
    with SyncProducer(bootstrap, linger=0.01) as producer:
        for i in range(300):
            producer.send(topic, b"%d" % i, key=None if i % 4 == 0 else b"k%d" % (i % 3),
                          partition=i % 2, headers=[("h", b"%d" % i)])  # fmt: skip
        producer.flush()
    with SyncConsumer(bootstrap, auto_offset_reset="earliest", fetch_max_wait=0.1) as consumer:
        consumer.assign([TopicPartition(topic, 0), TopicPartition(topic, 1)])
        batches: list[Any] = []
        deadline = time.monotonic() + 30
        while sum(b.num_rows for b in batches) < 300:
            assert time.monotonic() < deadline
            batches += consumer.poll_arrow(1.0)
    table = pa.Table.from_batches(batches)
    frame = polars.from_arrow(table)
    assert frame.height == 300
    assert frame.filter(polars.col("key").is_null()).height == 75
    by_key = frame.group_by("key").len().sort("key", nulls_last=True)
    assert by_key["len"].to_list() == [75, 75, 75, 75]
    first = frame.sort("partition", "offset").row(0, named=True)
    assert first["headers"] == [{"key": "h", "value": b"0"}]
    assert frame.filter(polars.col("headers").is_null()).height == 0
    connection = duckdb.connect()
    connection.register("records", table)
    counts = connection.sql("SELECT count(*), count(key), sum(len(headers)) FROM records")
    assert counts.fetchall() == [(300, 225, 300)]
    batch = batches[0]
    assert duckdb.arrow(batch).aggregate("count(*)").fetchall() == [(batch.num_rows,)]


COMPRESSED = 1000
SMALL = 25


async def produce_compressed(bootstrap: str, topic: str) -> None:
    """`COMPRESSED` zstd records in few large batches of partition 0."""
    async with Producer(bootstrap, compression="zstd", linger=0.05) as producer:
        for i in range(COMPRESSED):
            await producer.send(topic, b"%04d" % i * 50, partition=0)
        await producer.flush()


def fetches(metrics: dict[str, Any]) -> int:
    return int(metrics["api-metrics"]["Fetch"]["request-total"])


@pytest.mark.anyio
async def test_small_max_records_fetches_a_compressed_batch_once(broker: Any) -> None:
    """A batch cut short by `max_records` keeps its rest for the next call, as `poll()` does,
    instead of fetching (and decompressing) it again from the first record not handed out."""
    bootstrap, topic = broker.bootstrap_servers, unique("arrow-once")
    tp = TopicPartition(topic, 0)
    await produce_compressed(bootstrap, topic)
    async with (
        reader(bootstrap, fetch_max_wait=0.5) as plain,
        reader(bootstrap, fetch_max_wait=0.5) as arrow,
    ):
        await plain.assign([tp])
        offsets: list[int] = []
        got: list[int] = []
        with anyio.fail_after(30):
            while len(offsets) < COMPRESSED:
                offsets += [r.offset for r in await plain.poll(timeout=5, max_records=SMALL)]
            plain_fetches = fetches(plain.metrics())
            await arrow.assign([tp])
            while len(got) < COMPRESSED:
                batches = await arrow.poll_arrow(timeout=5, max_records=SMALL)
                got += [o for b in batches for o in b.column("offset").to_pylist()]
                if batches:
                    assert await arrow.position(tp) == got[-1] + 1
            arrow_fetches = fetches(arrow.metrics())
        assert got == offsets == list(range(COMPRESSED))
        assert arrow_fetches <= plain_fetches + 3


def test_sync_small_max_records_fetches_a_compressed_batch_once(broker: Any) -> None:
    bootstrap, topic = broker.bootstrap_servers, unique("arrow-once-sync")
    tp = TopicPartition(topic, 0)
    anyio.run(produce_compressed, bootstrap, topic)
    options: dict[str, Any] = {"auto_offset_reset": "earliest", "fetch_max_wait": 0.5}
    with SyncConsumer(bootstrap, **options) as plain, SyncConsumer(bootstrap, **options) as arrow:
        plain.assign([tp])
        offsets: list[int] = []
        got: list[int] = []
        deadline = time.monotonic() + 30
        while len(offsets) < COMPRESSED:
            assert time.monotonic() < deadline
            offsets += [r.offset for r in plain.poll(5, max_records=SMALL)]
        plain_fetches = fetches(plain.metrics())
        arrow.assign([tp])
        while len(got) < COMPRESSED:
            assert time.monotonic() < deadline
            batches = arrow.poll_arrow(5, max_records=SMALL)
            got += [o for b in batches for o in b.column("offset").to_pylist()]
            if batches:
                assert arrow.position(tp) == got[-1] + 1
        arrow_fetches = fetches(arrow.metrics())
        assert got == offsets == list(range(COMPRESSED))
        assert arrow_fetches <= plain_fetches + 3


@pytest.mark.anyio
async def test_kept_rows_wait_out_a_pause_and_a_seek_drops_them(broker: Any) -> None:
    bootstrap, topic = broker.bootstrap_servers, unique("arrow-kept")
    tp = TopicPartition(topic, 0)
    await produce_compressed(bootstrap, topic)

    async def offsets(consumer: Consumer, timeout: float) -> list[int]:
        batches = await consumer.poll_arrow(timeout=timeout, max_records=SMALL)
        return [o for b in batches for o in b.column("offset").to_pylist()]

    async with reader(bootstrap) as consumer:
        await consumer.assign([tp])
        with anyio.fail_after(30):
            first: list[int] = []
            while not first:
                first = await offsets(consumer, 5)
            consumer.pause(tp)
            assert await offsets(consumer, 0.2) == []
            assert await consumer.position(tp) == first[-1] + 1
            consumer.resume(tp)
            assert (await offsets(consumer, 5))[0] == first[-1] + 1
            await consumer.seek(tp, 3)
            assert (await offsets(consumer, 5))[0] == 3
