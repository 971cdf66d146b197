"""KafkaClient against the live clusters (Apache Kafka and Tansu), under asyncio and trio."""

from __future__ import annotations

import uuid
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from krafka.codec import Record, encode_batch
from krafka.demo import fetch_request, produce, produce_request, roundtrip
from krafka.errors import InvalidStateError, UnsupportedVersionError
from krafka.io.client import KafkaClient
from krafka.protocol import REQUESTS, ApiKey
from krafka.protocol.messages import MetadataRequest
from krafka.sansio.connection import Priority

pytestmark = [pytest.mark.anyio, pytest.mark.broker, pytest.mark.timeout(60)]


def _topic() -> str:
    return f"t-{uuid.uuid4().hex[:10]}"


async def test_connect_negotiate_and_metadata(broker: Any) -> None:
    topic = _topic()
    async with KafkaClient(broker.bootstrap_servers) as client:
        (node,) = client.metadata.brokers.values()
        assert node.port == broker.port
        assert await client.partitions_for(topic) == [0, 1, 2, 3]
        meta = client.metadata
        assert meta.topic_id(topic) is not None
        leader = await client.leader_for(topic, 3)
        assert leader.node_id == node.node_id
        (conn,) = client.connections()
        assert ApiKey.METADATA in conn.api_versions
        assert await client.api_version(ApiKey.METADATA) >= 1


async def test_produce_fetch_roundtrip(broker: Any) -> None:
    topic = _topic()
    records = await roundtrip(broker.bootstrap_servers, topic, n=25)
    assert [r.value for r in records] == [f"value {i}".encode() for i in range(25)]
    assert [r.key for r in records][:2] == [b"k0", b"k1"]
    assert records[3].headers == [("i", b"3")] or list(records[3].headers) == [("i", b"3")]
    assert [r.offset for r in records] == list(range(records[0].offset, records[0].offset + 25))


async def test_fetch_with_topic_names_before_v13(broker: Any) -> None:
    topic = _topic()
    await roundtrip(broker.bootstrap_servers, topic, n=3)
    async with KafkaClient(broker.bootstrap_servers) as client:
        await client.partitions_for(topic)  # waits while a new topic is being created
        request = fetch_request(client.metadata, topic, 0, 0, version=12)
        response = await client.send_to_leader(topic, 0, request, version=12)
        assert response.responses[0].topic == topic
        assert response.responses[0].partitions[0].high_watermark == 3


async def test_pipelined_requests_share_one_connection(broker: Any) -> None:
    async with KafkaClient(broker.bootstrap_servers, max_in_flight=8) as client:
        results: list[Any] = []

        async def one() -> None:
            request = MetadataRequest(topics=[])
            results.append(await client.send(request, priority=Priority.NORMAL))

        async with anyio.create_task_group() as tg:
            for _ in range(40):
                tg.start_soon(one)
        assert len(results) == 40 and all(r.brokers for r in results)
        assert len(client.connections()) <= 2  # one control + one data connection


async def test_unadvertised_api_fails_locally_and_connection_survives(broker: Any) -> None:
    async with KafkaClient(broker.bootstrap_servers) as client:
        (conn,) = client.connections()
        missing = next(k for k in REQUESTS if int(k) not in conn.api_versions)
        with pytest.raises(UnsupportedVersionError):
            await client.send(REQUESTS[missing]())
        assert (await client.send(MetadataRequest(topics=[]))).brokers


async def test_find_coordinator_and_send_to_it(broker: Any) -> None:
    from krafka.protocol.messages import HeartbeatRequest

    async with KafkaClient(broker.bootstrap_servers) as client:
        coordinator = await client.find_coordinator("krafka-test-group")
        assert coordinator.node_id in client.metadata.brokers
        request = HeartbeatRequest(group_id="krafka-test-group", member_id="x")
        with anyio.fail_after(20):
            while True:
                response = await client.send_to_coordinator("krafka-test-group", request)
                # Apache Kafka answers heartbeats with NONE while the group's partition loads
                if response.error_code != 0:
                    break
                await anyio.sleep(0.1)
        assert response.error_code != 0  # unknown member: answered by the coordinator


