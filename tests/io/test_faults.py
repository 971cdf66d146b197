"""Faults between client and broker (FaultProxy): clear errors or transparent reconnects,
never a hang, no leaked tasks."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Iterator
from typing import Any

import anyio
import pytest
import sniffio

from krafka.errors import KafkaConnectionError, KafkaTimeoutError, KrafkaError
from krafka.io.client import KafkaClient
from krafka.protocol.messages import MetadataRequest, ProduceRequest
from krafka.sansio.backoff import BackoffPolicy
from krafka.testing.proxy import Fault, FaultProxy

pytestmark = [pytest.mark.anyio, pytest.mark.broker, pytest.mark.timeout(30)]

_FAST = BackoffPolicy(initial=0.01, maximum=0.05, max_retries=2)
# Requests on the control connection: 0 = ApiVersions, 1 = bootstrap Metadata, 2 = ours.
_OURS = 2


@pytest.fixture
def proxy(proxied_broker: Any) -> Iterator[FaultProxy]:
    with FaultProxy(proxied_broker.target, port=proxied_broker.proxy_port) as p:
        yield p


def _client(proxy: FaultProxy, **kwargs: Any) -> KafkaClient:
    kwargs.setdefault("reconnect_backoff", _FAST)
    kwargs.setdefault("request_timeout", 5.0)
    return KafkaClient(proxy.bootstrap_servers, **kwargs)


def _task_count() -> int:
    if sniffio.current_async_library() == "asyncio":
        return len(asyncio.all_tasks())
    import trio

    def count(task: Any) -> int:
        return 1 + sum(count(t) for n in task.child_nurseries for t in n.child_tasks)

    return count(trio.lowlevel.current_root_task())


def _metadata() -> MetadataRequest:
    return MetadataRequest(topics=[])


@pytest.mark.parametrize("fault", [Fault.DROP_MID_FRAME, Fault.RESET, Fault.CLOSE, Fault.GARBAGE])
async def test_one_broken_connection_is_retried_transparently(
    proxy: FaultProxy, fault: Fault
) -> None:
    async with _client(proxy) as client:
        proxy.arm(fault, after_requests=_OURS, once=True)
        response = await client.send(_metadata())
        assert response.brokers
        assert proxy.faults_fired == 1 and proxy.connections == 2


@pytest.mark.parametrize("fault", [Fault.DROP_MID_FRAME, Fault.RESET, Fault.GARBAGE])
async def test_persistent_fault_gives_a_clear_retriable_error(
    proxy: FaultProxy, fault: Fault
) -> None:
    async with _client(proxy, retries=1) as client:
        proxy.arm(fault, after_requests=1)  # every connection breaks on its first real request
        with pytest.raises(KafkaConnectionError) as info:
            await client.send(_metadata())
        assert info.value.retriable
        assert proxy.faults_fired >= 2


async def test_non_idempotent_request_is_not_resent(proxy: FaultProxy) -> None:
    async with _client(proxy) as client:
        proxy.arm(Fault.DROP_MID_FRAME, after_requests=1, once=True)  # data conn: ApiVersions, ours
        request = ProduceRequest(acks=1, timeout_ms=1000, topic_data=[])
        with pytest.raises(KafkaConnectionError, match=r"mid-frame|lost|closed"):
            await client.send(request)
        assert proxy.faults_fired == 1
        assert (await client.send(_metadata())).brokers  # the client recovers


async def test_stalled_broker_times_out_then_reconnects(proxy: FaultProxy) -> None:
    async with _client(proxy) as client:
        proxy.arm(Fault.STALL, after_requests=_OURS, once=True)
        start = anyio.current_time()
        with pytest.raises(KafkaTimeoutError) as info:
            await client.send(_metadata(), timeout=0.5)
        assert anyio.current_time() - start < 2.0
        assert proxy.bootstrap_servers in str(info.value)  # which broker did not answer
        assert (await client.send(_metadata())).brokers
        assert proxy.connections == 2


async def test_unreachable_broker_fails_after_bounded_backoff(proxied_broker: Any) -> None:
    start = anyio.current_time()
    with pytest.raises(KafkaConnectionError, match="no broker reachable"):
        async with KafkaClient(proxied_broker.bootstrap_servers, reconnect_backoff=_FAST):
            pass
    assert anyio.current_time() - start < 5.0


async def test_broker_outage_then_reconnect(proxied_broker: Any) -> None:
    with FaultProxy(proxied_broker.target, port=proxied_broker.proxy_port) as proxy:
        client = _client(proxy)
        await client.__aenter__()
    try:
        with pytest.raises(KafkaConnectionError):
            await client.send(_metadata())
        with FaultProxy(proxied_broker.target, port=proxied_broker.proxy_port):
            await anyio.sleep(0.1)  # let the backoff window pass
            assert (await client.send(_metadata())).brokers
    finally:
        await client.close()


async def test_close_is_bounded_with_requests_stuck(proxy: FaultProxy) -> None:
    before = _task_count()
    errors: list[BaseException] = []
    async with anyio.create_task_group() as tg:
        client = _client(proxy, request_timeout=60.0)
        await client.__aenter__()
        proxy.arm(Fault.STALL, after_requests=_OURS)

        async def stuck() -> None:
            try:
                await client.send(_metadata())
            except KrafkaError as exc:
                errors.append(exc)

        tg.start_soon(stuck)
        await anyio.sleep(0.2)
        start = anyio.current_time()
        await client.close(timeout=1.0)  # in the task that entered the client
        assert anyio.current_time() - start < 2.5
    assert len(errors) == 1 and isinstance(errors[0], KafkaConnectionError)
    assert _task_count() == before


async def test_no_tasks_leak_after_faults(proxy: FaultProxy) -> None:
    before = _task_count()
    async with _client(proxy) as client:
        for fault in (Fault.DROP_MID_FRAME, Fault.RESET, Fault.GARBAGE):
            proxy.arm(fault, after_requests=_OURS, once=True)
            await client.send(_metadata())
    assert _task_count() == before


async def test_handshake_drop_is_retried_by_the_pool(proxy: FaultProxy) -> None:
    async with _client(proxy) as client:
        proxy.arm(
            Fault.DROP_MID_FRAME, after_requests=0, once=True
        )  # a new connection's ApiVersions
        request = ProduceRequest(acks=1, timeout_ms=1000, topic_data=[])
        response = await client.send(request)  # opens the data connection: first attempt breaks
        assert response.responses == []
        assert proxy.faults_fired == 1 and proxy.connections == 3


async def test_send_blocked_on_a_full_socket_still_times_out(proxy: FaultProxy) -> None:
    async with _client(proxy) as client:
        proxy.arm(Fault.FREEZE, after_requests=1, once=True)  # data conn: ApiVersions, ours
        part = ProduceRequest.TopicProduceData.PartitionProduceData(
            index=0, records=bytes(32 << 20)
        )
        request = ProduceRequest(
            acks=1,
            timeout_ms=1000,
            topic_data=[ProduceRequest.TopicProduceData(name="x", partition_data=[part])],
        )
        start = anyio.current_time()
        with pytest.raises(KafkaTimeoutError):
            await client.send(request, timeout=1.0)
        assert anyio.current_time() - start < 3.0
        assert proxy.faults_fired == 1


async def test_dropped_connections_reconnect_transparently(proxy: FaultProxy) -> None:
    async with _client(proxy) as client:
        await client.send(_metadata())
        proxy.drop_connections()  # as a broker restart would
        await anyio.sleep(0.05)
        assert (await client.send(_metadata())).brokers
        assert proxy.connections == 2


async def test_a_connection_given_up_on_is_reset_so_its_requests_never_arrive_late() -> None:
    """Found by the fault tests (a network partition, then healed): a request that timed out
    stayed in the kernel's send queue of the gracefully closed socket and was retransmitted
    to the broker once the network came back - a produce the client had reported failed
    was written after records sent long after it. A connection krafka gives up on is reset
    (the queue dropped), as the broker here sees."""
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]
    try:
        client = KafkaClient(f"127.0.0.1:{port}", request_timeout=0.3, connect_timeout=0.4)
        with pytest.raises(KrafkaError):
            await client.start()
        peer, _ = server.accept()  # it connected; ApiVersions went unanswered
        peer.settimeout(5)
        with pytest.raises(ConnectionResetError):
            while peer.recv(65536):  # the request's bytes, then a reset (not an orderly EOF)
                pass
        peer.close()
    finally:
        server.close()
