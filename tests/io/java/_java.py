"""Helpers of the Java-peer tests: fresh topics, and krafka reading partitions to their end."""

from __future__ import annotations

import time
from collections.abc import Mapping

import anyio

from krafka import AdminClient, Consumer, ConsumerRecord, NewTopic, TopicPartition


async def new_topics(
    bootstrap: str, partitions: int, *names: str, configs: Mapping[str, str] | None = None
) -> list[str]:
    """Fresh topics named `<name>-<ns>`, `partitions` each."""
    stamp = time.time_ns()
    topics = [f"{name}-{stamp}" for name in names]
    async with AdminClient(bootstrap) as admin:
        created = await admin.create_topics(
            [NewTopic(t, partitions, configs=dict(configs or {})) for t in topics]
        )
        created.raise_for_errors()
    return topics


async def read_to_end(
    bootstrap: str, topic: str, partitions: int, isolation: str = "read_uncommitted"
) -> list[ConsumerRecord]:
    """Every record of `topic` up to its end offsets (the last stable ones when read_committed)."""
    tps = [TopicPartition(topic, p) for p in range(partitions)]
    got: list[ConsumerRecord] = []
    async with Consumer(
        bootstrap, isolation_level=isolation, auto_offset_reset="earliest", fetch_max_wait=0.1
    ) as consumer:
        await consumer.assign(tps)
        ends = await consumer.end_offsets(tps)
        with anyio.fail_after(30):
            while [tp for tp in tps if await consumer.position(tp) < ends[tp]]:
                got += await consumer.poll(timeout=0.2)
    return got


async def end_offsets(bootstrap: str, topic: str, partitions: int) -> dict[TopicPartition, int]:
    async with Consumer(bootstrap) as consumer:
        return await consumer.end_offsets([TopicPartition(topic, p) for p in range(partitions)])
