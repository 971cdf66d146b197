"""End-to-end demo: `python -m krafka.demo`.

Starts a local Tansu broker, then under asyncio and under trio:
1. the connection core: `krafka.io.client.KafkaClient` fetches metadata, produces one record
   batch encoded by `krafka.codec` with a raw Produce request, and reads it back with raw Fetch
   requests;
2. the producer: `krafka.Producer` (idempotent, zstd, murmur2 partitioning) sends 10,000 keyed
   records and a transaction; the records are read back with raw Fetch requests and checked,
   then with `krafka.Consumer`, shared by a consumer group of two members, and folded into a
   key -> latest value table by `CompactedTopicConsumer`.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from typing import Any

import anyio

from krafka.codec import Record, decode_batches, encode_batch
from krafka.errors import error_for_code
from krafka.io.client import KafkaClient
from krafka.protocol import ApiKey
from krafka.protocol.messages import FetchRequest, ProduceRequest
from krafka.sansio.metadata import ClusterMetadata


def produce_request(topic: str, partition: int, batch: bytes, acks: int = -1) -> ProduceRequest:
    """A Produce request carrying one encoded record batch for one partition."""
    data = ProduceRequest.TopicProduceData(
        name=topic,
        partition_data=[
            ProduceRequest.TopicProduceData.PartitionProduceData(index=partition, records=batch)
        ],
    )
    return ProduceRequest(acks=acks, timeout_ms=5000, topic_data=[data])


def fetch_request(
    meta: ClusterMetadata, topic: str, partition: int, offset: int, version: int
) -> FetchRequest:
    """A sessionless Fetch of one partition, naming the topic by id from v13 on."""
    part = FetchRequest.FetchTopic.FetchPartition(
        partition=partition, fetch_offset=offset, partition_max_bytes=1 << 20
    )
    if version >= 13:
        topic_id = meta.topic_id(topic)
        assert topic_id is not None, f"no topic id known for {topic}"
        fetch_topic = FetchRequest.FetchTopic(topic_id=topic_id, partitions=[part])
    else:
        fetch_topic = FetchRequest.FetchTopic(topic=topic, partitions=[part])
    return FetchRequest(max_wait_ms=100, min_bytes=1, max_bytes=1 << 20, topics=[fetch_topic])


async def produce(
    client: KafkaClient, topic: str, partition: int, records: Sequence[Any], attempts: int = 5
) -> int:
    """Produce `records` as one batch; returns the base offset the broker assigned.

    A retriable error (a partition whose leader is still being set up, a leader that moved)
    is retried a few times after a metadata refresh, as a producer does."""
    batch = encode_batch(records, compression="zstd")
    for attempt in range(1, attempts + 1):
        response = await client.send_to_leader(
            topic, partition, produce_request(topic, partition, batch)
        )
        assert response is not None, "acks=-1 always answers"
        result = response.responses[0].partition_responses[0]
        if not result.error_code:
            return int(result.base_offset)
        client.report_error(result.error_code, topic)
        error = error_for_code(result.error_code, f"produce to {topic}-{partition}")
        if not error.retriable or attempt == attempts:
            raise error
        await anyio.sleep(0.1 * attempt)
        await client.refresh_metadata([topic])
    raise AssertionError("unreachable")


async def fetch(
    client: KafkaClient, topic: str, partition: int, offset: int, count: int, timeout: float = 10.0
) -> list[Any]:
    """Fetch from `offset` until `count` records arrived (or `timeout` passes)."""
    leader = await client.leader_for(topic, partition)
    version = await client.api_version(ApiKey.FETCH, leader.node_id)
    out: list[Any] = []
    with anyio.fail_after(timeout):
        while len(out) < count:
            request = fetch_request(client.metadata, topic, partition, offset, version)
            response = await client.send(request, node_id=leader.node_id)
            data = response.responses[0].partitions[0]
            if data.error_code:
                client.report_error(data.error_code, topic)
                raise error_for_code(data.error_code, f"fetch from {topic}-{partition}")
            for batch in decode_batches(data.records or b""):
                out += [r for r in batch.records if r.offset >= offset]
            if out:
                offset = out[-1].offset + 1
    return out


async def roundtrip(bootstrap_servers: str, topic: str, n: int = 10) -> list[Any]:
    """Produce `n` records to partition 0 of `topic` and read them back."""
    async with KafkaClient(bootstrap_servers, client_id="krafka-demo") as client:
        await client.partitions_for(topic)  # creates the topic and waits for its leader
        now = int(time.time() * 1000)
        records = [
            Record(
                key=f"k{i}".encode(),
                value=f"value {i}".encode(),
                headers=[("i", str(i).encode())],
                timestamp=now,
            )
            for i in range(n)
        ]
        base = await produce(client, topic, 0, records)
        return await fetch(client, topic, 0, base, n)


async def produce_with_producer(bootstrap_servers: str, topic: str, n: int) -> dict[int, int]:
    """Send `n` keyed records with `krafka.Producer`; returns records acknowledged per partition."""
    from krafka import Producer

    per_partition: dict[int, int] = {}
    async with Producer(
        bootstrap_servers=bootstrap_servers, compression="zstd", linger=0.005
    ) as producer:
        first = await producer.send_and_wait(topic, b"hello", key=b"k", headers=[("h", b"v")])
        pending = [
            await producer.send(topic, b"order-%d" % i, key=b"customer-%d" % (i % 10))
            for i in range(n - 1)
        ]
        await producer.flush()
        for meta in [first, *[await p for p in pending]]:
            per_partition[meta.partition] = per_partition.get(meta.partition, 0) + 1
    async with Producer(bootstrap_servers=bootstrap_servers, transactional_id=topic) as tx:
        tx.begin_transaction()
        await tx.send(topic + "-payments", b"debit", key=b"acct-1")
        await tx.send(topic + "-payments", b"credit", key=b"acct-2")
        await tx.commit_transaction()
    return per_partition


async def consume_back(bootstrap_servers: str, topic: str, acked: dict[int, int]) -> int:
    """Read every acknowledged record back with `krafka.Consumer` (standalone, assigned)."""
    from krafka import Consumer, TopicPartition

    expected = sum(acked.values())
    seen: set[tuple[int, int]] = set()
    count = 0
    async with Consumer(
        bootstrap_servers, auto_offset_reset="earliest", fetch_max_wait=0.1
    ) as consumer:
        await consumer.assign([TopicPartition(topic, p) for p in acked])
        with anyio.fail_after(30):
            while len(seen) < expected:
                for record in await consumer.poll(timeout=1.0):
                    seen.add((record.partition, record.offset))
                    count += 1
        assert count == len(seen), "a record was returned twice"
        assert sum(consumer.lag().values()) == 0
    return len(seen)


async def group_of_two(bootstrap_servers: str, topic: str, expected: int) -> list[int]:
    """Two consumers in one group (cooperative-sticky) share the topic's partitions: disjoint
    assignments, every record consumed once, progress committed. Records consumed per member."""
    from krafka import Consumer

    def member() -> Consumer:
        return Consumer(
            bootstrap_servers,
            group_id=f"{topic}-group",
            partition_assignment_strategy="cooperative-sticky",
            auto_offset_reset="earliest",
            enable_auto_commit=False,
            fetch_max_wait=0.1,
        )

    seen: set[tuple[int, int]] = set()
    counts = [0, 0]
    async with member() as first, member() as second:
        members = (first, second)
        for consumer in members:
            await consumer.subscribe([topic])
        with anyio.fail_after(60):
            while len(seen) < expected or not all(c.assignment() for c in members):
                for index, consumer in enumerate(members):
                    records = await consumer.poll(timeout=0.1)
                    seen.update((r.partition, r.offset) for r in records)
                    counts[index] += len(records)
                    if records:
                        await consumer.commit()
        assert first.assignment().isdisjoint(second.assignment())
    assert sum(counts) == len(seen) == expected, "a record was consumed twice or missed"
    return counts


async def latest_per_key(bootstrap_servers: str, topic: str) -> dict[bytes, bytes]:
    """The latest value of every key, as a `CompactedTopicConsumer` scans it."""
    from krafka import CompactedTopicConsumer

    async with CompactedTopicConsumer(topic, bootstrap_servers, fetch_max_wait=0.1) as table:
        await table.scan(timeout=30)
        return table.table.snapshot()


async def _demo(bootstrap_servers: str, backend: str) -> None:
    topic = f"krafka-demo-{backend}"
    got = await roundtrip(bootstrap_servers, topic)
    print(f"[{backend}] raw Produce/Fetch: {len(got)} records from {topic}-0:")
    for record in got[:3]:
        print(f"    offset={record.offset} key={record.key!r} value={record.value!r}")
    orders = f"{topic}-orders"
    start = time.perf_counter()
    acked = await produce_with_producer(bootstrap_servers, orders, 10_000)
    took = time.perf_counter() - start
    print(
        f"[{backend}] Producer: {sum(acked.values())} records acknowledged in {took:.2f}s, "
        f"per partition {dict(sorted(acked.items()))}; a transaction committed"
    )
    async with KafkaClient(bootstrap_servers, client_id="krafka-demo") as client:
        await client.refresh_metadata([orders])
        for partition, count in sorted(acked.items()):
            records = await fetch(client, orders, partition, 0, count)
            assert len(records) == count, (partition, len(records), count)
    print(f"[{backend}] fetched every acknowledged record back, exactly once")
    consumed = await consume_back(bootstrap_servers, orders, acked)
    print(f"[{backend}] Consumer: read {consumed} records back (no duplicates), lag 0")
    shares = await group_of_two(bootstrap_servers, orders, consumed)
    print(
        f"[{backend}] consumer group of two (cooperative-sticky): {shares[0]} + {shares[1]} "
        "records, disjoint partitions, each record once, offsets committed"
    )
    latest = await latest_per_key(bootstrap_servers, orders)
    assert len(latest) == 11, sorted(latest)
    print(
        f"[{backend}] CompactedTopicConsumer: {len(latest)} keys, latest for customer-9 is "
        f"{latest[b'customer-9']!r}"
    )


def main() -> int:
    from krafka.testing import LocalBroker

    with LocalBroker() as broker:
        print(f"local Tansu broker on {broker.bootstrap_servers}")
        for backend in ("asyncio", "trio"):
            anyio.run(_demo, broker.bootstrap_servers, backend, backend=backend)
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
