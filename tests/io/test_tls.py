"""TLS and mTLS through a real TLS terminator (FaultProxy with an ssl context) in front of Tansu."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from krafka.demo import fetch, produce
from krafka.errors import AuthenticationError, KrafkaError
from krafka.io.client import KafkaClient
from krafka.io.transport import create_ssl_context
from krafka.sansio.backoff import BackoffPolicy
from krafka.testing.proxy import FaultProxy

pytestmark = [pytest.mark.anyio, pytest.mark.broker, pytest.mark.timeout(30)]

_FAST = BackoffPolicy(initial=0.01, maximum=0.05, max_retries=1)


@pytest.fixture
def tls_proxy(proxied_broker: Any, certs: Any) -> Iterator[FaultProxy]:
    ctx = certs.server_context()
    with FaultProxy(proxied_broker.target, ssl_context=ctx, port=proxied_broker.proxy_port) as p:
        yield p


@pytest.fixture
def mtls_proxy(proxied_broker: Any, certs: Any) -> Iterator[FaultProxy]:
    ctx = certs.server_context(require_client_cert=True)
    with FaultProxy(proxied_broker.target, ssl_context=ctx, port=proxied_broker.proxy_port) as p:
        yield p


async def _roundtrip(client: KafkaClient) -> None:
    topic = f"tls-{uuid.uuid4().hex[:8]}"
    await client.refresh_metadata([topic])
    from krafka.codec import Record

    base = await produce(client, topic, 0, [Record(key=b"k", value=b"over tls", timestamp=1)])
    (record,) = await fetch(client, topic, 0, base, 1)
    assert record.value == b"over tls"


async def test_tls_roundtrip(tls_proxy: FaultProxy, certs: Any) -> None:
    ssl_ctx = certs.client_context()
    async with KafkaClient(tls_proxy.bootstrap_servers, ssl_context=ssl_ctx) as client:
        await _roundtrip(client)


async def test_mtls_roundtrip(mtls_proxy: FaultProxy, certs: Any) -> None:
    ssl_ctx = certs.client_context(with_cert=True)
    async with KafkaClient(mtls_proxy.bootstrap_servers, ssl_context=ssl_ctx) as client:
        await _roundtrip(client)


async def test_mtls_without_client_certificate_fails(mtls_proxy: FaultProxy, certs: Any) -> None:
    ssl_ctx = certs.client_context()
    with pytest.raises(KrafkaError) as info:
        async with KafkaClient(
            mtls_proxy.bootstrap_servers, ssl_context=ssl_ctx, reconnect_backoff=_FAST
        ):
            pass
    assert "127.0.0.1" in str(info.value) and "client certificate" in str(info.value)


async def test_wrong_ca_is_rejected(tls_proxy: FaultProxy, certs: Any) -> None:
    ssl_ctx = certs.client_context(ca=certs.other_ca)
    with pytest.raises(AuthenticationError, match="certificate"):
        async with KafkaClient(tls_proxy.bootstrap_servers, ssl_context=ssl_ctx):
            pass


async def test_wrong_hostname_is_rejected(tls_proxy: FaultProxy, certs: Any) -> None:
    ssl_ctx = certs.client_context()
    with pytest.raises(AuthenticationError, match=r"[Hh]ostname|match"):
        async with KafkaClient(
            tls_proxy.bootstrap_servers, ssl_context=ssl_ctx, server_hostname="wrong.example"
        ):
            pass


async def test_plaintext_client_against_tls_listener_fails_fast(tls_proxy: FaultProxy) -> None:
    with pytest.raises(KrafkaError):
        async with KafkaClient(
            tls_proxy.bootstrap_servers, request_timeout=2, reconnect_backoff=_FAST
        ):
            pass


async def test_create_ssl_context_mtls(mtls_proxy: FaultProxy, certs: Any) -> None:
    ctx = create_ssl_context(
        str(certs.ca), str(certs.client_cert), str(certs.client_key), check_hostname=True
    )
    async with KafkaClient(mtls_proxy.bootstrap_servers, ssl_context=ctx) as client:
        assert client.metadata.brokers
