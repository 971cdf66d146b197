"""`socks5_proxy`: every connection of every client goes through a real SOCKS5 server (pproxy)
to Apache Kafka, with and without a username and password, plain and TLS; the proxy's
refusals are clear errors naming it, never its credentials."""

from __future__ import annotations

import sys
import uuid
from collections.abc import Iterator
from typing import Any

import anyio
import anyio.abc
import pytest

from krafka import Consumer, Producer, TopicPartition
from krafka.errors import (
    ConfigError,
    KafkaConnectionError,
    ProxyAuthenticationError,
    ProxyConnectionError,
)
from krafka.io.admin import AdminClient
from krafka.io.client import KafkaClient
from krafka.io.socks5 import Socks5Proxy, parse_socks5_proxy
from krafka.io.transport import create_ssl_context
from krafka.sansio.secret import Secret
from krafka.testing.kafka import KafkaCluster
from krafka.testing.socks5 import Socks5Server

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]

PASSWORD = "S0cks-p@ss:word"


@pytest.fixture(scope="module")
def open_proxy() -> Iterator[Socks5Server]:
    with Socks5Server() as server:
        yield server


@pytest.fixture(scope="module")
def login_proxy() -> Iterator[Socks5Server]:
    with Socks5Server(username="alice", password=PASSWORD) as server:
        yield server


def local_ports(client: KafkaClient) -> set[int]:
    """The source port of each of the client's live connections."""
    return {address[1] for address in client.local_addresses()}


def assert_all_proxied(proxy: Socks5Server, client: KafkaClient, broker: str) -> None:
    """Each connection the client holds is one the proxy forwarded to the broker."""
    ports = local_ports(client)
    assert ports
    for port in ports:
        assert proxy.wait_for_log(f":{port} -> {broker}"), (port, proxy.log()[-20:])


@pytest.mark.parametrize("login", [False, True], ids=["open", "login"])
async def test_produce_and_consume_through_the_proxy(
    kafka_cluster: KafkaCluster, open_proxy: Socks5Server, login_proxy: Socks5Server, login: bool
) -> None:
    proxy = login_proxy if login else open_proxy
    bootstrap = kafka_cluster.bootstrap_for("PLAINTEXT")
    options: dict[str, Any] = {"bootstrap_servers": bootstrap, "socks5_proxy": proxy.url}
    topic = f"socks5-{uuid.uuid4().hex[:8]}"
    async with Producer(**options) as producer:
        await producer.send_and_wait(topic, b"through the proxy", partition=0)
        assert_all_proxied(proxy, producer._client, bootstrap)
    async with Consumer(auto_offset_reset="earliest", **options) as consumer:
        await consumer.assign([TopicPartition(topic, 0)])
        with anyio.fail_after(20):
            records = await consumer.poll(timeout=None)
        assert [r.value for r in records] == [b"through the proxy"]
        assert_all_proxied(proxy, consumer.client, bootstrap)


async def test_tls_runs_inside_the_proxied_stream(kafka_cluster: KafkaCluster) -> None:
    """The proxy listens on 127.0.0.2, which the broker's certificate does not name: the
    handshake checks the broker's name (127.0.0.1), not the proxy's."""
    tls = kafka_cluster.tls
    assert tls is not None
    bootstrap = kafka_cluster.bootstrap_for("SSL")
    context = create_ssl_context(
        cafile=str(tls.ca), certfile=str(tls.client_cert), keyfile=str(tls.client_key)
    )
    with Socks5Server(host="127.0.0.2", username="bob", password=PASSWORD) as proxy:
        options: dict[str, Any] = {"bootstrap_servers": bootstrap, "socks5_proxy": proxy.url}
        async with AdminClient(ssl_context=context, **options) as admin:
            assert (await admin.describe_cluster()).nodes
            assert_all_proxied(proxy, admin.client, bootstrap)


