"""The mock cluster's group controls: classic groups, KIP-848 consumer groups and KIP-932 share
groups, observed by librdkafka's own consumers (confluent-kafka) and by raw requests from
krafka's KafkaClient."""

from __future__ import annotations

import dataclasses
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import anyio
import confluent_kafka
import pytest

from krafka.io.client import KafkaClient
from krafka.protocol.error_codes import ErrorCode
from krafka.protocol.messages import (
    ApiKey,
    ConsumerGroupHeartbeatRequest,
    HeartbeatRequest,
    JoinGroupRequest,
    LeaveGroupRequest,
    ShareFetchRequest,
    ShareGroupHeartbeatRequest,
    SyncGroupRequest,
)
from krafka.sansio.coordinator import CoordinatorType
from krafka.testing.mockcluster import (
    MockCluster,
    MockClusterError,
    ShareAutoOffsetReset,
    ShareIsolationLevel,
)

pytestmark = [pytest.mark.timeout(90)]
ACCEPT, RELEASE = confluent_kafka.AcknowledgeType.ACCEPT, confluent_kafka.AcknowledgeType.RELEASE


def _produce(cluster: MockCluster, topic: str, values: list[bytes], partition: int = 0) -> None:
    producer = confluent_kafka.Producer({"bootstrap.servers": cluster.bootstrap_servers})
    for value in values:
        producer.produce(topic, value=value, partition=partition)
    assert producer.flush(10) == 0


@contextmanager
def _share_consumer(cluster: MockCluster, group: str, topic: str) -> Iterator[Any]:
    consumer = confluent_kafka.ShareConsumer(
        {
            "bootstrap.servers": cluster.bootstrap_servers,
            "group.id": group,
            "share.acknowledgement.mode": "explicit",
            "log_level": 3,
        }
    )
    consumer.subscribe([topic])
    try:
        yield consumer
    finally:
        consumer.close()


def _poll(consumer: Any, want: int, timeout: float = 10.0, ack: Any = ACCEPT) -> list[Any]:
    """Poll until `want` records arrived or `timeout`; each batch is acknowledged with `ack`."""
    got: list[Any] = []
    deadline = time.monotonic() + timeout
    while len(got) < want and time.monotonic() < deadline:
        batch = list(consumer.poll(0.2))
        for message in batch:
            assert message.error() is None, message.error()
            consumer.acknowledge(message, ack)
        if batch:
            consumer.commit_sync()
        got += batch
    return got


def _consume(consumer: Any, want: int, timeout: float = 20.0) -> list[bytes]:
    """Values from a (classic or KIP-848) consumer until `want` arrived or `timeout`."""
    got: list[bytes] = []
    deadline = time.monotonic() + timeout
    while len(got) < want and time.monotonic() < deadline:
        message = consumer.poll(0.2)
        if message is not None and message.error() is None:
            got.append(bytes(message.value() or b""))
    return got


# -- classic groups ----------------------------------------------------------------------------


@pytest.mark.anyio
async def test_classic_group_api_works_at_the_negotiated_versions(
    mock_cluster: MockCluster,
) -> None:
    """With `fix_versions`, a strict client negotiates JoinGroup v5, SyncGroup v3 and LeaveGroup
    v2, and the whole classic protocol round trip decodes; the initial rebalance delay holds
    the first join of a group."""
    mock_cluster.set_group_initial_rebalance_delay(800)
    protocol = JoinGroupRequest.JoinGroupRequestProtocol(name="range", metadata=b"m")
    async with KafkaClient(mock_cluster.bootstrap_servers, retries=0) as client:
        coordinator = (await client.find_coordinator("cg")).node_id
        assert await client.api_version(ApiKey.JOIN_GROUP, coordinator) == 5
        join = JoinGroupRequest(
            group_id="cg",
            session_timeout_ms=6000,
            rebalance_timeout_ms=6000,
            protocol_type="consumer",
            protocols=[protocol],
        )
        started = anyio.current_time()
        joined = await client.send(join, node_id=coordinator)
        assert joined.error_code == ErrorCode.NONE and anyio.current_time() - started >= 0.7
        member, generation = joined.member_id, joined.generation_id
        assignment = SyncGroupRequest.SyncGroupRequestAssignment(member_id=member, assignment=b"a")
        synced = await client.send(
            SyncGroupRequest(
                group_id="cg",
                generation_id=generation,
                member_id=member,
                protocol_type="consumer",
                protocol_name="range",
                assignments=[assignment],
            ),
            node_id=coordinator,
        )
        assert (synced.error_code, synced.assignment) == (ErrorCode.NONE, b"a")
        beat = HeartbeatRequest(group_id="cg", generation_id=generation, member_id=member)
        assert (await client.send(beat, node_id=coordinator)).error_code == ErrorCode.NONE
        leave = LeaveGroupRequest(group_id="cg", member_id=member)
        assert (await client.send(leave, node_id=coordinator)).error_code == ErrorCode.NONE

        mock_cluster.set_group_initial_rebalance_delay(0)
        other = (await client.find_coordinator("cg2")).node_id
        started = anyio.current_time()
        joined = await client.send(dataclasses.replace(join, group_id="cg2"), node_id=other)
        assert joined.error_code == ErrorCode.NONE and anyio.current_time() - started < 0.5


