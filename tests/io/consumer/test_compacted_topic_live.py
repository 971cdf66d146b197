"""CompactedTopicConsumer on a live cluster (Apache Kafka and Tansu): scan a compacted topic
with tombstones, then tail it."""

from __future__ import annotations

import time
from typing import Any

import anyio
import pytest

from krafka import AdminClient, CompactedTopicConsumer, ConfigResource, NewTopic, Producer
from krafka.errors import UnknownTopicOrPartitionError

pytestmark = [pytest.mark.anyio, pytest.mark.broker, pytest.mark.timeout(60)]


async def test_scan_then_tail(broker: Any) -> None:
    """A keyless record (written before the topic became compacted: a compacted topic refuses
    keyless records, as Apache Kafka does) is skipped; tombstones remove keys."""
    topic = f"profiles-{time.time_ns()}"
    async with AdminClient(broker.bootstrap_servers) as admin:
        (await admin.create_topics([NewTopic(topic, 3, 1)])).raise_for_errors()
        async with Producer(broker.bootstrap_servers) as producer:
            await producer.send_and_wait(topic, b"keyless", partition=0)
        changed = await admin.alter_configs(
            {ConfigResource.topic(topic): {"cleanup.policy": "compact"}}
        )
        changed.raise_for_errors()
    async with Producer(broker.bootstrap_servers) as producer:
        for i in range(300):
            await producer.send(topic, b"v%d" % i, key=b"user-%d" % (i % 50))
        for i in range(0, 50, 5):
            await producer.send(topic, None, key=b"user-%d" % i)
        await producer.flush()
    expected = {b"user-%d" % k: b"v%d" % (250 + k) for k in range(50) if k % 5}
    async with CompactedTopicConsumer(topic, broker.bootstrap_servers, fetch_max_wait=0.1) as ctc:
        assert not ctc.is_caught_up()
        await ctc.scan(timeout=30)
        assert ctc.is_caught_up()
        assert ctc.table.snapshot() == expected
        assert ctc.table.tombstones_processed == 10
        async with Producer(broker.bootstrap_servers) as producer:
            await producer.send_and_wait(topic, b"new", key=b"user-1")
            await producer.send_and_wait(topic, None, key=b"user-2")
        changes = []
        with anyio.fail_after(20):
            while len(changes) < 2:
                changes += await ctc.poll(1.0)
        assert {(c.key, c.new_value) for c in changes} == {(b"user-1", b"new"), (b"user-2", None)}
        assert ctc.table[b"user-1"] == b"new" and b"user-2" not in ctc.table


async def test_a_topic_that_does_not_exist_is_named_at_start(tansu: Any) -> None:
    """Tansu creates no topic on a metadata request: the table's topic is missing. The error
    names it when the consumer starts (it raised "no partition of ... is assigned" at the first
    scan, later IllegalStateError about subscribe/assign that the application never calls)."""
    topic = f"missing-profiles-{time.time_ns()}"
    with pytest.raises(UnknownTopicOrPartitionError, match=rf"topic '{topic}' does not exist"):
        async with CompactedTopicConsumer(topic, tansu.bootstrap_servers) as ctc:
            await ctc.scan(timeout=10)
