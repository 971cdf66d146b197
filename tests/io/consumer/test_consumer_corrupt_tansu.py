"""Corrupt data in a live partition: every poll that reaches it raises a CorruptRecordError naming
it, the other partitions are still read, and a seek past it goes on.

Tansu, because it stores produced bytes as given (Apache Kafka checks the CRC on produce, so it
can never hold a corrupt batch); a transaction marker with a bad CRC is the case that used to
stop a read_committed consumer without a word.
"""

from __future__ import annotations

import struct
import uuid
from typing import Any

import anyio
import pytest

from krafka import Consumer, TopicPartition
from krafka.codec import Record, encode_batch
from krafka.errors import CorruptRecordError
from krafka.io.client import KafkaClient
from krafka.protocol.messages import ProduceRequest

pytestmark = [pytest.mark.anyio, pytest.mark.broker, pytest.mark.timeout(60)]


def bad_marker(offset: int = 0) -> bytes:
    key, value = struct.pack(">hh", 0, 1), struct.pack(">hi", 0, 0)
    batch = bytearray(
        encode_batch([Record(0, 1, key, value, [])], "none", offset, 7, 0, -1, True, control=True)
    )
    batch[-1] ^= 0xFF  # the CRC no longer matches
    return bytes(batch)


def data(*values: bytes) -> bytes:
    return encode_batch([Record(i, 1, None, v, []) for i, v in enumerate(values)], "none", 0)


async def produce_raw(client: KafkaClient, topic: str, partition: int, payload: bytes) -> None:
    part = ProduceRequest.TopicProduceData.PartitionProduceData(index=partition, records=payload)
    request = ProduceRequest(
        acks=-1,
        timeout_ms=5000,
        topic_data=[ProduceRequest.TopicProduceData(name=topic, partition_data=[part])],
    )
    response = await client.send_to_leader(topic, partition, request)
    assert response.responses[0].partition_responses[0].error_code == 0


@pytest.mark.parametrize("isolation", ["read_committed", "read_uncommitted"])
async def test_a_corrupt_marker_raises_and_the_other_partition_is_read(
    tansu: Any, isolation: str
) -> None:
    topic = f"corrupt-{uuid.uuid4().hex[:8]}"
    async with KafkaClient(tansu.bootstrap_servers) as client:
        await client.refresh_metadata([topic])
        await produce_raw(client, topic, 0, bad_marker())
        await produce_raw(client, topic, 1, data(b"a", b"b", b"c"))
        async with Consumer(
            tansu.bootstrap_servers,
            auto_offset_reset="earliest",
            isolation_level=isolation,
            fetch_max_wait=0.1,
        ) as consumer:
            bad, good = TopicPartition(topic, 0), TopicPartition(topic, 1)
            await consumer.assign([bad, good])
            values: list[bytes] = []
            errors: list[CorruptRecordError] = []
            with anyio.move_on_after(1.0):
                while True:
                    try:
                        values += [r.value for r in await consumer.poll(0.1)]
                    except CorruptRecordError as exc:
                        errors.append(exc)  # and poll again at once: others still run
            assert values == [b"a", b"b", b"c"]
            assert errors and all(f"{topic}-0" in str(e) for e in errors)
            await consumer.seek(bad, 1)
            await produce_raw(client, topic, 0, data(b"after"))
            with anyio.fail_after(10):
                while not (got := await consumer.poll(0.2)):
                    pass
            assert [(r.partition, r.value) for r in got] == [(0, b"after")]
