"""Fetching from the closest replica (KIP-392) on three Apache Kafka nodes in three racks with
the rack-aware replica selector: a consumer in another rack than the leader's is sent by the
leader to the follower in its own rack and reads every record from there."""

from __future__ import annotations

import time
from typing import Any

import anyio
import pytest
from _recording import RecordingClient

from krafka import AdminClient, Consumer, NewTopic, Producer, TopicPartition

pytestmark = [pytest.mark.anyio, pytest.mark.broker, pytest.mark.timeout(90)]


@pytest.mark.one_backend
async def test_records_come_from_the_replica_in_the_clients_rack(
    kafka_cluster_factory: Any,
) -> None:
    cluster = kafka_cluster_factory(3, racks=True)
    topic = f"racks-{time.time_ns()}"
    tp = TopicPartition(topic, 0)
    async with AdminClient(cluster.bootstrap_servers) as admin:
        (await admin.create_topics([NewTopic(topic, 1, 3)])).raise_for_errors()
    async with Producer(cluster.bootstrap_servers, acks="all") as producer:
        for i in range(50):
            await producer.send(topic, b"%d" % i, partition=0)
        await producer.flush()
    client = RecordingClient(cluster.bootstrap_servers)
    await client.start()
    try:
        leader = (await client.leader_for(topic, 0)).node_id
        near = next(n for n in (1, 2, 3) if n != leader)
        async with Consumer(
            client=client,
            auto_offset_reset="earliest",
            fetch_max_wait=0.1,
            client_rack=f"rack-{near}",
        ) as consumer:
            await consumer.assign([tp])
            got: list[bytes] = []
            with anyio.fail_after(30):
                while len(got) < 50:
                    got += [r.value for r in await consumer.poll(timeout=0.5)]
        assert got == [b"%d" % i for i in range(50)]
        first = client.fetches[0]
        assert first.node_id == leader and first.request.rack_id == f"rack-{near}"
        (answer,) = [p for t in first.response.responses for p in t.partitions]
        assert answer.preferred_read_replica == near
        assert {f.node_id for f in client.fetches if f.records()} == {near}
    finally:
        await client.close()