def test_librdkafka_classic_consumer_still_consumes(mock_cluster: MockCluster) -> None:
    mock_cluster.create_topic("t", 2)
    mock_cluster.set_group_initial_rebalance_delay(0)
    _produce(mock_cluster, "t", [b"a", b"b"], partition=0)
    _produce(mock_cluster, "t", [b"c"], partition=1)
    consumer = confluent_kafka.Consumer(
        {
            "bootstrap.servers": mock_cluster.bootstrap_servers,
            "group.id": "classic",
            "auto.offset.reset": "earliest",
        }
    )
    consumer.subscribe(["t"])
    try:
        assert sorted(_consume(consumer, 3)) == [b"a", b"b", b"c"]
    finally:
        consumer.close()


# -- KIP-848 consumer groups -------------------------------------------------------------------


def test_kip848_consumer_consumes_and_follows_the_target_assignment(
    mock_cluster: MockCluster,
) -> None:
    mock_cluster.create_topic("t", 4)
    mock_cluster.set_group_consumer_heartbeat_interval(100)
    for partition in range(4):
        _produce(mock_cluster, "t", [b"p%d" % partition], partition=partition)
    consumer = confluent_kafka.Consumer(
        {
            "bootstrap.servers": mock_cluster.bootstrap_servers,
            "group.id": "g848",
            "group.protocol": "consumer",
            "auto.offset.reset": "earliest",
        }
    )
    consumer.subscribe(["t"])
    try:
        assert sorted(_consume(consumer, 4)) == [b"p0", b"p1", b"p2", b"p3"]

        mock_cluster.target_assignment("g848", {consumer.memberid(): [("t", 1), ("t", 3)]})
        assert _assignment_becomes(consumer, {1, 3})
        mock_cluster.target_assignment("g848", None)  # back to the mock's own assignor
        assert _assignment_becomes(consumer, {0, 1, 2, 3})
    finally:
        consumer.close()


