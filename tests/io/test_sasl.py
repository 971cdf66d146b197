"""SASL through the anyio driver against a scripted broker on a real socket.

Tansu has no working SASL, so the broker side here is a small in-process server that answers
ApiVersions, SaslHandshake, SaslAuthenticate (the SCRAM server is PyPI `scramp`, an
independent implementation) and Metadata.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import pytest
import scramp

from krafka.errors import AuthenticationError
from krafka.io.client import KafkaClient
from krafka.protocol import ApiKey
from krafka.protocol.messages import (
    MetadataRequest,
    MetadataResponse,
    SaslAuthenticateResponse,
    SaslHandshakeResponse,
)
from krafka.sansio.framing import FrameReader
from krafka.sansio.sasl import OAuthBearerToken
from krafka.testing.scripted import api_versions, parse_requests, response_bytes

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(30)]


@dataclass
class SaslBroker:
    port: int = 0
    lifetime_ms: int = 0
    password: str = "pw"
    authentications: int = 0
    connections: int = 0
    rejected: int = 0
    tokens: list[bytes] = field(default_factory=list)

    @property
    def bootstrap_servers(self) -> str:
        return f"127.0.0.1:{self.port}"

    async def handle(self, stream: anyio.abc.SocketStream) -> None:
        self.connections += 1
        reader = FrameReader()
        session: dict[str, Any] = {}
        async with stream:
            while True:
                try:
                    data = await stream.receive()
                except (anyio.EndOfStream, anyio.BrokenResourceError):
                    return
                reader.feed(data)
                for payload in reader.frames():
                    (sent,) = parse_requests(len(payload).to_bytes(4, "big") + payload)
                    await stream.send(response_bytes(sent, self.answer(sent, session)))

    def answer(self, sent: Any, session: dict[str, Any]) -> Any:
        if sent.api_key == ApiKey.API_VERSIONS:
            return api_versions()
        if sent.api_key == ApiKey.SASL_HANDSHAKE:
            session["mechanism"] = sent.body.mechanism
            offered = ["SCRAM-SHA-256", "PLAIN", "OAUTHBEARER"]
            return SaslHandshakeResponse(
                error_code=0 if sent.body.mechanism in offered else 33, mechanisms=offered
            )
        if sent.api_key == ApiKey.SASL_AUTHENTICATE:
            return self.authenticate(sent.body.auth_bytes, session)
        assert sent.api_key == ApiKey.METADATA
        broker = MetadataResponse.MetadataResponseBroker(
            node_id=1, host="127.0.0.1", port=self.port
        )
        return MetadataResponse(brokers=[broker], cluster_id="sasl")

    def authenticate(self, auth: bytes, session: dict[str, Any]) -> SaslAuthenticateResponse:
        mechanism = session["mechanism"]
        if mechanism == "PLAIN":
            ok = auth == b"\0alice\0" + self.password.encode()
            return self._done(ok, b"")
        if mechanism == "OAUTHBEARER":
            self.tokens.append(auth)
            return self._done(True, b"")
        server = session.get("scram")
        if server is None:
            scram = scramp.ScramMechanism("SCRAM-SHA-256")
            info = scram.make_auth_info(self.password, iteration_count=4096)
            server = session["scram"] = scram.make_server(lambda _user: info)
            server.set_client_first(auth.decode())
            return SaslAuthenticateResponse(auth_bytes=server.get_server_first().encode())
        del session["scram"]
        try:
            server.set_client_final(auth.decode())
        except scramp.ScramException:
            return self._done(False, b"")
        return self._done(True, server.get_server_final().encode())

    def _done(self, ok: bool, auth_bytes: bytes) -> SaslAuthenticateResponse:
        if not ok:
            self.rejected += 1
            return SaslAuthenticateResponse(error_code=58, error_message="Authentication failed")
        self.authentications += 1
        return SaslAuthenticateResponse(auth_bytes=auth_bytes, session_lifetime_ms=self.lifetime_ms)


@pytest.fixture
async def sasl_broker() -> AsyncIterator[SaslBroker]:
    broker = SaslBroker()
    listener = await anyio.create_tcp_listener(local_host="127.0.0.1")
    broker.port = listener.extra(anyio.abc.SocketAttribute.local_port)
    async with anyio.create_task_group() as tg:
        tg.start_soon(listener.serve, broker.handle)
        yield broker
        tg.cancel_scope.cancel()


async def test_scram_sha256_end_to_end(sasl_broker: SaslBroker) -> None:
    async with KafkaClient(
        sasl_broker.bootstrap_servers,
        sasl_mechanism="SCRAM-SHA-256",
        sasl_username="bob",
        sasl_password="pw",
    ) as client:
        assert (await client.send(MetadataRequest(topics=[]))).cluster_id == "sasl"
    assert sasl_broker.authentications == 1


async def test_wrong_password_is_a_clear_authentication_error(sasl_broker: SaslBroker) -> None:
    with pytest.raises(AuthenticationError, match="Authentication failed") as info:
        async with KafkaClient(
            sasl_broker.bootstrap_servers,
            sasl_mechanism="SCRAM-SHA-256",
            sasl_username="bob",
            sasl_password="not-the-password",
        ):
            pass
    assert "not-the-password" not in str(info.value)
    assert sasl_broker.rejected == 1  # not retried: authentication errors are not retriable


async def test_plain_and_reauthentication_on_one_connection(sasl_broker: SaslBroker) -> None:
    sasl_broker.lifetime_ms = 300
    async with KafkaClient(
        sasl_broker.bootstrap_servers,
        sasl_mechanism="PLAIN",
        sasl_username="alice",
        sasl_password="pw",
    ) as client:
        for _ in range(8):
            assert (await client.send(MetadataRequest(topics=[]))).brokers
            await anyio.sleep(0.1)
    assert sasl_broker.connections == 1
    assert sasl_broker.authentications >= 3


async def test_oauthbearer_token_provider(sasl_broker: SaslBroker) -> None:
    async with KafkaClient(
        sasl_broker.bootstrap_servers,
        sasl_mechanism="OAUTHBEARER",
        sasl_oauth_token_provider=lambda: OAuthBearerToken("jwt-abc"),
    ) as client:
        await client.send(MetadataRequest(topics=[]))
    assert sasl_broker.tokens == [b"n,,\x01auth=Bearer jwt-abc\x01\x01"]


async def test_secrets_stay_out_of_logs_and_reprs(
    sasl_broker: SaslBroker, caplog: pytest.LogCaptureFixture
) -> None:
    secret = "Sup3r-s3cret-Pa55"
    sasl_broker.password = secret
    caplog.set_level(logging.DEBUG)
    client = KafkaClient(
        sasl_broker.bootstrap_servers,
        sasl_mechanism="SCRAM-SHA-256",
        sasl_username="bob",
        sasl_password=secret,
    )
    async with client:
        await client.send(MetadataRequest(topics=[]))
        (conn,) = client.connections()
        dumps = [repr(vars(client)), repr(conn.config), repr(conn.__dict__)]
    assert sasl_broker.authentications == 1
    assert all(secret not in text for text in dumps)
    assert secret not in caplog.text


async def test_client_from_java_properties_with_scram_in_a_jaas_config(
    sasl_broker: SaslBroker,
) -> None:
    config = {
        "bootstrap.servers": sasl_broker.bootstrap_servers,
        "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanism": "SCRAM-SHA-256",
        "sasl.jaas.config": "org.apache.kafka.common.security.scram.ScramLoginModule required "
        'username="bob" password="pw";',
    }
    async with KafkaClient.from_config(config) as client:
        assert (await client.send(MetadataRequest(topics=[]))).cluster_id == "sasl"
    assert sasl_broker.authentications == 1


async def test_oauthbearer_oidc_from_librdkafka_properties(sasl_broker: SaslBroker) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from _token_endpoint import TokenEndpoint

    with TokenEndpoint() as endpoint:
        config = {
            "bootstrap.servers": sasl_broker.bootstrap_servers,
            "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanisms": "OAUTHBEARER",
            "sasl.oauthbearer.method": "oidc",
            "sasl.oauthbearer.token.endpoint.url": endpoint.url,
            "sasl.oauthbearer.client.id": "app",
            "sasl.oauthbearer.client.secret": "s3cret",
        }
        async with KafkaClient.from_config(config) as client:
            await client.send(MetadataRequest(topics=[]))
    assert sasl_broker.tokens == [b"n,,\x01auth=Bearer token-1\x01\x01"]
