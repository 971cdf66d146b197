"""The standalone Consumer on librdkafka's mock cluster: several brokers, leader moves, deleted
records, brokers going down, KIP-392 follower fetching, injected errors, ListOffsets."""

from __future__ import annotations

import time
from collections import Counter
from typing import Any

import anyio
import pytest
from _recording import RecordingClient

from krafka import Consumer, ConsumerRecord, Producer, TopicPartition
from krafka.errors import KafkaTimeoutError
from krafka.protocol.error_codes import ErrorCode
from krafka.protocol.messages import ApiKey
from krafka.testing.mockcluster import MockCluster

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(90)]

TOPIC = "orders"


async def produce(cluster: MockCluster, count: int, partitions: int) -> None:
    async with Producer(cluster.bootstrap_servers, linger=0.002) as producer:
        for i in range(count):
            await producer.send(TOPIC, b"%d" % i, key=b"%d" % i, partition=i % partitions)
        await producer.flush()


async def consume(consumer: Consumer, count: int, timeout: float = 30.0) -> list[ConsumerRecord]:
    got: list[ConsumerRecord] = []
    with anyio.fail_after(timeout):
        while len(got) < count:
            got += await consumer.poll(timeout=1.0)
    return got


def exactly_once(records: list[ConsumerRecord], count: int) -> None:
    seen = Counter(r.value for r in records)
    assert seen == Counter(b"%d" % i for i in range(count))


async def test_one_fetch_per_broker_per_round(make_mock_cluster: Any) -> None:
    cluster = make_mock_cluster(3, topics={TOPIC: 12})
    await produce(cluster, 1200, 12)
    cluster.start_request_tracking()
    client = RecordingClient(cluster.bootstrap_servers)
    async with (
        client,
        Consumer(auto_offset_reset="earliest", fetch_max_wait=0.1, client=client) as consumer,
    ):
        await consumer.assign([TopicPartition(TOPIC, p) for p in range(12)])
        exactly_once(await consume(consumer, 1200), 1200)
        fetches = [r for r in cluster.requests() if r.api_key == ApiKey.FETCH]
    by_broker = Counter(r.broker_id for r in fetches)
    assert set(by_broker) <= {1, 2, 3} and len(by_broker) >= 2
    # one Fetch per broker at a time: the next one leaves once the answer came (it may follow
    # it within a millisecond, so the broker's arrival times cannot tell)
    assert client.most_in_flight == 1


async def test_leader_moves_mid_consume_no_loss_no_duplicates(make_mock_cluster: Any) -> None:
    cluster = make_mock_cluster(3, topics={TOPIC: 3})
    await produce(cluster, 600, 3)
    async with Consumer(
        cluster.bootstrap_servers,
        auto_offset_reset="earliest",
        fetch_max_wait=0.05,
        max_partition_fetch_bytes=2048,
        metadata_max_age=1.0,
    ) as consumer:
        await consumer.assign([TopicPartition(TOPIC, p) for p in range(3)])
        got = await consume(consumer, 100)
        for p in range(3):
            cluster.set_partition_leader(TOPIC, p, (p + 1) % 3 + 1)
        got += await consume(consumer, 600 - len(got))
        exactly_once(got, 600)


async def test_deleted_records_reset_by_policy(make_mock_cluster: Any) -> None:
    cluster = make_mock_cluster(1, topics={TOPIC: 1})
    await produce(cluster, 100, 1)
    tp = TopicPartition(TOPIC, 0)
    async with Consumer(
        cluster.bootstrap_servers, auto_offset_reset="earliest", fetch_max_wait=0.05
    ) as consumer:
        await consumer.assign([tp])
        await consumer.seek(tp, 10)
        cluster.delete_records(TOPIC, 0, 50)
        got = await consume(consumer, 50)
        assert [r.offset for r in got] == list(range(50, 100))
        assert await consumer.beginning_offsets([tp]) == {tp: 50}


async def test_broker_down_then_up_resumes(make_mock_cluster: Any) -> None:
    cluster = make_mock_cluster(2, topics={TOPIC: 2})
    cluster.set_partition_leader(TOPIC, 0, 1)
    cluster.set_partition_leader(TOPIC, 1, 2)
    await produce(cluster, 200, 2)
    async with Consumer(
        cluster.bootstrap_servers,
        auto_offset_reset="earliest",
        fetch_max_wait=0.05,
        reconnect_backoff=None,
    ) as consumer:
        await consumer.assign([TopicPartition(TOPIC, p) for p in range(2)])
        got = await consume(consumer, 200)
        cluster.broker_down(2)
        async with Producer(cluster.bootstrap_servers) as producer:
            for i in range(200, 300):
                await producer.send(TOPIC, b"%d" % i, key=b"%d" % i, partition=0)
        got += await consume(consumer, 100)
        cluster.broker_up(2)
        async with Producer(cluster.bootstrap_servers) as producer:
            for i in range(300, 400):
                await producer.send(TOPIC, b"%d" % i, key=b"%d" % i, partition=1)
        got += await consume(consumer, 100)
        exactly_once(got, 400)


