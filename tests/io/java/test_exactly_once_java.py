"""A krafka consume -> transform -> produce loop (`send_offsets_to_transaction` with the consumer's
`group_metadata()`) on Apache Kafka, some of its transactions aborted and retried: Apache Kafka's
`KafkaConsumer`, read_committed, sees each input exactly once in the output."""

from __future__ import annotations

from collections import Counter

import anyio
import pytest
from _java import end_offsets, new_topics, read_to_end

from krafka import AdminClient, Consumer, OffsetAndMetadata, Producer, TopicPartition
from krafka.testing.javapeer import java_consume
from krafka.testing.kafka import KafkaCluster

pytestmark = [pytest.mark.anyio, pytest.mark.one_backend, pytest.mark.timeout(120)]

PARTITIONS = 3
RECORDS = 150
ABORTED_ATTEMPTS = {0, 3}


async def transform(bootstrap: str, source: str, sink: str, group: str) -> int:
    """Copy `source` to `sink` in transactions; returns how many records were aborted."""
    consumer = Consumer(
        bootstrap,
        group_id=group,
        isolation_level="read_committed",
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        fetch_max_wait=0.1,
    )
    producer = Producer(bootstrap, transactional_id=f"tx-{group}", linger=0.005)
    done = aborted = attempt = 0
    async with consumer, producer:
        await consumer.subscribe([source])
        with anyio.fail_after(60):
            while done < RECORDS:
                records = await consumer.poll(timeout=0.2, max_records=25)
                if not records:
                    continue
                await producer.begin_transaction()
                positions: dict[TopicPartition, OffsetAndMetadata] = {}
                for record in records:
                    await producer.send(sink, b"out-" + record.value, key=record.key)
                    positions[TopicPartition(record.topic, record.partition)] = OffsetAndMetadata(
                        record.offset + 1
                    )
                await producer.send_offsets_to_transaction(positions, consumer.group_metadata())
                if attempt in ABORTED_ATTEMPTS:
                    await producer.flush()  # the aborted outputs reach the log
                    await producer.abort_transaction()
                    aborted += len(records)
                    assigned = consumer.assignment()
                    committed = await consumer.committed(assigned)
                    for tp in assigned:  # back to the last committed input, as Java's apps do
                        offset = committed[tp]
                        await consumer.seek(tp, offset.offset if offset is not None else 0)
                else:
                    await producer.commit_transaction()
                    done += len(records)
                attempt += 1
    return aborted


async def test_transactions_read_exactly_once_by_kafka_consumer(cluster: KafkaCluster) -> None:
    bootstrap = cluster.bootstrap_servers
    source, sink = await new_topics(bootstrap, PARTITIONS, "eos-in", "eos-out")
    group = f"g-{source}"
    async with Producer(bootstrap, linger=0.005) as producer:
        for i in range(RECORDS):
            await producer.send(source, b"%d" % i, key=b"%d" % (i % 7))
        await producer.flush()
    aborted = await transform(bootstrap, source, sink, group)
    assert aborted > 0
    got = await anyio.to_thread.run_sync(
        lambda: java_consume(bootstrap, [sink], isolation="read_committed")
    )
    counts = Counter(r.value for r in got)
    assert set(counts) == {b"out-%d" % i for i in range(RECORDS)}
    assert not [v for v, n in counts.items() if n > 1], "an input transformed twice"
    # the aborted attempts' outputs are in the log all the same
    everything = await read_to_end(bootstrap, sink, PARTITIONS, "read_uncommitted")
    assert len(everything) == RECORDS + aborted
    # and the group's offsets, committed with the transactions, are at the end of the input
    async with AdminClient(bootstrap) as admin:
        offsets = (await admin.list_group_offsets(group)).raise_for_errors()
    ends = await end_offsets(bootstrap, source, PARTITIONS)
    assert {tp: o.offset for tp, o in offsets.items() if o is not None} == ends
