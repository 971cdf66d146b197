"""Shared by the producer's broker tests: independent read-back of what krafka produced.

`consume` reads with librdkafka (confluent-kafka), `fetch_batches` with a raw Fetch (so control
batches and transactional flags can be inspected, which no consumer shows).
"""

from __future__ import annotations

import time
import uuid
from typing import Any

from krafka.codec import RecordBatch, decode_batches
from krafka.io.client import KafkaClient
from krafka.protocol.messages import FetchRequest


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


def consume(
    bootstrap: str,
    topic: str,
    count: int,
    partitions: tuple[int, ...] = (0,),
    timeout: float = 20.0,
    **config: Any,
) -> list[Any]:
    """At least `count` messages (or all there are after `timeout`) read by librdkafka."""
    import confluent_kafka

    consumer = confluent_kafka.Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": unique("readback"),
            "enable.auto.commit": False,
            "fetch.wait.max.ms": 100,
            **config,
        }
    )
    try:
        consumer.assign([confluent_kafka.TopicPartition(topic, p, 0) for p in partitions])
        out: list[Any] = []
        deadline = time.monotonic() + timeout
        while len(out) < count and time.monotonic() < deadline:
            for message in consumer.consume(num_messages=10_000, timeout=0.2):
                if message.error() is None:
                    out.append(message)
        extra_until = time.monotonic() + 0.3  # anything beyond `count` (duplicates) shows up
        while time.monotonic() < extra_until:
            out += [m for m in consumer.consume(10_000, 0.1) if m.error() is None]
        return out
    finally:
        consumer.close()


async def fetch_batches(client: KafkaClient, topic: str, partition: int = 0) -> list[RecordBatch]:
    """Every batch of a partition, control batches included, by raw Fetch requests (v4-v12)."""
    batches: list[RecordBatch] = []
    offset = 0
    while True:
        request = FetchRequest(
            max_wait_ms=50,
            min_bytes=1,
            max_bytes=16 * 1024 * 1024,
            topics=[
                FetchRequest.FetchTopic(
                    topic=topic,
                    partitions=[
                        FetchRequest.FetchTopic.FetchPartition(
                            partition=partition, fetch_offset=offset, partition_max_bytes=8 << 20
                        )
                    ],
                )
            ],
        )
        leader = await client.leader_for(topic, partition)
        response = await client.send(request, node_id=leader.node_id, max_version=12)
        (part,) = response.responses[0].partitions
        found = decode_batches(bytes(part.records or b""))
        found = [b for b in found if b.base_offset + max(len(b.records), 1) > offset]
        if not found:
            return batches
        batches += found
        last = found[-1]
        offset = max(offset, last.base_offset + max(len(last.records), 1))
        if last.records:
            offset = max(offset, last.records[-1].offset + 1)
