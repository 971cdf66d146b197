"""Classic groups beyond two krafka members: kafka-python in the group (range), a static
member restarting without a rebalance, and coordinator faults on the librdkafka mock cluster."""

from __future__ import annotations

import threading
import time
from collections import Counter
from typing import Any

import anyio
import pytest
from _groups import make_topic, member

from krafka import Producer, TopicPartition
from krafka.protocol.error_codes import ErrorCode
from krafka.protocol.messages import ApiKey

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]


@pytest.mark.broker
async def test_mixed_group_with_kafka_python_range(broker: Any) -> None:
    from kafka import KafkaConsumer
    from kafka.coordinator.assignors.range import RangePartitionAssignor

    topic = await make_topic(broker.bootstrap_servers, 4, 400)
    group = f"kp-{time.time_ns()}"
    theirs: list[bytes] = []
    their_partitions: set[int] = set()
    stop = threading.Event()

    def run_kafka_python() -> None:
        consumer = KafkaConsumer(
            topic,
            bootstrap_servers=broker.bootstrap_servers,
            group_id=group,
            partition_assignment_strategy=[RangePartitionAssignor],
            enable_auto_commit=False,
            auto_offset_reset="earliest",
            session_timeout_ms=6000,
            heartbeat_interval_ms=500,
            fetch_max_wait_ms=100,
        )
        while not stop.is_set():
            for tp, messages in consumer.poll(timeout_ms=100).items():
                their_partitions.add(tp.partition)
                theirs.extend(m.value for m in messages)
                consumer.commit()
        consumer.close()

    thread = threading.Thread(target=run_kafka_python, daemon=True)
    thread.start()
    mine: list[Any] = []
    try:
        async with member(broker.bootstrap_servers, group) as consumer:
            await consumer.subscribe([topic])
            with anyio.fail_after(60):
                while len(mine) + len(theirs) < 400 or not consumer.assignment():
                    records = await consumer.poll(timeout=0.2)
                    mine.extend(records)
                    if records:
                        await consumer.commit()
            ours = {tp.partition for tp in consumer.assignment()}
            assert (ours and ours.isdisjoint(their_partitions)) or not their_partitions
    finally:
        stop.set()
        await anyio.to_thread.run_sync(thread.join, 20)
    values = Counter([r.value for r in mine] + theirs)
    assert set(values) == {b"%d" % i for i in range(400)}
    assert all(c == 1 for c in values.values())


@pytest.mark.one_backend
@pytest.mark.broker
async def test_static_member_restarts_without_a_rebalance(broker: Any) -> None:
    topic = await make_topic(broker.bootstrap_servers, 4, 40)
    group = f"static-{time.time_ns()}"
    other = member(broker.bootstrap_servers, group)
    async with other:
        await other.subscribe([topic])
        static = member(broker.bootstrap_servers, group, group_instance_id="worker-1")
        async with static:
            await static.subscribe([topic])
            with anyio.fail_after(40):
                while not (static.assignment() and other.assignment()):
                    await static.poll(timeout=0.1)
                    await other.poll(timeout=0.1)
            before = static.assignment()
            generation = other.group_metadata().generation_id
        # closed without LeaveGroup: back within the session timeout, same assignment
        again = member(broker.bootstrap_servers, group, group_instance_id="worker-1")
        async with again:
            await again.subscribe([topic])
            with anyio.fail_after(20):
                while not again.assignment():
                    await again.poll(timeout=0.1)
                    await other.poll(timeout=0.1)
            assert again.assignment() == before
            for _ in range(10):
                await other.poll(timeout=0.1)
            assert other.group_metadata().generation_id == generation


async def test_coordinator_faults_on_the_mock_cluster(make_mock_cluster: Any) -> None:
    cluster = make_mock_cluster(3, topics={"orders": 6})
    cluster.set_group_initial_rebalance_delay(0)
    topic = "orders"
    async with Producer(cluster.bootstrap_servers) as producer:
        for i in range(300):
            await producer.send(topic, b"%d" % i, partition=i % 6)
        await producer.flush()
    group = "faults"
    cluster.push_request_errors(
        ApiKey.JOIN_GROUP, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, ErrorCode.NOT_COORDINATOR
    )
    cluster.push_request_errors(ApiKey.SYNC_GROUP, ErrorCode.NOT_COORDINATOR)
    seen: list[Any] = []
    async with member(cluster.bootstrap_servers, group) as consumer:
        await consumer.subscribe([topic])
        with anyio.fail_after(60):
            while len(seen) < 150:
                seen += await consumer.poll(timeout=0.2)
        cluster.push_request_errors(
            ApiKey.OFFSET_COMMIT, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, ErrorCode.NOT_COORDINATOR
        )
        await consumer.commit()
        cluster.set_coordinator("group", group, 2)
        cluster.push_request_errors(ApiKey.HEARTBEAT, ErrorCode.NOT_COORDINATOR)
        with anyio.fail_after(60):
            while len(seen) < 300:
                seen += await consumer.poll(timeout=0.2)
        await consumer.commit()
        committed = await consumer.committed(
            [TopicPartition(topic, p) for p in range(6)], timeout=20
        )
    assert Counter(r.value for r in seen) == Counter(b"%d" % i for i in range(300))
    assert sum(om.offset for om in committed.values() if om is not None) == 300
