"""A consume -> transform -> produce worker, run as its own process by the exactly-once test
so that it can be killed with SIGKILL at any moment.

Usage: eos_worker.py BOOTSTRAP INPUT OUTPUT GROUP TRANSACTIONAL_ID [asyncio|trio]

Each poll's records (up to 25) become one transaction: the transformed records and the input
offsets (`send_offsets_to_transaction` with the consumer's group metadata) commit together or
not at all. Each transaction "works" 20 ms between its sends and its commit, so a kill most
likely lands inside one. Prints `committed N` after every transaction; runs until killed.
"""

from __future__ import annotations

import sys

import anyio

from krafka import Consumer, Producer
from krafka.structs import OffsetAndMetadata, TopicPartition


async def work(bootstrap: str, source: str, sink: str, group: str, txn_id: str) -> None:
    consumer = Consumer(
        bootstrap,
        group_id=group,
        group_instance_id=txn_id,  # a restarted worker takes its predecessor's place at once
        isolation_level="read_committed",
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        session_timeout=6.0,
        heartbeat_interval=0.5,
        fetch_max_wait=0.1,
    )
    producer = Producer(bootstrap, transactional_id=txn_id, linger=0.005)
    async with consumer, producer:
        await consumer.subscribe([source])
        committed = 0
        while True:
            records = await consumer.poll(timeout=0.5, max_records=25)
            if not records:
                continue
            producer.begin_transaction()
            positions: dict[TopicPartition, OffsetAndMetadata] = {}
            for record in records:
                await producer.send(sink, b"out-" + record.value, key=record.key)
                tp = TopicPartition(record.topic, record.partition)
                positions[tp] = OffsetAndMetadata(record.offset + 1)
            await anyio.sleep(0.02)
            await producer.send_offsets_to_transaction(positions, consumer.group_metadata())
            await producer.commit_transaction()
            committed += len(records)
            print(f"committed {committed}", flush=True)


if __name__ == "__main__":
    backend = sys.argv[6] if len(sys.argv) > 6 else "asyncio"
    anyio.run(work, *sys.argv[1:6], backend=backend)
