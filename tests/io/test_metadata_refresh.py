"""Metadata refresh policy through KafkaClient: age, errors, KIP-899 rebootstrap."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _producer_support import unique

from krafka import Producer
from krafka.errors import KafkaConnectionError, KafkaTimeoutError
from krafka.io.client import KafkaClient
from krafka.protocol.error_codes import ErrorCode
from krafka.sansio.backoff import BackoffPolicy
from krafka.testing.proxy import FaultProxy

pytestmark = [pytest.mark.anyio, pytest.mark.broker, pytest.mark.timeout(30)]

_FAST = BackoffPolicy(initial=0.01, maximum=0.05, max_retries=1)


async def _wait_for(predicate: Any, timeout: float = 3.0) -> None:
    with anyio.fail_after(timeout):
        while not predicate():
            await anyio.sleep(0.02)


async def test_refresh_on_age(broker: Any) -> None:
    async with KafkaClient(broker.bootstrap_servers, metadata_max_age=0.2) as client:
        start = client._refresh_generation
        await _wait_for(lambda: client._refresh_generation >= start + 2)


async def test_refresh_on_stale_metadata_error(broker: Any) -> None:
    async with KafkaClient(broker.bootstrap_servers) as client:
        await client.refresh_metadata(["refresh-on-error"])
        start = client._refresh_generation
        client.report_error(ErrorCode.NOT_LEADER_OR_FOLLOWER, "refresh-on-error")
        await _wait_for(lambda: client._refresh_generation > start, timeout=2.0)


async def test_rebootstrap_after_all_brokers_unreachable(proxied_broker: Any) -> None:
    direct = f"127.0.0.1:{proxied_broker.broker.port}"  # bootstrap; brokers advertise the proxy
    with FaultProxy(proxied_broker.target, port=proxied_broker.proxy_port) as proxy:
        client = KafkaClient(direct, rebootstrap_trigger=0.3, reconnect_backoff=_FAST)
        await client.__aenter__()
        try:
            await client.refresh_metadata()
            assert proxy.connections >= 1
        except BaseException:
            await client.close()
            raise
    try:
        (node,) = client.metadata.brokers.values()
        assert node.port == proxied_broker.proxy_port
        with pytest.raises(KafkaConnectionError):
            await client.refresh_metadata()
        assert client.metadata.unreachable_since is not None
        rebootstrapped = client.rebootstraps
        # the background refresh falls back to the bootstrap servers (KIP-899)
        await _wait_for(lambda: client.rebootstraps > rebootstrapped, timeout=2.0)
        # the view was dropped; the bootstrap server's answer fills it again
        await _wait_for(lambda: bool(client.metadata.brokers), timeout=2.0)
    finally:
        await client.close()


async def test_rebootstrap_required_error_reconnects_via_bootstrap(proxied_broker: Any) -> None:
    from krafka.protocol.messages import MetadataRequest

    direct = f"127.0.0.1:{proxied_broker.broker.port}"
    with FaultProxy(proxied_broker.target, port=proxied_broker.proxy_port) as proxy:
        async with KafkaClient(direct, reconnect_backoff=_FAST) as client:
            (node,) = client.metadata.brokers
            await client.send(MetadataRequest(topics=[]), node_id=node)
            assert proxy.connections == 1
            start = client._refresh_generation
            client.report_error(ErrorCode.REBOOTSTRAP_REQUIRED)
            await _wait_for(lambda: client._refresh_generation > start)
            assert not client.metadata.rebootstrap_requested
            await client.send(MetadataRequest(topics=[]), node_id=node)
            assert proxy.connections == 2  # the old broker connections were dropped


async def test_idle_topics_expire_unless_touched(broker: Any) -> None:
    async with KafkaClient(broker.bootstrap_servers, metadata_topic_idle_ttl=0.3) as client:
        await client.refresh_metadata(["idle-a", "idle-b"])
        for _ in range(5):
            await anyio.sleep(0.1)
            client.touch_topics(["idle-a"])
        await client.refresh_metadata()
        assert "idle-a" in client.metadata.topics
        assert "idle-b" not in client.metadata.topics


async def test_partitions_for_waits_while_a_topic_is_leaderless(make_mock_cluster: Any) -> None:
    """A topic answered with LEADER_NOT_AVAILABLE (a ZooKeeper-era broker creating it, leaders
    being elected) is asked for again until it is described, as Java's partitionsFor does; an
    unknown topic is absent at once; one that stays leaderless ends in KafkaTimeoutError."""
    cluster = make_mock_cluster(1, topics={"slow": 3, "stuck": 1})
    cluster.set_topic_error("slow", ErrorCode.LEADER_NOT_AVAILABLE)
    cluster.set_topic_error("stuck", ErrorCode.LEADER_NOT_AVAILABLE)
    async with KafkaClient(cluster.bootstrap_servers, allow_auto_topic_creation=False) as client:
        async with anyio.create_task_group() as tg:

            async def heal() -> None:
                await anyio.sleep(0.3)
                cluster.set_topic_error("slow", ErrorCode.NONE)

            tg.start_soon(heal)
            with anyio.fail_after(5):
                assert await client.partitions_for("slow") == [0, 1, 2]
        assert await client.partitions_for("absent") == []
        with pytest.raises(KafkaTimeoutError, match="LEADER_NOT_AVAILABLE"):
            await client.partitions_for("stuck", timeout=0.3)


async def test_a_steady_producer_refreshes_on_age_alone_under_either_backend(broker: Any) -> None:
    """Issue 22: one clock. trio's clock is offset from `time.monotonic`; a producer whose
    metadata lookups ran on another clock than the client's refreshes made every refresh
    forget its topic (idle for hours, by the other clock), and ask for it again."""
    max_age, seconds = 0.3, 3.0
    topic = unique("one-clock")
    client = KafkaClient(broker.bootstrap_servers, metadata_max_age=max_age)
    async with client, Producer(client=client, linger=0.001) as producer:
        await producer.send_and_wait(topic, b"warm-up")
        start = client.metadata_requests
        deadline = anyio.current_time() + seconds
        while anyio.current_time() < deadline:
            await producer.send_and_wait(topic, b"steady")
            await anyio.sleep(0.01)
        sent = client.metadata_requests - start
    assert sent <= 1.3 * seconds / max_age + 1, sent