def _assignment_becomes(consumer: Any, partitions: set[int], timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        consumer.poll(0.1)
        if {tp.partition for tp in consumer.assignment()} == partitions:
            return True
    return False


@pytest.mark.anyio
async def test_kip848_heartbeat_interval_and_session_timeout(mock_cluster: MockCluster) -> None:
    mock_cluster.create_topic("t", 2)
    mock_cluster.set_group_consumer_heartbeat_interval(1234)
    mock_cluster.set_group_consumer_session_timeout(300)
    async with KafkaClient(mock_cluster.bootstrap_servers, retries=0) as client:
        coordinator = (await client.find_coordinator("hb")).node_id
        joined = await client.send(
            ConsumerGroupHeartbeatRequest(
                group_id="hb",
                member_id=str(uuid.uuid4()),
                rebalance_timeout_ms=5000,
                subscribed_topic_names=["t"],
                subscribed_topic_regex="",  # the mock aborts on names without a regex
                topic_partitions=[],
            ),
            node_id=coordinator,
        )
        assert joined.error_code == ErrorCode.NONE
        assert joined.heartbeat_interval_ms == 1234
        assert joined.assignment is not None
        assert sorted(joined.assignment.topic_partitions[0].partitions) == [0, 1]
        await anyio.sleep(1.5)  # the session timer runs once a second
        again = await client.send(
            ConsumerGroupHeartbeatRequest(
                group_id="hb", member_id=joined.member_id or "", member_epoch=joined.member_epoch
            ),
            node_id=coordinator,
        )
        assert again.error_code == ErrorCode.UNKNOWN_MEMBER_ID


# -- share groups, through librdkafka's ShareConsumer ------------------------------------------


def test_share_consumer_receives_releases_and_redelivers(mock_cluster: MockCluster) -> None:
    mock_cluster.create_topic("t", 1)
    mock_cluster.sharegroup_set_auto_offset_reset(ShareAutoOffsetReset.EARLIEST)
    _produce(mock_cluster, "t", [b"a", b"b"])  # before anyone joined: needs EARLIEST
    with _share_consumer(mock_cluster, "sg", "t") as consumer:
        first = _poll(consumer, 2, ack=RELEASE)
        assert sorted(m.value() for m in first) == [b"a", b"b"]
        assert {m.delivery_count() for m in first} == {1}
        again = _poll(consumer, 2)
        assert {m.delivery_count() for m in again} == {2}
        assert len(mock_cluster.sharegroup_member_ids("sg")) == 1
    with pytest.raises(MockClusterError) as info:
        mock_cluster.sharegroup_member_ids("no-such-group")
    assert info.value.error_code is ErrorCode.GROUP_ID_NOT_FOUND


def test_share_max_delivery_attempts(mock_cluster: MockCluster) -> None:
    mock_cluster.create_topic("t", 1)
    mock_cluster.sharegroup_set_auto_offset_reset("earliest")
    mock_cluster.sharegroup_set_max_delivery_attempts(2)
    _produce(mock_cluster, "t", [b"x"])
    with _share_consumer(mock_cluster, "sg", "t") as consumer:
        counts = [[m.delivery_count() for m in _poll(consumer, 1, 2, RELEASE)] for _ in range(3)]
    assert counts == [[1], [2], []]  # archived after the second delivery


def test_share_max_record_locks_bounds_each_acquisition(mock_cluster: MockCluster) -> None:
    mock_cluster.create_topic("t", 1)
    mock_cluster.sharegroup_set_auto_offset_reset("earliest")
    mock_cluster.sharegroup_set_max_record_locks(2)
    _produce(mock_cluster, "t", [b"%d" % i for i in range(6)])
    with _share_consumer(mock_cluster, "sg", "t") as consumer:
        sizes = [len(_poll(consumer, 1, 5)) for _ in range(3)]
    assert sizes == [2, 2, 2]


def test_share_isolation_level_hides_aborted_records(mock_cluster: MockCluster) -> None:
    mock_cluster.create_topic("t", 1)
    mock_cluster.sharegroup_set_auto_offset_reset("earliest")
    producer = confluent_kafka.Producer(
        {"bootstrap.servers": mock_cluster.bootstrap_servers, "transactional.id": "tx"}
    )
    producer.init_transactions(10)
    for value, commit in ((b"aborted", False), (b"committed", True)):
        producer.begin_transaction()
        producer.produce("t", value=value, partition=0)
        producer.flush(10)
        (producer.commit_transaction if commit else producer.abort_transaction)(10)
    seen = {}
    for level in (ShareIsolationLevel.READ_COMMITTED, ShareIsolationLevel.READ_UNCOMMITTED):
        mock_cluster.sharegroup_set_isolation_level(level)
        with _share_consumer(mock_cluster, f"sg-{level.name}", "t") as consumer:
            seen[level] = sorted(m.value() for m in _poll(consumer, 2, 2))
    assert seen[ShareIsolationLevel.READ_COMMITTED] == [b"committed"]
    assert seen[ShareIsolationLevel.READ_UNCOMMITTED] == [b"aborted", b"committed"]


def test_share_target_assignment(mock_cluster: MockCluster) -> None:
    mock_cluster.create_topic("t", 2)
    mock_cluster.sharegroup_set_auto_offset_reset("earliest")
    mock_cluster.sharegroup_set_heartbeat_interval(100)
    with _share_consumer(mock_cluster, "sg", "t") as consumer:
        _poll(consumer, 1, 0.5)  # joined
        (member,) = mock_cluster.sharegroup_member_ids("sg")
        mock_cluster.sharegroup_target_assignment("sg", {member: [("t", 1)]})
        _poll(consumer, 1, 0.5)  # a few heartbeats: the new assignment arrives
        _produce(mock_cluster, "t", [b"zero"], partition=0)
        _produce(mock_cluster, "t", [b"one"], partition=1)
        got = _poll(consumer, 2, 2)
    # Share groups deliver at least once: under load librdkafka's consumer has been seen to get
    # "one" a second time (CI of f5cc299), so the check is which partitions delivered.
    assert {(m.partition(), m.value()) for m in got} == {(1, b"one")}


# -- share groups, through raw requests --------------------------------------------------------


async def _share_join(client: KafkaClient, group: str, topic: str) -> Any:
    coordinator = (await client.find_coordinator(group, CoordinatorType.SHARE)).node_id
    request = ShareGroupHeartbeatRequest(
        group_id=group, member_id=str(uuid.uuid4()), subscribed_topic_names=[topic]
    )
    return await client.send(request, node_id=coordinator)


async def _share_fetch(client: KafkaClient, group: str, member: str, topic: str, epoch: int) -> Any:
    await client.refresh_metadata([topic])
    topic_id = client.metadata.topic_id(topic)
    assert topic_id is not None
    partition = ShareFetchRequest.FetchTopic.FetchPartition(partition_index=0)
    request = ShareFetchRequest(
        group_id=group,
        member_id=member,
        share_session_epoch=epoch,
        max_wait_ms=10,
        max_records=100,
        batch_size=100,
        topics=[ShareFetchRequest.FetchTopic(topic_id=topic_id, partitions=[partition])],
    )
    leader = await client.leader_for(topic, 0)
    return await client.send(request, node_id=leader.node_id)


def _acquired(response: Any) -> list[tuple[int, int, int]]:
    if not response.responses:
        return []
    return [
        (a.first_offset, a.last_offset, a.delivery_count)
        for a in response.responses[0].partitions[0].acquired_records
    ]


@pytest.mark.anyio
async def test_share_record_lock_duration(mock_cluster: MockCluster) -> None:
    mock_cluster.create_topic("t", 1)
    mock_cluster.sharegroup_set_auto_offset_reset("earliest")
    mock_cluster.sharegroup_set_record_lock_duration(400)
    _produce(mock_cluster, "t", [b"a", b"b", b"c"])
    async with KafkaClient(mock_cluster.bootstrap_servers, retries=0) as client:
        first = (await _share_join(client, "sg", "t")).member_id
        second = (await _share_join(client, "sg", "t")).member_id
        taken = await _share_fetch(client, "sg", first, "t", 0)
        assert taken.acquisition_lock_timeout_ms == 400
        assert _acquired(taken) == [(0, 2, 1)]
        assert _acquired(await _share_fetch(client, "sg", second, "t", 0)) == []
        await anyio.sleep(1.5)
        expired = await _share_fetch(client, "sg", second, "t", 1)
        assert _acquired(expired) == [(0, 2, 2)]


@pytest.mark.anyio
async def test_share_heartbeat_session_and_group_size(mock_cluster: MockCluster) -> None:
    mock_cluster.create_topic("t", 2)
    mock_cluster.sharegroup_set_heartbeat_interval(777)
    mock_cluster.sharegroup_set_session_timeout(300)
    mock_cluster.sharegroup_set_max_size(1)
    async with KafkaClient(mock_cluster.bootstrap_servers, retries=0) as client:
        joined = await _share_join(client, "sg", "t")
        assert joined.error_code == ErrorCode.NONE and joined.heartbeat_interval_ms == 777
        assert joined.assignment is not None
        assert sorted(joined.assignment.topic_partitions[0].partitions) == [0, 1]
        full = await _share_join(client, "sg", "t")
        assert full.error_code == ErrorCode.GROUP_MAX_SIZE_REACHED
        assert mock_cluster.sharegroup_member_ids("sg") == [joined.member_id]
        await anyio.sleep(1.5)  # session timeout 300 ms, checked once a second
        assert mock_cluster.sharegroup_member_ids("sg") == []


@pytest.mark.anyio
async def test_share_max_fetch_sessions_per_broker(mock_cluster: MockCluster) -> None:
    mock_cluster.create_topic("t", 1)
    mock_cluster.sharegroup_set_max_fetch_sessions(1)
    async with KafkaClient(mock_cluster.bootstrap_servers, retries=0) as client:
        first = (await _share_join(client, "sg", "t")).member_id
        second = (await _share_join(client, "sg", "t")).member_id
        opened = await _share_fetch(client, "sg", first, "t", 0)
        assert opened.error_code == ErrorCode.NONE
        refused = await _share_fetch(client, "sg", second, "t", 0)
        assert refused.error_code == ErrorCode.SHARE_SESSION_LIMIT_REACHED
