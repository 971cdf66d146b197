"""read_committed against Apache Kafka's own transaction bookkeeping (Tansu sends no aborted
transactions list and no last stable offset that holds back): two transactions interleaved on
one partition with a plain record between them; what each isolation level sees while they are
open, after one commits and after the other aborts; markers skipped, positions past them;
`end_offsets` and `lag()` under read_committed follow the last stable offset."""

from __future__ import annotations

import time
from typing import Any

import anyio
import pytest

from krafka import AdminClient, Consumer, NewTopic, Producer, TopicPartition

pytestmark = [pytest.mark.anyio, pytest.mark.broker, pytest.mark.timeout(60)]


def reader(bootstrap: str, level: str) -> Consumer:
    return Consumer(
        bootstrap, auto_offset_reset="earliest", isolation_level=level, fetch_max_wait=0.1
    )


async def drain(consumer: Consumer, seconds: float = 0.5) -> list[tuple[int, bytes]]:
    """Everything that comes within `seconds` of quiet."""
    got: list[tuple[int, bytes]] = []
    while records := await consumer.poll(timeout=seconds):
        got += [(r.offset, r.value) for r in records]
    return got


async def stable_at(consumer: Consumer, tp: TopicPartition, offset: int) -> None:
    """Until the last stable offset is `offset`: the transaction coordinator answers EndTxn
    before the markers are written, so the LSO moves a moment later."""
    with anyio.fail_after(10):
        while (await consumer.end_offsets([tp]))[tp] != offset:
            await anyio.sleep(0.02)


async def test_interleaved_transactions_on_one_partition(kafka: Any) -> None:
    topic = f"txn-{time.time_ns()}"
    tp = TopicPartition(topic, 0)
    async with AdminClient(kafka.bootstrap_servers) as admin:
        (await admin.create_topics([NewTopic(topic, 1)])).raise_for_errors()
    async with (
        Producer(kafka.bootstrap_servers, transactional_id=f"a-{topic}") as a,
        Producer(kafka.bootstrap_servers, transactional_id=f"b-{topic}") as b,
        Producer(kafka.bootstrap_servers) as plain,
        reader(kafka.bootstrap_servers, "read_committed") as committed,
        reader(kafka.bootstrap_servers, "read_uncommitted") as everything,
    ):
        await committed.assign([tp])
        await everything.assign([tp])
        a.begin_transaction()
        b.begin_transaction()
        await (await a.send(topic, b"a0", partition=0))  # offset 0
        await (await b.send(topic, b"b0", partition=0))  # 1
        await (await a.send(topic, b"a1", partition=0))  # 2
        await (await b.send(topic, b"b1", partition=0))  # 3
        await plain.send_and_wait(topic, b"p0", partition=0)  # 4
        assert await committed.end_offsets([tp]) == {tp: 0}  # the first open transaction
        assert await everything.end_offsets([tp]) == {tp: 5}
        assert await drain(committed) == []
        assert await drain(everything) == [
            (0, b"a0"),
            (1, b"b0"),
            (2, b"a1"),
            (3, b"b1"),
            (4, b"p0"),
        ]

        await a.commit_transaction()  # marker at 5; b's transaction still holds the LSO at 1
        await stable_at(committed, tp, 1)
        assert await drain(committed) == [(0, b"a0")]
        assert committed.lag() == {tp: 0}

        await b.flush()
        await b.abort_transaction()  # marker at 6
        await stable_at(committed, tp, 7)
        assert await drain(committed) == [(2, b"a1"), (4, b"p0")]
        assert await committed.position(tp) == 7  # past both markers
        assert await drain(everything) == []
        assert await everything.position(tp) == 7
    async with reader(kafka.bootstrap_servers, "read_committed") as fresh:
        await fresh.assign([tp])
        assert await drain(fresh) == [(0, b"a0"), (2, b"a1"), (4, b"p0")]
        assert fresh.lag() == {tp: 0}


async def test_a_large_aborted_transaction_between_committed_ones(kafka: Any) -> None:
    """Committed, aborted and committed transactions of one producer, each of many batches:
    the fetch spans the aborted one (the broker lists it), every committed record comes once
    and in order, the aborted ones never."""
    topic = f"txn-many-{time.time_ns()}"
    tp = TopicPartition(topic, 0)
    async with AdminClient(kafka.bootstrap_servers) as admin:
        (await admin.create_topics([NewTopic(topic, 1)])).raise_for_errors()
    async with Producer(
        kafka.bootstrap_servers, transactional_id=f"tx-{topic}", batch_size=512
    ) as producer:
        for name, commit in (("x", True), ("y", False), ("z", True)):
            producer.begin_transaction()
            for i in range(200):
                await producer.send(topic, b"%s%03d" % (name.encode(), i), partition=0)
            if commit:
                await producer.commit_transaction()
            else:
                await producer.flush()
                await producer.abort_transaction()
    expected = [b"x%03d" % i for i in range(200)] + [b"z%03d" % i for i in range(200)]
    async with reader(kafka.bootstrap_servers, "read_committed") as consumer:
        await consumer.assign([tp])
        got: list[bytes] = []
        with anyio.fail_after(20):
            while len(got) < len(expected):
                got += [r.value for r in await consumer.poll(timeout=0.5)]
        assert got == expected
        assert await drain(consumer) == []
        assert await consumer.position(tp) == 603  # 600 records and 3 markers
