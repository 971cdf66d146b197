"""`async for` over a consumer on a live cluster (Apache Kafka and Tansu), under asyncio and
trio: an application body that never awaits still lets the loop read the next fetch while it
works through the records already fetched, and no record is lost or repeated when the
iterating task is cancelled."""

from __future__ import annotations

import time
from typing import Any

import anyio
import pytest

from krafka import Consumer, Producer, TopicPartition

pytestmark = [pytest.mark.anyio, pytest.mark.broker, pytest.mark.timeout(120)]

#: More than three 1 MiB fetches of 100 B values (a 1 MiB answer holds ~9,000 of them).
RECORDS = 30_000


def unique(prefix: str) -> str:
    return f"{prefix}-{time.time_ns()}"


async def fill(bootstrap: str, topic: str) -> None:
    async with Producer(bootstrap, linger=0.005) as producer:
        for i in range(RECORDS):
            await producer.send(topic, b"%099d" % i, partition=0)
        await producer.flush()


def consumer(bootstrap: str) -> Consumer:
    return Consumer(
        bootstrap, auto_offset_reset="earliest", fetch_max_wait=0.1, max_poll_records=10_000
    )


async def test_the_loop_runs_while_a_body_that_never_awaits_works_through_a_batch(
    broker: Any,
) -> None:
    """Before, `async for` handed out a whole batch (up to `max_poll_records`) without letting
    the loop run: the next Fetch left only once the buffer ran dry, and the application then
    waited a whole round trip for every batch. Now the loop runs every ~1,000 records while a
    Fetch is under way (the answer is read meanwhile)."""
    topic = unique("iter-loop")
    await fill(broker.bootstrap_servers, topic)
    turns = 0

    async def count_turns() -> None:
        nonlocal turns
        while True:
            turns += 1
            await anyio.sleep(0)

    offsets: list[int] = []
    longest = run = 0
    async with consumer(broker.bootstrap_servers) as c, anyio.create_task_group() as tg:
        await c.assign([TopicPartition(topic, 0)])
        tg.start_soon(count_turns)
        seen = turns
        with anyio.fail_after(60):
            async for record in c:
                offsets.append(record.offset)
                run = run + 1 if turns == seen else 1
                seen, longest = turns, max(longest, run)
                if len(offsets) == RECORDS:
                    break
        tg.cancel_scope.cancel()
    assert offsets == list(range(RECORDS))
    assert longest <= 2_500, longest


async def test_cancelling_an_iterating_task_loses_no_record(broker: Any) -> None:
    """The scope around `async for` is cancelled mid-batch: the iteration ends at its next
    wait, and a new `async for` goes on from the next record (none dropped, none repeated)."""
    topic = unique("iter-cancel")
    await fill(broker.bootstrap_servers, topic)
    offsets: list[int] = []
    async with consumer(broker.bootstrap_servers) as c:
        await c.assign([TopicPartition(topic, 0)])
        stops = iter((1_500, 12_000))
        stop = next(stops)
        with anyio.fail_after(60):
            while len(offsets) < RECORDS:
                with anyio.CancelScope() as scope:
                    async for record in c:
                        offsets.append(record.offset)
                        if len(offsets) == stop:
                            scope.cancel()
                            stop = next(stops, -1)
                        if len(offsets) == RECORDS:
                            break
    assert offsets == list(range(RECORDS))
