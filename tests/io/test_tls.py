"""TLS and mTLS through a real TLS terminator (FaultProxy with an ssl context) in front of Tansu."""

from __future__ import annotations

import ssl
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from krafka import Producer
from krafka.config import keywords_from_config
from krafka.demo import fetch, produce
from krafka.errors import AuthenticationError, ConfigError, KrafkaError
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


def test_ssl_properties_build_the_context(tmp_path: Path, certs: Any) -> None:
    ca = str(certs.ca)
    got = keywords_from_config(
        {
            "security.protocol": "SSL",
            "ssl.ca.location": ca,
            "ssl.certificate.location": str(certs.client_cert),
            "ssl.key.location": str(certs.client_key),
            "ssl.endpoint.identification.algorithm": "",
            "ssl.enabled.protocols": "TLSv1.3,TLSv1.2",
        },
        "client",
    )
    ctx = got.pop("ssl_context")
    assert got == {}
    assert isinstance(ctx, ssl.SSLContext) and ctx.verify_mode is ssl.CERT_REQUIRED
    assert not ctx.check_hostname and ctx.minimum_version is ssl.TLSVersion.TLSv1_2
    assert ctx.get_ca_certs()[0]["subject"] == ((("commonName", "ca"),),)
    jks = tmp_path / "truststore.jks"
    jks.write_bytes(b"\xfe\xed\xfe\xed binary")
    with pytest.raises(ConfigError, match="not a PEM file"):
        keywords_from_config(
            {"security.protocol": "SSL", "ssl.truststore.location": str(jks)}, "client"
        )
    with pytest.raises(ConfigError, match="PEM stores only, not JKS"):
        keywords_from_config({"security.protocol": "SSL", "ssl.truststore.type": "JKS"}, "client")


async def test_producer_from_java_properties_over_mtls(mtls_proxy: FaultProxy, certs: Any) -> None:
    config = {
        "bootstrap.servers": mtls_proxy.bootstrap_servers,
        "security.protocol": "SSL",
        "ssl.ca.pem": certs.ca.read_text(),
        "ssl.keystore.type": "PEM",
        "ssl.keystore.certificate.chain": certs.client_cert.read_text(),
        "ssl.keystore.key": certs.client_key.read_text(),
        "linger.ms": "1",
    }
    async with Producer.from_config(config) as producer:
        meta = await producer.send_and_wait(f"tls-{uuid.uuid4().hex[:8]}", b"over mtls")
    assert meta.offset == 0
