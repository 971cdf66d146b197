"""The librdkafka mock-cluster harness: every partition, broker, error-injection and tracking
control, each observed from outside by krafka's KafkaClient speaking the wire protocol (or by
plain sockets), under asyncio and trio."""

from __future__ import annotations

import gc
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest

from krafka.codec import Record
from krafka.demo import fetch_request, produce
from krafka.errors import KafkaConnectionError
from krafka.io.client import KafkaClient
from krafka.protocol.error_codes import ErrorCode
from krafka.protocol.messages import (
    ApiKey,
    ApiVersionsRequest,
    FetchRequest,
    FindCoordinatorRequest,
    GetTelemetrySubscriptionsRequest,
    ListOffsetsRequest,
    MetadataRequest,
)
from krafka.sansio.coordinator import CoordinatorType
from krafka.testing.mockcluster import (
    ALL_BROKERS,
    BROKEN_VERSIONS,
    MockCluster,
    MockClusterError,
    MockFault,
    MockRequest,
)

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]

#: What librdkafka 2.16.0's mock advertises (BROKER.md's list, probed again here).
ADVERTISED = {
    ApiKey.PRODUCE: (0, 10),
    ApiKey.FETCH: (0, 16),
    ApiKey.LIST_OFFSETS: (0, 7),
    ApiKey.METADATA: (0, 13),
    ApiKey.OFFSET_COMMIT: (0, 9),
    ApiKey.OFFSET_FETCH: (0, 6),
    ApiKey.FIND_COORDINATOR: (0, 3),
    ApiKey.JOIN_GROUP: (0, 6),
    ApiKey.HEARTBEAT: (0, 5),
    ApiKey.LEAVE_GROUP: (0, 4),
    ApiKey.SYNC_GROUP: (0, 4),
    ApiKey.API_VERSIONS: (0, 2),
    ApiKey.INIT_PRODUCER_ID: (0, 4),
    ApiKey.OFFSET_FOR_LEADER_EPOCH: (2, 2),
    ApiKey.ADD_PARTITIONS_TO_TXN: (0, 1),
    ApiKey.ADD_OFFSETS_TO_TXN: (0, 1),
    ApiKey.END_TXN: (0, 1),
    ApiKey.TXN_OFFSET_COMMIT: (0, 3),
    ApiKey.CONSUMER_GROUP_HEARTBEAT: (1, 1),
    ApiKey.GET_TELEMETRY_SUBSCRIPTIONS: (0, 0),
    ApiKey.PUSH_TELEMETRY: (0, 0),
    ApiKey.SHARE_GROUP_HEARTBEAT: (1, 1),
    ApiKey.SHARE_FETCH: (1, 1),
    ApiKey.SHARE_ACKNOWLEDGE: (1, 1),
}


def _topic() -> str:
    return f"t-{uuid.uuid4().hex[:8]}"


@asynccontextmanager
async def _client(cluster: MockCluster, **kwargs: Any) -> AsyncIterator[KafkaClient]:
    options: dict[str, Any] = {"retries": 0, "request_timeout": 10.0, **kwargs}
    async with KafkaClient(cluster.bootstrap_servers, **options) as client:
        yield client


async def _metadata(client: KafkaClient, *topics: str, node_id: int | None = None) -> Any:
    request = MetadataRequest(topics=[MetadataRequest.MetadataRequestTopic(name=t) for t in topics])
    return await client.send(request, node_id=node_id)


def _leaders(response: Any, topic: str) -> dict[int, int]:
    (entry,) = [t for t in response.topics if t.name == topic]
    return {p.partition_index: p.leader_id for p in entry.partitions}


async def _fetch_partition(
    client: KafkaClient, topic: str, partition: int, offset: int, node_id: int
) -> Any:
    await client.refresh_metadata([topic])
    version = await client.api_version(ApiKey.FETCH, node_id)
    request = fetch_request(client.metadata, topic, partition, offset, version)
    response = await client.send(request, node_id=node_id)
    return response.responses[0].partitions[0]


async def _produce(client: KafkaClient, topic: str, partition: int, n: int) -> int:
    records = [Record(value=b"v%d" % i, timestamp=int(time.time() * 1000)) for i in range(n)]
    return await produce(client, topic, partition, records)


# -- lifecycle ---------------------------------------------------------------------------------


