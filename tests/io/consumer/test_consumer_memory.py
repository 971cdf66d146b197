"""Memory while consuming: resident size stays within the fetch buffer's bounds (twice
fetch_max_bytes, plus the interpreter's own allocation slack), however much is consumed."""

from __future__ import annotations

import os
import time
from typing import Any

import anyio
import pytest

from krafka import Consumer, Producer, TopicPartition

pytestmark = [pytest.mark.anyio, pytest.mark.broker]

FETCH_MAX = 4 << 20
SLACK = 48 << 20  # codec buffers, decompression scratch, allocator fragmentation


def rss() -> int:
    with open(f"/proc/{os.getpid()}/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


async def consume_volume(bootstrap: str, megabytes: int) -> tuple[int, int]:
    topic = f"mem-{time.time_ns()}"
    value = b"m" * 1000
    count = megabytes * 1000
    async with Producer(bootstrap, linger=0.01, compression="lz4") as producer:
        for i in range(count):
            await producer.send(topic, value, partition=i % 2)
        await producer.flush()
    peak, seen = 0, 0
    async with Consumer(
        bootstrap,
        auto_offset_reset="earliest",
        fetch_max_bytes=FETCH_MAX,
        max_partition_fetch_bytes=1 << 20,
        fetch_max_wait=0.1,
    ) as consumer:
        await consumer.assign([TopicPartition(topic, 0), TopicPartition(topic, 1)])
        await consumer.poll(timeout=5)
        baseline = rss()
        with anyio.fail_after(600):
            while seen < count - 1000:
                seen += len(await consumer.poll(timeout=1.0))
                peak = max(peak, rss())
    return peak - baseline, seen


@pytest.mark.timeout(120)
async def test_resident_size_is_bounded_while_consuming(broker: Any) -> None:
    growth, seen = await consume_volume(broker.bootstrap_servers, 60)
    assert seen >= 59_000
    assert growth < 2 * FETCH_MAX + SLACK, f"grew {growth >> 20} MiB over 60 MB consumed"


@pytest.mark.slow
@pytest.mark.timeout(1800)
async def test_resident_size_is_bounded_over_two_gigabytes(broker: Any) -> None:
    growth, _ = await consume_volume(broker.bootstrap_servers, 2000)
    assert growth < 2 * FETCH_MAX + SLACK, f"grew {growth >> 20} MiB over 2 GB consumed"
