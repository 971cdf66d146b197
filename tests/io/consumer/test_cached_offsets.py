"""Seed 000's cached offsets on a live cluster: `cached_beginning_offset` / `cached_end_offset`
are what the last fetch response said (no request), the metrics' `lag` the total; on Apache
Kafka after DeleteRecords and under read_committed with a transaction open; on Tansu too."""

from __future__ import annotations

import time
from typing import Any

import anyio
import pytest

from krafka import AdminClient, Consumer, NewTopic, Producer, TopicPartition
from krafka.sync import Consumer as SyncConsumer

pytestmark = [pytest.mark.anyio, pytest.mark.broker, pytest.mark.timeout(60)]


async def poll_until(consumer: Consumer, wanted: Any) -> None:
    with anyio.fail_after(20):
        while not wanted():
            await consumer.poll(timeout=0.2)


async def test_the_last_fetch_responses_offsets_and_the_total_lag(broker: Any) -> None:
    topic = f"cached-{time.time_ns()}"
    t0, t1 = TopicPartition(topic, 0), TopicPartition(topic, 1)
    async with Producer(broker.bootstrap_servers) as producer:
        for i in range(10):
            await producer.send(topic, b"%d" % i, partition=i % 2)
        await producer.flush()
    async with Consumer(
        broker.bootstrap_servers, auto_offset_reset="earliest", fetch_max_wait=0.1,
        max_poll_records=1,
    ) as consumer:  # fmt: skip
        assert consumer.cached_end_offset(t0) is None  # not assigned
        await consumer.assign([t0, t1])
        assert consumer.cached_end_offset(t0) is None  # no fetch yet
        ends = lambda: (consumer.cached_end_offset(t0), consumer.cached_end_offset(t1))  # noqa: E731
        await poll_until(consumer, lambda: None not in ends())
        assert ends() == (5, 5)
        beginning = await consumer.beginning_offsets([t0])
        assert consumer.cached_beginning_offset(t0) == beginning[t0] == 0
        metrics = consumer.metrics()
        assert (
            metrics["lag"]
            == sum(consumer.lag().values())
            == sum(metrics["lag_by_partition"].values())
        )
        assert metrics["lag_max"] == max(consumer.lag().values())
        await consumer.assign([t1])
        assert consumer.cached_end_offset(t0) is None
        assert consumer.cached_beginning_offset(t0) is None
    with SyncConsumer(
        bootstrap_servers=broker.bootstrap_servers, auto_offset_reset="earliest",
        fetch_max_wait=0.1,
    ) as blocking:  # fmt: skip
        blocking.assign([t0])
        got: list[Any] = []
        deadline = time.monotonic() + 20
        while len(got) < 5 and time.monotonic() < deadline:
            got += blocking.poll(0.5)
        assert blocking.cached_end_offset(t0) == 5 and blocking.cached_beginning_offset(t0) == 0
        assert blocking.metrics()["lag"] == 0


async def test_log_start_after_delete_records_and_the_lso_under_read_committed(
    kafka: Any,
) -> None:
    topic = f"cached-txn-{time.time_ns()}"
    tp = TopicPartition(topic, 0)
    async with AdminClient(kafka.bootstrap_servers) as admin:
        (await admin.create_topics([NewTopic(topic, 1)])).raise_for_errors()
        async with Producer(kafka.bootstrap_servers) as plain:
            for i in range(4):
                await plain.send_and_wait(topic, b"%d" % i, partition=0)
        (await admin.delete_records({tp: 2})).raise_for_errors()
    async with (
        Producer(kafka.bootstrap_servers, transactional_id=f"tx-{topic}") as txn,
        Consumer(kafka.bootstrap_servers, auto_offset_reset="earliest", fetch_max_wait=0.1,
                 isolation_level="read_committed") as committed,
        Consumer(kafka.bootstrap_servers, auto_offset_reset="earliest",
                 fetch_max_wait=0.1) as everything,
    ):  # fmt: skip
        txn.begin_transaction()
        await (await txn.send(topic, b"open", partition=0))  # offset 4, not committed
        await committed.assign([tp])
        await everything.assign([tp])
        await poll_until(everything, lambda: everything.cached_end_offset(tp) == 5)
        await poll_until(committed, lambda: committed.cached_end_offset(tp) is not None)
        assert committed.cached_end_offset(tp) == 4  # the last stable offset
        assert committed.cached_beginning_offset(tp) == everything.cached_beginning_offset(tp) == 2
        await txn.commit_transaction()
        await poll_until(committed, lambda: committed.cached_end_offset(tp) == 6)