def test_lifecycle_close_is_idempotent_and_guards_every_control() -> None:
    cluster = MockCluster(2)
    host, port = cluster.brokers[1].rsplit(":", 1)
    socket.create_connection((host, int(port)), timeout=2).close()
    cluster.close()
    cluster.close()
    assert cluster.closed and "closed" in repr(cluster)
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection((host, int(port)), timeout=2)
    with pytest.raises(MockClusterError, match="closed"):
        cluster.create_topic("x", 1)
    with pytest.raises(MockClusterError, match="closed"):
        cluster.requests()


def test_garbage_collected_cluster_is_destroyed() -> None:
    cluster = MockCluster(1)
    host, port = cluster.brokers[1].rsplit(":", 1)
    del cluster
    gc.collect()
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection((host, int(port)), timeout=2)


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="counts threads in /proc")
def test_close_joins_every_librdkafka_thread() -> None:
    def threads() -> int:
        return len(os.listdir("/proc/self/task"))

    before = threads()
    cluster = MockCluster(3, topics={"t": 3})
    assert threads() > before
    cluster.close()
    assert threads() <= before + 1  # at most a mock-waker thread still finishing its wait
    time.sleep(0.1)
    assert threads() == before


def test_interrupted_run_destroys_open_clusters_at_exit() -> None:
    script = textwrap.dedent(
        """
        import time
        from krafka.testing.mockcluster import MockCluster
        keep = [MockCluster(3, topics={"t": 3}, config={"debug": "mock"}) for _ in range(3)]
        keep[0].set_partition_leader("t", 0, 2)
        raise KeyboardInterrupt
        """
    )
    started = time.monotonic()
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60
    )
    assert "KeyboardInterrupt" in result.stderr and "Assertion" not in result.stderr
    assert result.stderr.count("Destroying cluster") == 3
    assert result.returncode in (1, -2) and time.monotonic() - started < 20  # -2: SIGINT


def test_bad_arguments_fail_cleanly() -> None:
    with pytest.raises(ValueError):
        MockCluster(0)
    with pytest.raises(MockClusterError, match=r"no\.such\.property"):
        MockCluster(1, config={"no.such.property": "1"})


def test_creating_clusters_is_cheap() -> None:
    started = time.perf_counter()
    for _ in range(20):
        with MockCluster(3, topics={"a": 6}) as cluster:
            cluster.set_partition_leader("a", 0, 2)
    per_cluster = (time.perf_counter() - started) / 20
    assert per_cluster < 0.25, f"{per_cluster * 1000:.1f} ms per cluster"


