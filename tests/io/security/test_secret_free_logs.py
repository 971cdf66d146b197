"""At DEBUG every request, answer and transition is logged; no line may carry a credential:
SASL/SCRAM (both hashes) and PLAIN logins, a refused login and OAUTHBEARER tokens, on Apache
Kafka, with every `krafka` logger at DEBUG and each line (tracebacks included) searched."""

from __future__ import annotations

import base64

import pytest
from _security import krafka_debug_logs, sasl, unique

from krafka import Producer
from krafka.errors import SaslAuthenticationError
from krafka.io.admin import AdminClient
from krafka.io.oauth import UnsecuredJwtProvider
from krafka.sansio.sasl import OAuthBearerToken
from krafka.testing.kafka import KafkaCluster

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(90)]


def _forms(secret: str) -> list[str]:
    """`secret` as a log line could show it: plain, as bytes' repr, base64."""
    raw = secret.encode()
    return [secret, repr(raw), base64.b64encode(raw).decode(), raw.hex()]


async def test_no_password_or_token_reaches_a_debug_log(kafka: KafkaCluster) -> None:
    password = kafka.users["alice"]
    wrong = unique("not-the-password")
    tokens: list[str] = []
    jwt = UnsecuredJwtProvider("alice", lifetime=60)

    def provider() -> OAuthBearerToken:
        token = jwt()
        tokens.append(token.value.reveal())
        return token

    with krafka_debug_logs() as logs:
        for mechanism in ("SCRAM-SHA-256", "SCRAM-SHA-512", "PLAIN"):
            async with AdminClient(**sasl(kafka, "alice", mechanism)) as admin:
                await admin.list_topics()
        with pytest.raises(SaslAuthenticationError):
            async with AdminClient(**sasl(kafka, "alice", "PLAIN", password=wrong)) as admin:
                await admin.list_topics()
        async with Producer(
            kafka.bootstrap_for("SASL_PLAINTEXT"),
            sasl_mechanism="OAUTHBEARER",
            sasl_oauth_token_provider=provider,
        ) as producer:
            await producer.send_and_wait(unique("w-logs"), b"x")
    assert tokens
    assert len(logs.lines) > 50  # requests, answers and transitions were logged
    assert any(line.startswith("DEBUG krafka.wire: recv Metadata") for line in logs.lines)
    assert any(line.startswith("DEBUG krafka.connection:") for line in logs.lines)
    for secret in [password, wrong, *tokens]:
        for form in _forms(secret):
            leaked = [line for line in logs.lines if form in line]
            assert not leaked, f"a credential is in the log: {leaked[:3]}"
