"""AWS_MSK_IAM and MSK OAUTHBEARER tokens through the anyio driver against a scripted broker
on a real socket. No AWS here: the broker side checks each payload's SigV4 signature with an
independent implementation (`tests/_sigv4.py`), as MSK does, and answers as MSK does."""

from __future__ import annotations

import base64
import json
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import anyio
import anyio.abc
import pytest

from krafka.config import keywords_from_config
from krafka.errors import AuthenticationError
from krafka.io.client import KafkaClient
from krafka.io.msk_iam import MskIamLogin, MskIamTokenProvider, region_of
from krafka.protocol import ApiKey
from krafka.protocol.messages import (
    MetadataRequest,
    MetadataResponse,
    SaslAuthenticateResponse,
    SaslHandshakeResponse,
)
from krafka.sansio.framing import FrameReader
from krafka.sansio.sasl import AwsCredentials
from krafka.testing.scripted import api_versions, parse_requests, response_bytes
from tests._sigv4 import expected_signature, verify

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(30)]

_IAM = "software.amazon.msk.auth.iam"
ACCESS, SECRET, TOKEN = "AKIDMSKTEST", "msk/secret+key", "session-token/123="


@dataclass
class MskBroker:
    """Answers ApiVersions, SaslHandshake (AWS_MSK_IAM, OAUTHBEARER), SaslAuthenticate and
    Metadata; an AWS_MSK_IAM payload must verify with `secret`."""

    secret: str = SECRET
    port: int = 0
    payloads: list[dict[str, Any]] = field(default_factory=list)
    tokens: list[bytes] = field(default_factory=list)
    rejected: int = 0

    @property
    def bootstrap_servers(self) -> str:
        return f"127.0.0.1:{self.port}"

    async def handle(self, stream: anyio.abc.SocketStream) -> None:
        reader, session = FrameReader(), {}
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

    def answer(self, sent: Any, session: dict[str, str]) -> Any:
        if sent.api_key == ApiKey.API_VERSIONS:
            return api_versions()
        if sent.api_key == ApiKey.SASL_HANDSHAKE:
            session["mechanism"] = sent.body.mechanism
            return SaslHandshakeResponse(mechanisms=["AWS_MSK_IAM", "OAUTHBEARER"])
        if sent.api_key == ApiKey.SASL_AUTHENTICATE:
            return self.authenticate(bytes(sent.body.auth_bytes), session["mechanism"])
        assert sent.api_key == ApiKey.METADATA
        broker = MetadataResponse.MetadataResponseBroker(
            node_id=1, host="127.0.0.1", port=self.port
        )
        return MetadataResponse(brokers=[broker], cluster_id="msk")

    def authenticate(self, auth: bytes, mechanism: str) -> SaslAuthenticateResponse:
        if mechanism == "OAUTHBEARER":
            self.tokens.append(auth)
            return SaslAuthenticateResponse()
        try:
            self.payloads.append(verify(auth, self.secret))
        except AssertionError:
            self.rejected += 1
            return SaslAuthenticateResponse(error_code=58, error_message="[abc-1] Access denied")
        return SaslAuthenticateResponse(auth_bytes=b'{"version":"2020_10_22","request-id":"abc-1"}')


@pytest.fixture
async def msk_broker() -> AsyncIterator[MskBroker]:
    broker = MskBroker()
    listener = await anyio.create_tcp_listener(local_host="127.0.0.1")
    broker.port = listener.extra(anyio.abc.SocketAttribute.local_port)
    async with anyio.create_task_group() as tg:
        tg.start_soon(listener.serve, broker.handle)
        yield broker
        tg.cancel_scope.cancel()


@pytest.fixture
def aws_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """Credentials in the environment, and no shared AWS files of the machine's."""
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", ACCESS)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET)
    monkeypatch.setenv("AWS_SESSION_TOKEN", TOKEN)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    yield


async def test_aws_msk_iam_from_the_default_credential_chain(
    msk_broker: MskBroker, aws_env: None
) -> None:
    async with KafkaClient(
        msk_broker.bootstrap_servers, sasl_mechanism="AWS_MSK_IAM", sasl_aws_region="us-east-1"
    ) as client:
        assert (await client.send(MetadataRequest(topics=[]))).cluster_id == "msk"
    (payload,) = msk_broker.payloads
    assert payload["host"] == "127.0.0.1"  # the broker's own host name is what gets signed
    assert (
        payload["x-amz-credential"].startswith(f"{ACCESS}/")
        and "/us-east-1/" in payload["x-amz-credential"]
    )
    assert payload["x-amz-security-token"] == TOKEN
    assert payload["user-agent"].startswith("krafka/")