def test_destroying_under_connected_clients_does_not_crash() -> None:
    """A confluent-kafka producer and a krafka client stay connected while the cluster is
    destroyed; both then see connection errors, and the interpreter exits normally."""
    script = textwrap.dedent(
        """
        import anyio, confluent_kafka
        from krafka.errors import KrafkaError
        from krafka.io.client import KafkaClient
        from krafka.testing.mockcluster import MockCluster

        async def main():
            cluster = MockCluster(3, topics={"t": 3})
            producer = confluent_kafka.Producer(
                {"bootstrap.servers": cluster.bootstrap_servers, "log_level": 0}
            )
            producer.produce("t", b"x")
            assert producer.flush(10) == 0
            async with KafkaClient(cluster.bootstrap_servers, retries=0,
                                   request_timeout=2, connect_timeout=1) as client:
                await client.refresh_metadata(["t"])
                cluster.close()
                try:
                    await client.refresh_metadata(["t"])
                except KrafkaError as exc:
                    print("krafka:", type(exc).__name__)
            producer.produce("t", b"y")
            producer.flush(0.5)
            print("done")

        anyio.run(main)
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert "krafka: KafkaConnectionError" in result.stdout
    assert "done" in result.stdout


# -- what it advertises, topics, partitions ----------------------------------------------------


async def _advertised(cluster: MockCluster, version: int) -> dict[ApiKey, tuple[int, int]]:
    async with _client(cluster) as client:
        response = await client.send(ApiVersionsRequest(), version=version)
    assert response.error_code == ErrorCode.NONE
    return {ApiKey(k.api_key): (k.min_version, k.max_version) for k in response.api_keys}


async def test_api_versions_match_the_documented_table(
    make_mock_cluster: Callable[..., MockCluster],
) -> None:
    raw = make_mock_cluster(1, fix_versions=False)
    assert await _advertised(raw, 0) == await _advertised(raw, 2) == ADVERTISED
    fixed = await _advertised(make_mock_cluster(1), 2)
    assert fixed == {**ADVERTISED, **{k: (0, v) for k, v in BROKEN_VERSIONS.items()}}


async def test_brokers_and_topics(mock_cluster: MockCluster) -> None:
    topic, replicated = _topic(), _topic()
    mock_cluster.create_topic(topic, 6)
    mock_cluster.create_topic(replicated, 2, replication=3)
    with pytest.raises(MockClusterError) as info:
        mock_cluster.create_topic(topic, 6)
    assert info.value.error_code is ErrorCode.TOPIC_ALREADY_EXISTS
    async with _client(mock_cluster) as client:
        response = await _metadata(client, topic, replicated, "auto-created")
        brokers = {b.node_id: f"{b.host}:{b.port}" for b in response.brokers}
        assert brokers == mock_cluster.brokers
        assert _leaders(response, topic) == {p: p % 3 + 1 for p in range(6)}
        assert sorted(_leaders(response, "auto-created")) == [0, 1, 2, 3]
        (entry,) = [t for t in response.topics if t.name == replicated]
        assert all(sorted(p.replica_nodes) == [1, 2, 3] for p in entry.partitions)
        assert all(p.leader_id in (1, 2, 3) for p in entry.partitions)
        mock_cluster.delete_topic(topic)
        response = await client.send(
            MetadataRequest(
                topics=[MetadataRequest.MetadataRequestTopic(name=topic)],
                allow_auto_topic_creation=False,
            )
        )
        assert response.topics[0].error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION


async def test_set_partition_leader_moves_leader_and_bumps_epoch(
    mock_cluster: MockCluster,
) -> None:
    topic = _topic()
    mock_cluster.create_topic(topic, 3)
    async with _client(mock_cluster) as client:
        before = (await _metadata(client, topic)).topics[0].partitions[0]
        target = before.leader_id % 3 + 1
        mock_cluster.set_partition_leader(topic, 0, target)
        after = (await _metadata(client, topic)).topics[0].partitions[0]
        assert after.leader_id == target and after.leader_epoch == before.leader_epoch + 1
        mock_cluster.set_partition_leader(topic, 0, -1)
        assert _leaders(await _metadata(client, topic), topic)[0] == -1
    with pytest.raises(MockClusterError) as info:
        mock_cluster.set_partition_leader(topic, 0, 42)
    assert info.value.error_code is ErrorCode.BROKER_NOT_AVAILABLE
    with pytest.raises(MockClusterError) as info:
        mock_cluster.set_partition_leader(topic, 7, 1)
    assert info.value.error_code is ErrorCode.UNKNOWN_TOPIC_OR_PARTITION


async def test_push_leader_response_answers_one_metadata(mock_cluster: MockCluster) -> None:
    topic = _topic()
    mock_cluster.create_topic(topic, 1)
    mock_cluster.set_partition_leader(topic, 0, 1)
    mock_cluster.push_leader_response(topic, 0, 3, 77)
    async with _client(mock_cluster) as client:
        first = (await _metadata(client, topic)).topics[0].partitions[0]
        second = (await _metadata(client, topic)).topics[0].partitions[0]
    assert (first.leader_id, first.leader_epoch) == (3, 77)
    assert second.leader_id == 1


async def test_delete_records_makes_old_offsets_out_of_range(mock_cluster: MockCluster) -> None:
    topic = _topic()
    mock_cluster.create_topic(topic, 1)
    mock_cluster.set_partition_leader(topic, 0, 1)
    async with _client(mock_cluster) as client:
        await client.refresh_metadata([topic])
        base = await _produce(client, topic, 0, 5)
        await _produce(client, topic, 0, 5)
        mock_cluster.delete_records(topic, 0, base + 5)
        old = await _fetch_partition(client, topic, 0, base, node_id=1)
        assert old.error_code == ErrorCode.OFFSET_OUT_OF_RANGE
        assert old.log_start_offset == base + 5
        kept = await _fetch_partition(client, topic, 0, base + 5, node_id=1)
        assert kept.error_code == ErrorCode.NONE and kept.records
        earliest = ListOffsetsRequest(
            replica_id=-1,
            topics=[
                ListOffsetsRequest.ListOffsetsTopic(
                    name=topic,
                    partitions=[
                        ListOffsetsRequest.ListOffsetsTopic.ListOffsetsPartition(
                            partition_index=0, timestamp=-2
                        )
                    ],
                )
            ],
        )
        listed = await client.send(earliest, node_id=1)
        assert listed.topics[0].partitions[0].offset == base + 5
    with pytest.raises(MockClusterError) as info:
        mock_cluster.delete_records(topic, 0, base + 11)
    assert info.value.error_code is ErrorCode.OFFSET_OUT_OF_RANGE


async def test_follower_and_rack_give_a_preferred_read_replica(mock_cluster: MockCluster) -> None:
    topic = _topic()
    mock_cluster.create_topic(topic, 1, replication=3)
    mock_cluster.set_partition_leader(topic, 0, 1)
    mock_cluster.set_broker_rack(1, "rack-a")
    mock_cluster.set_broker_rack(2, "rack-b")
    mock_cluster.set_partition_follower(topic, 0, 2)
    async with _client(mock_cluster) as client:
        racks = {b.node_id: b.rack for b in (await _metadata(client, topic)).brokers}
        assert racks == {1: "rack-a", 2: "rack-b", 3: None}
        await _produce(client, topic, 0, 4)
        mock_cluster.set_follower_watermarks(topic, 0, 1, 3)
        at_leader = await _fetch_partition(client, topic, 0, 0, node_id=1)
        assert at_leader.preferred_read_replica == 2 and not at_leader.records
        at_follower = await _fetch_partition(client, topic, 0, 0, node_id=2)
        assert at_follower.error_code == ErrorCode.OFFSET_OUT_OF_RANGE  # below its start 1
        at_follower = await _fetch_partition(client, topic, 0, 1, node_id=2)
        assert (at_follower.log_start_offset, at_follower.high_watermark) == (1, 3)
        assert at_follower.error_code == ErrorCode.NONE and at_follower.records
        elsewhere = await _fetch_partition(client, topic, 0, 0, node_id=3)
        assert elsewhere.error_code == ErrorCode.NOT_LEADER_OR_FOLLOWER


# -- brokers -----------------------------------------------------------------------------------


def _port(cluster: MockCluster, broker_id: int) -> tuple[str, int]:
    host, port = cluster.brokers[broker_id].rsplit(":", 1)
    return host, int(port)


async def test_broker_down_refuses_connections_until_up(mock_cluster: MockCluster) -> None:
    async with _client(mock_cluster) as client:
        await client.send(MetadataRequest(topics=[]), node_id=2)
        mock_cluster.broker_down(2)
        with pytest.raises(ConnectionRefusedError):
            socket.create_connection(_port(mock_cluster, 2), timeout=2)
        with pytest.raises(KafkaConnectionError):
            await client.send(MetadataRequest(topics=[]), node_id=2)
        listed = await client.send(MetadataRequest(topics=[]), node_id=1)
        assert {b.node_id for b in listed.brokers} == {1, 3}
        mock_cluster.broker_up(2)
        socket.create_connection(_port(mock_cluster, 2), timeout=2).close()
        listed = await client.send(MetadataRequest(topics=[]), node_id=2)
        assert {b.node_id for b in listed.brokers} == {1, 2, 3}
    with pytest.raises(MockClusterError):
        mock_cluster.broker_down(9)


async def test_broker_rtt_delays_only_that_broker(mock_cluster: MockCluster) -> None:
    mock_cluster.set_broker_rtt(3, 400)
    async with _client(mock_cluster) as client:
        for node in (1, 3):
            await client.send(MetadataRequest(topics=[]), node_id=node)  # connect first
        started = anyio.current_time()
        await client.send(MetadataRequest(topics=[]), node_id=1)
        fast = anyio.current_time() - started
        started = anyio.current_time()
        await client.send(MetadataRequest(topics=[]), node_id=3)
        slow = anyio.current_time() - started
    assert slow >= 0.35 and fast < 0.3


async def test_broker_membership_and_addresses(mock_cluster: MockCluster) -> None:
    async with _client(mock_cluster) as client:
        mock_cluster.add_broker(4)
        assert {b.node_id for b in (await _metadata(client)).brokers} == {1, 2, 3, 4}
        mock_cluster.decommission_broker(4)
        mock_cluster.remove_broker_from_metadata(3)
        assert {b.node_id for b in (await _metadata(client)).brokers} == {1, 2}
        mock_cluster.set_broker_address(2, "localhost", 1234)
        mock_cluster.set_controller_id(2)
        response = await _metadata(client)
        assert {b.node_id: (b.host, b.port) for b in response.brokers}[2] == ("localhost", 1234)
        assert response.controller_id == 2


async def test_all_brokers_at_once(mock_cluster: MockCluster) -> None:
    mock_cluster.set_broker_rack(ALL_BROKERS, "everywhere")
    async with _client(mock_cluster) as client:
        assert {b.rack for b in (await _metadata(client)).brokers} == {"everywhere"}
        mock_cluster.broker_down(ALL_BROKERS)
        for broker_id in mock_cluster.brokers:
            with pytest.raises(ConnectionRefusedError):
                socket.create_connection(_port(mock_cluster, broker_id), timeout=2)
    mock_cluster.broker_up(ALL_BROKERS)
    async with _client(mock_cluster) as client:
        assert {b.node_id for b in (await _metadata(client)).brokers} == {1, 2, 3}


async def test_set_coordinator_pins_group_and_transaction(mock_cluster: MockCluster) -> None:
    mock_cluster.set_coordinator("group", "g1", 3)
    mock_cluster.set_coordinator(CoordinatorType.TRANSACTION, "tx1", 2)
    async with _client(mock_cluster) as client:
        group = await client.send(FindCoordinatorRequest(key="g1", key_type=0))
        txn = await client.send(FindCoordinatorRequest(key="tx1", key_type=1))
        assert (group.node_id, txn.node_id) == (3, 2)
        mock_cluster.set_coordinator("group", "g1", 1)
        assert (await client.send(FindCoordinatorRequest(key="g1"))).node_id == 1
    with pytest.raises(ValueError):
        mock_cluster.set_coordinator(CoordinatorType.SHARE, "s", 1)
    with pytest.raises(ValueError, match="no broker 9"):
        mock_cluster.set_coordinator("group", "g1", 9)
    with pytest.raises(MockClusterError):
        mock_cluster.set_coordinator("bogus", "g1", 1)  # type: ignore[arg-type]


async def test_set_apiversion_narrows_and_hides(mock_cluster: MockCluster) -> None:
    mock_cluster.set_apiversion(ApiKey.METADATA, 1, 4)
    mock_cluster.set_apiversion(ApiKey.SHARE_FETCH, -1, -1)
    async with _client(mock_cluster) as client:
        response = await client.send(ApiVersionsRequest(), version=2)
        table = {k.api_key: (k.min_version, k.max_version) for k in response.api_keys}
        assert table[ApiKey.METADATA] == (1, 4)
        assert ApiKey.SHARE_FETCH not in table
        assert await client.api_version(ApiKey.METADATA) == 4


# -- error injection ---------------------------------------------------------------------------


async def _fetch_code(client: KafkaClient, topic: str, node_id: int) -> int:
    version = await client.api_version(ApiKey.FETCH, node_id)
    request = fetch_request(client.metadata, topic, 0, 0, version)
    response = await client.send(request, node_id=node_id)
    return int(response.error_code)


async def test_pushed_errors_answer_the_next_requests_of_that_api(
    mock_cluster: MockCluster,
) -> None:
    topic = _topic()
    mock_cluster.create_topic(topic, 1)
    mock_cluster.set_partition_leader(topic, 0, 1)
    mock_cluster.push_request_errors(
        ApiKey.FETCH, ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.UNKNOWN_SERVER_ERROR
    )
    async with _client(mock_cluster) as client:
        await client.refresh_metadata([topic])
        codes = [await _fetch_code(client, topic, 1) for _ in range(3)]
        assert codes == [
            ErrorCode.NOT_LEADER_OR_FOLLOWER,
            ErrorCode.UNKNOWN_SERVER_ERROR,
            ErrorCode.NONE,
        ]
        mock_cluster.push_request_errors(ApiKey.FETCH, ErrorCode.NOT_LEADER_OR_FOLLOWER)
        mock_cluster.clear_request_errors(ApiKey.FETCH)
        assert await _fetch_code(client, topic, 1) == ErrorCode.NONE
        mock_cluster.push_request_errors(ApiKey.FIND_COORDINATOR, MockFault.DISCONNECT)
        with pytest.raises(KafkaConnectionError):
            await client.send(FindCoordinatorRequest(key="g"))
        assert (await client.send(FindCoordinatorRequest(key="g"))).error_code == ErrorCode.NONE


async def test_broker_error_rtts_apply_to_one_broker(mock_cluster: MockCluster) -> None:
    topic = _topic()
    mock_cluster.create_topic(topic, 1, replication=3)
    mock_cluster.set_partition_leader(topic, 0, 2)
    mock_cluster.set_partition_follower(topic, 0, 1)  # broker 1 may answer Fetch too
    mock_cluster.push_broker_request_error_rtts(
        2, ApiKey.FETCH, [(ErrorCode.NONE, 400), (ErrorCode.NOT_LEADER_OR_FOLLOWER, 0)]
    )
    assert mock_cluster.broker_error_stack_count(2, ApiKey.FETCH) == 2
    async with _client(mock_cluster) as client:
        await client.refresh_metadata([topic])
        await client.send(MetadataRequest(topics=[]), node_id=2)  # connected before timing
        assert await _fetch_code(client, topic, 1) == ErrorCode.NONE
        started = anyio.current_time()
        assert await _fetch_code(client, topic, 2) == ErrorCode.NONE
        assert anyio.current_time() - started >= 0.35
        assert await _fetch_code(client, topic, 2) == ErrorCode.NOT_LEADER_OR_FOLLOWER
        assert await _fetch_code(client, topic, 2) == ErrorCode.NONE
    assert mock_cluster.broker_error_stack_count(2, ApiKey.FETCH) == 0
    with pytest.raises(MockClusterError):
        mock_cluster.broker_error_stack_count(9, ApiKey.FETCH)


async def test_partition_errors_hit_only_that_partition(mock_cluster: MockCluster) -> None:
    topic = _topic()
    mock_cluster.create_topic(topic, 2)
    for partition in (0, 1):
        mock_cluster.set_partition_leader(topic, partition, 1)
    mock_cluster.push_partition_request_errors(
        topic, 1, ApiKey.FETCH, ErrorCode.NOT_LEADER_OR_FOLLOWER
    )
    async with _client(mock_cluster) as client:
        await client.refresh_metadata([topic])
        topic_id = client.metadata.topic_id(topic)
        assert topic_id is not None
        part = FetchRequest.FetchTopic.FetchPartition
        request = FetchRequest(
            max_wait_ms=10,
            topics=[
                FetchRequest.FetchTopic(
                    topic_id=topic_id,
                    partitions=[part(partition=0), part(partition=1)],
                )
            ],
        )
        response = await client.send(request, node_id=1)
        codes = {p.partition_index: p.error_code for p in response.responses[0].partitions}
        assert codes == {0: ErrorCode.NONE, 1: ErrorCode.NOT_LEADER_OR_FOLLOWER}
        again = await client.send(request, node_id=1)
        assert all(p.error_code == 0 for p in again.responses[0].partitions)


async def test_topic_error_shows_in_metadata(mock_cluster: MockCluster) -> None:
    topic = _topic()
    mock_cluster.set_topic_error(topic, ErrorCode.TOPIC_AUTHORIZATION_FAILED)
    async with _client(mock_cluster) as client:
        entry = (await _metadata(client, topic)).topics[0]
        assert entry.error_code == ErrorCode.TOPIC_AUTHORIZATION_FAILED
        mock_cluster.set_topic_error(topic, ErrorCode.NONE)
        assert (await _metadata(client, topic)).topics[0].error_code == ErrorCode.NONE


# -- request tracking, telemetry ---------------------------------------------------------------


async def test_request_tracking_lists_fetches_per_broker(mock_cluster: MockCluster) -> None:
    topic = _topic()
    mock_cluster.create_topic(topic, 3)
    for partition, broker in ((0, 1), (1, 2), (2, 3)):
        mock_cluster.set_partition_leader(topic, partition, broker)
    async with _client(mock_cluster) as client:
        await client.refresh_metadata([topic])
        mock_cluster.start_request_tracking()
        for partition, broker in ((0, 1), (1, 2), (2, 3), (1, 2)):
            await _fetch_partition(client, topic, partition, 0, node_id=broker)
        requests = mock_cluster.requests()
        fetches = [r for r in requests if r.api_key is ApiKey.FETCH]
        assert [r.broker_id for r in fetches] == [1, 2, 3, 2]
        assert all(isinstance(r, MockRequest) for r in requests)
        stamps = [r.timestamp_us for r in requests]
        assert stamps == sorted(stamps) and stamps[0] > 0
        mock_cluster.clear_requests()
        assert mock_cluster.requests() == []
        await _fetch_partition(client, topic, 0, 0, node_id=1)
        assert [r.api_key for r in mock_cluster.requests()][-1] is ApiKey.FETCH
        mock_cluster.stop_request_tracking()
        await _fetch_partition(client, topic, 0, 0, node_id=1)
        assert mock_cluster.requests() == []  # stopping forgets, and records nothing more


async def test_telemetry_subscription_settings(mock_cluster: MockCluster) -> None:
    mock_cluster.set_telemetry_requested_metrics(["org.apache.kafka.producer", "x."])
    mock_cluster.set_telemetry_push_interval(1234)
    async with _client(mock_cluster) as client:
        response = await client.send(GetTelemetrySubscriptionsRequest())
        assert response.requested_metrics == ["org.apache.kafka.producer", "x."]
        assert response.push_interval_ms == 1234
        mock_cluster.set_telemetry_requested_metrics(None)
        assert (await client.send(GetTelemetrySubscriptionsRequest())).requested_metrics == []


async def test_fixture_factory_makes_independent_clusters(
    make_mock_cluster: Callable[..., MockCluster],
) -> None:
    one = make_mock_cluster(1, topics={"a": 2})
    five = make_mock_cluster(5)
    assert len(one.brokers) == 1 and len(five.brokers) == 5
    async with _client(five) as client:
        assert {b.node_id for b in (await _metadata(client)).brokers} == {1, 2, 3, 4, 5}
    async with _client(one) as client:
        assert sorted(_leaders(await _metadata(client, "a"), "a")) == [0, 1]


def _foreground_mock(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "krafka.testing", "mock", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )


def _mock_roundtrip(bootstrap: str, topic: str) -> list[bytes | None]:
    from krafka import Consumer, Producer, TopicPartition

    async def run() -> list[bytes | None]:
        async with Producer(bootstrap_servers=bootstrap) as producer:
            meta = await producer.send_and_wait(topic, b"v", key=b"k")
        async with Consumer(bootstrap_servers=bootstrap, auto_offset_reset="earliest") as c:
            await c.assign([TopicPartition(topic, meta.partition)])
            return [r.value for r in await c.poll(timeout=10)]

    return anyio.run(run)


def test_python_m_krafka_testing_mock_runs_until_sigterm_and_leaves_nothing() -> None:
    proc = _foreground_mock("--nodes", "3")
    try:
        assert proc.stdout is not None
        bootstrap = ""
        for line in proc.stdout:
            if line.startswith("bootstrap_servers="):
                bootstrap = line.strip().split("=", 1)[1]
                break
        addresses = bootstrap.split(",")
        assert len(addresses) == 3, f"three brokers, got {bootstrap!r}"
        assert _mock_roundtrip(bootstrap, "main-mock") == [b"v"]
        started = time.monotonic()
        create = subprocess.run(
            [sys.executable, "-m", "krafka", "-b", bootstrap, "topics", "create", "main-new"],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert create.returncode != 0
        assert "does not support CREATE_TOPICS" in create.stderr
        assert time.monotonic() - started < 20, "no waiting for a controller until the timeout"
        assert not subprocess.run(["pgrep", "-P", str(proc.pid)], capture_output=True).stdout
        os.kill(proc.pid, signal.SIGTERM)
        assert proc.wait(30) == 0
        for address in addresses:
            host, _, port = address.rpartition(":")
            with pytest.raises(ConnectionRefusedError):
                socket.create_connection((host, int(port)), timeout=5).close()
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def test_python_m_krafka_testing_mock_refuses_a_port_it_cannot_bind() -> None:
    proc = _foreground_mock("--port", "9092")
    output, _ = proc.communicate(timeout=30)
    assert proc.returncode != 0
    assert "mock binds ports the kernel picks" in output
    assert not [line for line in output.splitlines() if line.startswith("bootstrap_servers=")]
