"""Incremental fetch sessions (KIP-227) as Apache Kafka runs them (Tansu answers session id 0):
the broker gives a session id to the first, full Fetch; later Fetches carry it with epochs
1, 2, 3 ... and name only partitions whose fetch position changed or that were added, and
forget removed ones; closing the consumer closes the session (epoch -1). Checked on the Fetches
krafka sent and the broker's answers (`_recording.RecordingClient`)."""

from __future__ import annotations

import time
from typing import Any

import anyio
import pytest
from _recording import FetchExchange, RecordingClient

from krafka import AdminClient, Consumer, NewTopic, Producer, TopicPartition
from krafka.protocol.error_codes import ErrorCode

pytestmark = [pytest.mark.anyio, pytest.mark.broker, pytest.mark.timeout(60)]


async def test_the_broker_accepts_incremental_fetches(kafka: Any) -> None:
    topic = f"sessions-{time.time_ns()}"
    tps = [TopicPartition(topic, p) for p in range(3)]
    async with AdminClient(kafka.bootstrap_servers) as admin:
        (await admin.create_topics([NewTopic(topic, 3)])).raise_for_errors()
    async with Producer(kafka.bootstrap_servers) as producer:
        for i in range(30):
            await producer.send(topic, b"%d" % i, partition=i % 3)
        await producer.flush()
    client = RecordingClient(kafka.bootstrap_servers)
    consumer = Consumer(
        client=client, auto_offset_reset="earliest", fetch_max_wait=0.05, fetch_min_bytes=1
    )
    await client.start()
    try:
        async with consumer:
            await consumer.assign(tps[:2])
            await take(consumer, 20)
            await idle(consumer, client)
            opened = client.fetches[0]
            assert (opened.request.session_id, opened.request.session_epoch) == (0, 0)
            assert opened.partitions() == [0, 1]
            session = opened.response.session_id
            assert session != 0
            assert_one_session(client.fetches, session)
            assert client.fetches[-1].partitions() == []  # nothing changed: nothing named

            mark = len(client.fetches)
            await consumer.assign(tps)  # partition 2 joins the session
            assert [r.partition for r in await take(consumer, 10)] == [2] * 10
            added = next(f for f in client.fetches[mark:] if f.partitions())  # one may have
            assert added.partitions() == [2] and added.forgotten() == []  # been in flight

            mark = len(client.fetches)
            await consumer.assign([tps[0], tps[2]])  # partition 1 leaves it
            await idle(consumer, client)
            removed = next(f for f in client.fetches[mark:] if f.forgotten())
            assert removed.partitions() == [] and removed.forgotten() == [1]
            assert_one_session(client.fetches, session)
        (closing,) = [f for f in client.fetches if f.request.session_epoch == -1]
        assert closing.request.session_id == session and closing.partitions() == []
        assert closing.response.error_code == ErrorCode.NONE
    finally:
        await client.close()


def assert_one_session(fetches: list[FetchExchange], session: int) -> None:
    """Every fetch after the first continues one session with the next epoch, answered
    without error (an INVALID_FETCH_SESSION_EPOCH would have made krafka start over)."""
    for epoch, exchange in enumerate(fetches[1:], start=1):
        if exchange.request.session_epoch == -1:
            continue
        assert (exchange.request.session_id, exchange.request.session_epoch) == (session, epoch)
        assert exchange.response.error_code == ErrorCode.NONE
        assert exchange.response.session_id == session


async def take(consumer: Consumer, count: int) -> list[Any]:
    got: list[Any] = []
    with anyio.fail_after(15):
        while len(got) < count:
            got += await consumer.poll(timeout=0.5)
    return got


async def idle(consumer: Consumer, client: RecordingClient) -> None:
    """Until three more fetches came back empty (the consumer is at the end everywhere)."""
    since = len(client.fetches)
    with anyio.fail_after(15):
        while len(client.fetches) < since + 3 or any(f.records() for f in client.fetches[-3:]):
            assert await consumer.poll(timeout=0.1) == []
