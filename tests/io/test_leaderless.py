"""A partition without a leader (librdkafka's mock cluster, requests counted there): clients ask
for metadata a few times a second with a growing backoff, not once per round trip, and the
partitions that have a leader keep working."""

from __future__ import annotations

from collections import Counter
from typing import Any

import anyio
import pytest

from krafka import Consumer, Producer, TopicPartition
from krafka.errors import KafkaTimeoutError
from krafka.protocol.messages import ApiKey
from krafka.testing.mockcluster import MockCluster

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]

TOPIC = "t"
SECONDS = 1.5
#: Metadata requests allowed in SECONDS: the refresh backoff (100 ms doubling to 1 s) allows
#: about 5; a storm sent over a thousand a second.
BOUND = 12


def metadata_requests(cluster: MockCluster) -> int:
    return Counter(r.api_key for r in cluster.requests())[ApiKey.METADATA]


async def test_the_producer_backs_off_metadata_and_delivers_elsewhere(
    make_mock_cluster: Any,
) -> None:
    cluster = make_mock_cluster(3, topics={TOPIC: 2})
    cluster.set_partition_leader(TOPIC, 0, -1)
    async with Producer(cluster.bootstrap_servers, linger=0, delivery_timeout=SECONDS) as producer:
        cluster.start_request_tracking()
        stuck = await producer.send(TOPIC, b"nowhere", partition=0)
        delivered = await producer.send_and_wait(TOPIC, b"somewhere", partition=1)
        with pytest.raises(KafkaTimeoutError):
            await stuck
    assert delivered.partition == 1 and delivered.offset == 0
    assert metadata_requests(cluster) <= BOUND


@pytest.mark.parametrize("position", ["seek", "reset"])
async def test_the_consumer_backs_off_metadata_and_reads_the_others(
    make_mock_cluster: Any, position: str
) -> None:
    cluster = make_mock_cluster(3, topics={TOPIC: 2})
    async with Producer(cluster.bootstrap_servers, linger=0) as producer:
        for i in range(5):
            await producer.send(TOPIC, b"%d" % i, partition=1)
        await producer.flush()
    cluster.set_partition_leader(TOPIC, 0, -1)
    async with Consumer(
        cluster.bootstrap_servers, auto_offset_reset="earliest", fetch_max_wait=0.1
    ) as consumer:
        partitions = [TopicPartition(TOPIC, 0), TopicPartition(TOPIC, 1)]
        await consumer.assign(partitions)
        if position == "seek":
            for tp in partitions:
                await consumer.seek(tp, 0)
        cluster.start_request_tracking()
        got: list[bytes] = []
        with anyio.move_on_after(SECONDS):
            while True:
                got += [r.value for r in await consumer.poll(0.2)]
    assert got == [b"%d" % i for i in range(5)]
    assert metadata_requests(cluster) <= BOUND