async def test_control_lane_not_blocked_by_long_fetch(broker: Any) -> None:
    topic = _topic()
    async with KafkaClient(broker.bootstrap_servers) as client:
        await client.partitions_for(topic)  # waits while a new topic is being created
        version = await client.api_version(ApiKey.FETCH)
        request = fetch_request(client.metadata, topic, 0, 0, version)
        long_poll = type(request)(**{**_fields(request), "max_wait_ms": 4000})
        async with anyio.create_task_group() as tg:
            tg.start_soon(lambda: client.send_to_leader(topic, 0, long_poll))
            await anyio.sleep(0.05)
            start = anyio.current_time()
            await client.send(MetadataRequest(topics=[]))
            assert anyio.current_time() - start < 1.0
            tg.cancel_scope.cancel()


async def test_connections_per_broker_spreads_load(broker: Any) -> None:
    topic = _topic()
    async with KafkaClient(broker.bootstrap_servers, connections_per_broker=3) as client:
        await client.partitions_for(topic)  # waits while a new topic is being created
        version = await client.api_version(ApiKey.FETCH)
        request = fetch_request(client.metadata, topic, 0, 0, version)
        request = type(request)(**{**_fields(request), "max_wait_ms": 2000})  # all three overlap
        async with anyio.create_task_group() as tg:
            for _ in range(3):
                tg.start_soon(lambda: client.send_to_leader(topic, 0, request))
                await anyio.sleep(0.01)
        assert len(client.connections()) == 4  # 3 data + 1 control


def _fields(message: Any) -> dict[str, Any]:
    return {name: getattr(message, name) for name in message.__dataclass_fields__}


async def test_produce_requests_keep_their_order_over_several_connections(broker: Any) -> None:
    """Produce requests to one broker share one connection, so offsets follow call order."""
    topic = _topic()
    async with KafkaClient(broker.bootstrap_servers, connections_per_broker=3) as client:
        await produce(client, topic, 0, [Record(value=b"first")])  # the partition is served
        offsets: list[tuple[int, int]] = []

        async def produce_one(i: int) -> None:
            batch = encode_batch([Record(value=str(i).encode())])
            response = await client.send_to_leader(topic, 0, produce_request(topic, 0, batch, 1))
            assert response is not None
            offsets.append((i, response.responses[0].partition_responses[0].base_offset))

        async with anyio.create_task_group() as tg:
            for i in range(30):
                tg.start_soon(produce_one, i)
                await anyio.lowlevel.checkpoint()
        by_call = [offset for _, offset in sorted(offsets)]
        assert by_call == sorted(by_call) and len(set(by_call)) == 30


async def test_start_in_one_task_close_in_another_inside_a_new_cancel_scope(broker: Any) -> None:
    client = KafkaClient(broker.bootstrap_servers)
    async with anyio.create_task_group() as tg:
        tg.start_soon(client.start)
    assert client.metadata.brokers
    with anyio.CancelScope():
        async with anyio.create_task_group() as tg:
            tg.start_soon(client.close)
    with pytest.raises(InvalidStateError):
        await client.send(MetadataRequest(topics=[]))


async def test_idle_connections_close_and_reopen_on_demand(proxied_broker: Any) -> None:
    from krafka.testing.proxy import FaultProxy

    with FaultProxy(proxied_broker.target, port=proxied_broker.proxy_port) as proxy:
        async with KafkaClient(proxy.bootstrap_servers, connections_max_idle=0.2) as client:
            (node,) = client.metadata.brokers
            await client.send(MetadataRequest(topics=[]), node_id=node)
            opened = proxy.connections
            await client.send(MetadataRequest(topics=[]), node_id=node)
            assert proxy.connections == opened  # reused while in use
            await anyio.sleep(0.5)
            assert (await client.send(MetadataRequest(topics=[]), node_id=node)).brokers
            assert proxy.connections > opened  # the idle ones were closed: a new one opened