async def test_follower_fetching_with_client_rack(make_mock_cluster: Any) -> None:
    cluster = make_mock_cluster(3, topics={TOPIC: 1})
    for broker, rack in ((1, "r1"), (2, "r2"), (3, "r3")):
        cluster.set_broker_rack(broker, rack)
    cluster.set_partition_leader(TOPIC, 0, 1)
    cluster.set_partition_follower(TOPIC, 0, 3)
    await produce(cluster, 300, 1)
    cluster.start_request_tracking()
    async with Consumer(
        cluster.bootstrap_servers,
        auto_offset_reset="earliest",
        fetch_max_wait=0.05,
        client_rack="r3",
    ) as consumer:
        await consumer.assign([TopicPartition(TOPIC, 0)])
        exactly_once(await consume(consumer, 300), 300)
        async with Producer(cluster.bootstrap_servers) as producer:
            for i in range(300, 400):
                await producer.send(TOPIC, b"%d" % i, key=b"%d" % i, partition=0)
        got = await consume(consumer, 100)
        assert [r.offset for r in got] == list(range(300, 400))
    fetch_brokers = Counter(r.broker_id for r in cluster.requests() if r.api_key == ApiKey.FETCH)
    assert fetch_brokers[3] > 0, fetch_brokers


async def test_injected_retriable_errors_are_retried(make_mock_cluster: Any) -> None:
    cluster = make_mock_cluster(1, topics={TOPIC: 1})
    await produce(cluster, 50, 1)
    cluster.push_request_errors(
        ApiKey.LIST_OFFSETS, ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.LEADER_NOT_AVAILABLE
    )
    cluster.push_request_errors(
        ApiKey.FETCH,
        ErrorCode.NOT_LEADER_OR_FOLLOWER,
        ErrorCode.UNKNOWN_LEADER_EPOCH,
        ErrorCode.REQUEST_TIMED_OUT,
    )
    started = time.monotonic()
    async with Consumer(
        cluster.bootstrap_servers, auto_offset_reset="earliest", fetch_max_wait=0.05
    ) as consumer:
        await consumer.assign([TopicPartition(TOPIC, 0)])
        got = await consume(consumer, 50)
    assert [r.offset for r in got] == list(range(50))
    assert time.monotonic() - started < 20


async def test_list_offsets_latest_and_by_timestamp(make_mock_cluster: Any) -> None:
    cluster = make_mock_cluster(2, topics={TOPIC: 2})
    await produce(cluster, 100, 2)
    tps = [TopicPartition(TOPIC, p) for p in range(2)]
    async with Consumer(cluster.bootstrap_servers, auto_offset_reset="latest") as consumer:
        assert await consumer.end_offsets(tps) == dict.fromkeys(tps, 50)
        assert await consumer.beginning_offsets(tps) == dict.fromkeys(tps, 0)
        await consumer.assign(tps)
        assert await consumer.position(tps[0]) == 50
        assert await consumer.poll(timeout=0.3) == []
        async with Producer(cluster.bootstrap_servers) as producer:
            await producer.send_and_wait(TOPIC, b"new", partition=1)
        got = await consume(consumer, 1)
        assert (got[0].partition, got[0].offset, got[0].value) == (1, 50, b"new")
        # The mock answers every lookup by time with -1 (and Tansu 0.6 with wrong offsets):
        # lookups by time are tested on Apache Kafka (test_offset_lookups_and_resets.py).
        far = await consumer.offsets_for_times({tps[0]: int(time.time() * 1000) + 3_600_000})
        assert far[tps[0]] is None


@pytest.mark.one_backend
async def test_a_commit_answered_after_its_timeout_is_not_reported_as_not_made(
    make_mock_cluster: Any,
) -> None:
    """The coordinator writes the offsets and answers 5.6 s later, after the caller's wait
    (timeout + 5 s): the error must say the commit may still be made, and it is."""
    cluster = make_mock_cluster(3, topics={TOPIC: 1})
    cluster.set_coordinator("group", "slow", 1)
    tp = TopicPartition(TOPIC, 0)
    async with Consumer(cluster.bootstrap_servers, group_id="slow") as consumer:
        await consumer.assign([tp])
        cluster.push_broker_request_error_rtts(1, ApiKey.OFFSET_COMMIT, [(ErrorCode.NONE, 5600)])
        with pytest.raises(KafkaTimeoutError, match=r"may yet be committed.*safe to commit"):
            await consumer.commit({tp: 7}, timeout=0.2)
        committed = (await consumer.committed([tp]))[tp]
        assert committed is not None and committed.offset == 7