async def test_wrong_or_missing_credentials_are_refused_clearly(
    kafka_cluster: KafkaCluster, login_proxy: Socks5Server
) -> None:
    at = f"the SOCKS5 proxy {login_proxy.host}:{login_proxy.port}"
    cases = [
        (login_proxy.url.replace("S0cks", "Wr0ng"), ProxyAuthenticationError, "refused the user"),
        (f"socks5://{login_proxy.host}:{login_proxy.port}", ProxyConnectionError, "want a user"),
    ]
    for url, kind, reason in cases:
        started = anyio.current_time()
        with pytest.raises(kind) as info:
            await KafkaClient(
                kafka_cluster.bootstrap_for("PLAINTEXT"), socks5_proxy=url, connect_timeout=5
            ).start()
        assert anyio.current_time() - started < 10
        message = str(info.value)
        assert at in message and reason in message, message
        assert "Wr0ng" not in message and "alice" not in message
    assert len(login_proxy.refusals()) >= 2


async def test_unreachable_proxy_and_broker(
    kafka_cluster: KafkaCluster, open_proxy: Socks5Server
) -> None:
    """A proxy that is not there fails within connect_timeout; a bootstrap address the proxy
    cannot reach is skipped for the next one, as without a proxy."""
    with Socks5Server() as gone:
        dead = f"socks5://127.0.0.1:{gone.port}"
    bootstrap = kafka_cluster.bootstrap_for("PLAINTEXT")
    with pytest.raises(ProxyConnectionError) as info:
        await KafkaClient(bootstrap, socks5_proxy=dead, connect_timeout=0.5).start()
    assert f"cannot reach the SOCKS5 proxy 127.0.0.1:{gone.port}" in str(info.value)
    assert info.value.retriable and isinstance(info.value, KafkaConnectionError)
    nowhere = f"127.0.0.1:{gone.port}"  # nothing listens there any more
    options: dict[str, Any] = {"socks5_proxy": open_proxy.url, "connect_timeout": 0.5}
    with pytest.raises(ProxyConnectionError) as info:
        await KafkaClient(nowhere, **options).start()
    assert f"SOCKS5 proxy 127.0.0.1:{open_proxy.port}:" in str(info.value)
    async with KafkaClient([nowhere, bootstrap], **options) as client:
        assert client.metadata.brokers
        assert_all_proxied(open_proxy, client, bootstrap)


def test_the_url_is_parsed_and_its_credentials_kept_secret() -> None:
    proxy = parse_socks5_proxy("socks5://al%40ice:p%3Ass@proxy.example:1080")
    assert proxy == Socks5Proxy("proxy.example", 1080, Secret("al@ice"), Secret("p:ss"))
    assert str(proxy) == "socks5://proxy.example:1080"
    assert "ice" not in repr(proxy) and "p:ss" not in repr(proxy)
    assert parse_socks5_proxy(Secret("socks5h://[::1]:1080")).address == "[::1]:1080"
    bad = [
        "http://u:Hidden1@h:1",
        "socks5://u:Hidden1@h",
        "socks5://u:Hidden1@h:99999",
        "socks5://u:Hidden1@:1080",
        "socks5://u:Hidden1@h:1/path",
        "socks5://Hidden1@h:1080",
    ]
    for url in bad:
        with pytest.raises(ConfigError) as info:
            parse_socks5_proxy(url)
        assert "Hidden1" not in str(info.value), str(info.value)


def test_sync_clients_and_the_socks5_proxy_property(
    kafka_cluster: KafkaCluster, login_proxy: Socks5Server
) -> None:
    """The blocking twins and `from_config` (`socks5.proxy`) take the same way through it."""
    from krafka import sync

    bootstrap = kafka_cluster.bootstrap_for("PLAINTEXT")
    properties = {"bootstrap.servers": bootstrap, "socks5.proxy": login_proxy.url}
    with sync.Producer.from_config(properties) as producer:
        producer.send_and_wait(f"socks5-{uuid.uuid4().hex[:8]}", b"sync")
        assert_all_proxied(login_proxy, producer.async_client._client, bootstrap)
    group = f"socks5-{uuid.uuid4().hex[:8]}"
    with sync.ShareConsumer(bootstrap, group_id=group, socks5_proxy=login_proxy.url) as share:
        assert_all_proxied(login_proxy, share.async_client._client, bootstrap)


def test_without_python_socks_the_option_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "python_socks", None)  # as if it were not installed
    with pytest.raises(ConfigError, match=r"pip install 'krafka\[socks\]'"):
        KafkaClient("127.0.0.1:9092", socks5_proxy="socks5://127.0.0.1:1080")
