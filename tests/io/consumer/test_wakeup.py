"""`Consumer.wakeup()` on a live cluster (Apache Kafka and Tansu), under asyncio and trio: a
blocked poll or the next one, `commit` and `committed` raise `WakeupError` once per wakeup."""

from __future__ import annotations

import time
from typing import Any

import anyio
import pytest

from krafka import Consumer, Producer, TopicPartition, WakeupError

pytestmark = [pytest.mark.anyio, pytest.mark.broker, pytest.mark.timeout(60)]


def unique(prefix: str) -> str:
    return f"{prefix}-{time.time_ns()}"


async def fill(bootstrap: str, topic: str, count: int) -> None:
    async with Producer(bootstrap) as producer:
        for i in range(count):
            await producer.send(topic, b"%d" % i, partition=0)
        await producer.flush()


async def test_a_blocked_poll_raises_once_then_polls_again(broker: Any) -> None:
    topic = unique("wakeup-blocked")
    tp = TopicPartition(topic, 0)
    await fill(broker.bootstrap_servers, topic, 3)
    async with Consumer(
        broker.bootstrap_servers, auto_offset_reset="earliest", fetch_max_wait=0.1
    ) as consumer:
        await consumer.assign([tp])
        with anyio.fail_after(20):
            got = []
            while len(got) < 3:
                got += await consumer.poll(timeout=1.0)
        raised: list[BaseException] = []

        async def blocked_poll() -> None:
            try:
                await consumer.poll(timeout=None)
            except WakeupError as exc:
                raised.append(exc)

        with anyio.fail_after(20):
            async with anyio.create_task_group() as tg:
                tg.start_soon(blocked_poll)
                await anyio.sleep(0.3)
                consumer.wakeup()
        assert len(raised) == 1
        assert await consumer.poll(timeout=0.2) == []  # once per wakeup
        await fill(broker.bootstrap_servers, topic, 2)
        with anyio.fail_after(20):
            got = []
            while len(got) < 2:
                got += await consumer.poll(timeout=1.0)
        assert [r.offset for r in got] == [3, 4]


async def test_the_next_poll_recv_commit_and_committed_raise_each_once(broker: Any) -> None:
    topic, group = unique("wakeup-next"), unique("g")
    tp = TopicPartition(topic, 0)
    await fill(broker.bootstrap_servers, topic, 5)
    async with Consumer(
        broker.bootstrap_servers,
        group_id=group,
        auto_offset_reset="earliest",
        enable_auto_commit=False,
        fetch_max_wait=0.1,
    ) as consumer:
        await consumer.assign([tp])
        assert await consumer.position(tp, timeout=20) == 0
        consumer.wakeup()
        consumer.wakeup()  # two before a call still raise once
        with pytest.raises(WakeupError):
            await consumer.poll(timeout=5.0)
        with anyio.fail_after(20):
            assert (await consumer.recv()).offset == 0
        consumer.wakeup()
        with pytest.raises(WakeupError):
            await consumer.recv()
        with anyio.fail_after(20):
            got = []
            while len(got) < 4:
                got += await consumer.poll(timeout=1.0)
        consumer.wakeup()
        with pytest.raises(WakeupError):
            await consumer.commit()
        await consumer.commit()
        consumer.wakeup()
        with pytest.raises(WakeupError):
            await consumer.committed([tp])
        committed = await consumer.committed([tp])
        assert committed[tp] is not None and committed[tp].offset == 5
