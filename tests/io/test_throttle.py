"""KIP-219 on Apache Kafka: a client over its byte-rate quota gets `throttle_time_ms` in its
answers; krafka holds its next requests on that connection until the throttle ends, reports
the throttle in `metrics()` (Java's produce/fetch-throttle-time-avg/max), and a consumer keeps
its group membership through fetch throttles longer than its session timeout (heartbeats go on
the control lane, which is never throttled)."""

from __future__ import annotations

import time
from typing import Any

import anyio
import pytest

from krafka import AdminClient, Consumer, NewTopic, Producer
from krafka.sansio.admin.group_description import GroupDescription
from krafka.sansio.admin.groups import GroupState

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(90)]

RATE = 10240  # bytes/s; Kafka measures over 11 one-second windows, at least 10 s elapsed


def _unique(prefix: str) -> str:
    return f"{prefix}-{time.monotonic_ns() % 10**10}"


async def _quota(admin: AdminClient, client_id: str, key: str) -> None:
    entity = {"client-id": client_id}
    (await admin.alter_client_quotas([(entity, {key: RATE})])).raise_for_errors()
    with anyio.fail_after(15):
        while not await admin.describe_client_quotas(entity):
            await anyio.sleep(0.1)


async def test_a_throttled_producer_waits_and_reports_it(kafka_cluster: Any) -> None:
    topic, client_id = _unique("thr-p"), _unique("slow-producer")
    async with AdminClient(kafka_cluster.bootstrap_servers, default_api_timeout=15.0) as admin:
        await admin.create_topics([NewTopic(topic, 1)])
        await _quota(admin, client_id, "producer_byte_rate")
    value = b"x" * 1000
    async with Producer(
        bootstrap_servers=kafka_cluster.bootstrap_servers,
        client_id=client_id,
        linger=0.05,
        batch_size=1 << 20,
    ) as producer:
        pending = [await producer.send(topic, value) for _ in range(125)]  # one ~126 kB batch
        for handle in pending:
            await handle
        answered = anyio.current_time()
        throttle = producer.metrics().produce_throttle_time_max
        assert throttle > 1.0  # ~126 kB over 10 s at 10 kB/s: ~2.5 s
        connections = producer.metrics()["connection-metrics"]
        assert connections["produce-throttle-time-max"] == pytest.approx(throttle)
        await producer.send_and_wait(topic, b"after")
        assert anyio.current_time() - answered >= throttle - 0.5
        metrics = producer.metrics()
        assert 0 < metrics.produce_throttle_time_avg <= metrics.produce_throttle_time_max


@pytest.mark.one_backend
async def test_a_throttled_member_stays_in_its_group(kafka_cluster: Any) -> None:
    """One ~180 kB batch: Kafka returns a first batch whole (KIP-74) and, over the quota,
    answers each fetch empty with a ~7.5 s throttle, longer than the 6 s session timeout."""
    topic, group, client_id = _unique("thr-c"), _unique("thr-g"), _unique("slow-consumer")
    async with AdminClient(kafka_cluster.bootstrap_servers, default_api_timeout=15.0) as admin:
        await admin.create_topics([NewTopic(topic, 1)])
        await _quota(admin, client_id, "consumer_byte_rate")
        async with Producer(
            bootstrap_servers=kafka_cluster.bootstrap_servers, linger=0.05, batch_size=1 << 20
        ) as producer:
            for _ in range(180):
                await producer.send(topic, b"y" * 1000)
            await producer.flush()
        async with Consumer(
            bootstrap_servers=kafka_cluster.bootstrap_servers,
            client_id=client_id,
            group_id=group,
            auto_offset_reset="earliest",
            enable_auto_commit=False,
            session_timeout=6.0,
            heartbeat_interval=1.0,
        ) as consumer:
            await consumer.subscribe([topic])
            with anyio.fail_after(30):
                while consumer.metrics()["fetch_throttle_time_max"] < 6.5:
                    await consumer.poll(timeout=0.5)
            joined = consumer.group_metadata()
            throttled = consumer.metrics()
            connections = throttled["connection-metrics"]
            assert connections["fetch-throttle-time-max"] == throttled["fetch_throttle_time_max"]
            await anyio.sleep(consumer.metrics()["fetch_throttle_time_max"] + 1.0)
            await consumer.poll(timeout=0.1)
            assert consumer.group_metadata() == joined
            described = (await admin.describe_groups([group]))[group]
            assert isinstance(described, GroupDescription)
            assert described.state is GroupState.STABLE
            assert [m.member_id for m in described.members] == [joined.member_id]