async def test_java_properties_with_amazons_login_module(
    msk_broker: MskBroker, aws_env: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`awsProfileName` picks a profile of the shared credentials file (its region too)."""
    (tmp_path / "credentials").write_text(
        "[writer]\naws_access_key_id = AKIDWRITER\naws_secret_access_key = writer-secret\n"
    )
    (tmp_path / "config").write_text("[profile writer]\nregion = ap-south-1\n")
    msk_broker.secret = "writer-secret"
    config = {
        "bootstrap.servers": msk_broker.bootstrap_servers,
        "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanism": "AWS_MSK_IAM",
        "sasl.jaas.config": "software.amazon.msk.auth.iam.IAMLoginModule required "
        'awsProfileName="writer";',
        "sasl.client.callback.handler.class": f"{_IAM}.IAMClientCallbackHandler",
    }
    async with KafkaClient.from_config(config) as client:
        await client.send(MetadataRequest(topics=[]))
    (payload,) = msk_broker.payloads
    assert payload["x-amz-credential"].split("/")[0::2] == [
        "AKIDWRITER",
        "ap-south-1",
        "aws4_request",
    ]
    assert "x-amz-security-token" not in payload


async def test_wrong_credentials_are_an_authentication_error(msk_broker: MskBroker) -> None:
    login = MskIamLogin(region="us-east-1", credentials=AwsCredentials(ACCESS, "not-the-secret"))
    with pytest.raises(AuthenticationError, match="Access denied") as info:
        async with KafkaClient(msk_broker.bootstrap_servers, sasl=login):
            pass
    assert "not-the-secret" not in str(info.value) and msk_broker.rejected == 1


def test_a_role_is_assumed_through_sts(aws_env: None) -> None:
    """`role_arn` assumes the role with STS (here moto's, in process) from the chain's
    credentials, and signs with the temporary credentials it gets."""
    from moto import mock_aws

    with mock_aws():
        login = MskIamLogin(
            role_arn="arn:aws:iam::123456789012:role/msk-writer", sts_region="us-east-1"
        )
        payload = verify(
            login.payload("b-2.c.kafka.sa-east-1.amazonaws.com"),
            login.credentials().secret_key.reveal(),
        )
    assert payload["x-amz-credential"].split("/")[2] == "sa-east-1"  # from the host name
    assert payload["x-amz-security-token"] and payload["x-amz-security-token"] != TOKEN
    assert not payload["x-amz-credential"].startswith(ACCESS)


def test_regions_are_read_from_msk_host_names() -> None:
    assert region_of("b-1.orders.abc123.c3.kafka.us-gov-west-1.amazonaws.com") == "us-gov-west-1"
    assert region_of("boot-x.c1.kafka-serverless.eu-central-1.amazonaws.com") == "eu-central-1"
    assert region_of("127.0.0.1") is None and region_of("broker.internal") is None


async def test_msk_oauthbearer_tokens_from_amazons_python_signer(
    msk_broker: MskBroker, aws_env: None
) -> None:
    provider = MskIamTokenProvider("us-west-2")
    async with KafkaClient(
        msk_broker.bootstrap_servers,
        sasl_mechanism="OAUTHBEARER",
        sasl_oauth_token_provider=provider,
    ) as client:
        await client.send(MetadataRequest(topics=[]))
    (message,) = msk_broker.tokens
    bearer = message.split(b"auth=Bearer ")[1].split(b"\x01")[0].decode()
    url = base64.urlsafe_b64decode(bearer + "=" * (-len(bearer) % 4)).decode()
    parts = urlsplit(url)
    query = dict(parse_qsl(parts.query))
    assert parts.hostname == "kafka.us-west-2.amazonaws.com"
    assert query["Action"] == "kafka-cluster:Connect"
    assert query["X-Amz-Security-Token"] == TOKEN
    fields = {k.lower(): v for k, v in query.items()} | {"host": parts.hostname}
    assert query["X-Amz-Signature"] == expected_signature(fields, SECRET)
    assert provider().lifetime_ms is not None


def test_config_mapping_keeps_the_login_module_options() -> None:
    got = keywords_from_config(
        {
            "security.protocol": "SASL_SSL",
            "sasl.mechanism": "aws_msk_iam",
            "sasl.jaas.config": "software.amazon.msk.auth.iam.IAMLoginModule required "
            'awsRoleArn="arn:aws:iam::1:role/r" awsRoleSessionName="etl" awsStsRegion="us-east-2";',
        },
        "client",
    )
    login = got["sasl"]
    assert got["sasl_mechanism"] == "AWS_MSK_IAM" and isinstance(login, MskIamLogin)
    assert (login.role_arn, login.role_session_name, login.sts_region) == (
        "arn:aws:iam::1:role/r",
        "etl",
        "us-east-2",
    )
    assert json.dumps(repr(login))  # no credentials in it
