"""Issue 22: coordinator traffic has a connection of its own (Java's coordinator connection), so
`commit()` and `committed()` do not wait behind a long-polling Fetch on the data connection
(Kafka answers one connection's requests in order)."""

from __future__ import annotations

import statistics
import time
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import pytest

from krafka import Consumer, OffsetAndMetadata, Producer, TopicPartition

pytestmark = [pytest.mark.anyio, pytest.mark.broker, pytest.mark.timeout(60)]

#: The Fetch of a caught-up consumer waits this long on the broker.
_LONG_POLL = 2.0


async def _median_seconds(call: Callable[[], Awaitable[Any]], times: int = 5) -> float:
    took = []
    for _ in range(times):
        start = anyio.current_time()
        await call()
        took.append(anyio.current_time() - start)
        await anyio.sleep(0.05)  # the fetcher's next long poll is on the wire again
    return statistics.median(took)


async def test_commit_and_committed_do_not_wait_for_the_long_poll(broker: Any) -> None:
    topic, group = f"long-poll-{time.time_ns()}", f"g-{time.time_ns()}"
    tp = TopicPartition(topic, 0)
    async with Producer(broker.bootstrap_servers) as producer:
        await producer.send_and_wait(topic, b"only", partition=0)
    async with Consumer(
        broker.bootstrap_servers,
        group_id=group,
        auto_offset_reset="earliest",
        enable_auto_commit=False,
        fetch_max_wait=_LONG_POLL,
    ) as consumer:
        await consumer.assign([tp])
        assert len(await consumer.batch_recv(max_records=10, timeout=10)) == 1
        await consumer.commit()  # finds the coordinator
        commit = await _median_seconds(lambda: consumer.commit({tp: OffsetAndMetadata(1)}))
        committed = await _median_seconds(lambda: consumer.committed([tp]))
        assert (await consumer.committed([tp]))[tp].offset == 1  # type: ignore[union-attr]
    assert commit < _LONG_POLL / 4 and committed < _LONG_POLL / 4, (commit, committed)
