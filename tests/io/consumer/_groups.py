"""Helpers shared by the consumer-group tests: a topic filled with numbered records, and a
group member tuned for Tansu (6 s sessions, so a join takes ~3 s; short fetch waits)."""

from __future__ import annotations

import time
from typing import Any

from krafka import AdminClient, Consumer, NewTopic, Producer


async def make_topic(
    bootstrap: str, partitions: int, records: int = 0, *, prefix: str = "grp", create: bool = True
) -> str:
    """A new topic (unless `create` is False: it exists or auto-creates) holding values
    b"0" .. b"<records - 1>", spread round-robin over its partitions."""
    topic = f"{prefix}-{time.time_ns()}"
    if create:
        async with AdminClient(bootstrap) as admin:
            (await admin.create_topics([NewTopic(topic, partitions)])).raise_for_errors()
    if records:
        async with Producer(bootstrap) as producer:
            for i in range(records):
                await producer.send(topic, b"%d" % i, partition=i % partitions)
            await producer.flush()
    return topic


def member(bootstrap: str, group: str, **kw: Any) -> Consumer:
    """A manual-commit member reading from the earliest offset; keywords override."""
    options: dict[str, Any] = {
        "group_id": group,
        "auto_offset_reset": "earliest",
        "enable_auto_commit": False,
        "fetch_max_wait": 0.1,
        "session_timeout": 6.0,
        "heartbeat_interval": 0.5,
        "partition_assignment_strategy": "range",
        **kw,
    }
    return Consumer(bootstrap, **options)
