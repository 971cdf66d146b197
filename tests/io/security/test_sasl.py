"""SASL on Apache Kafka: PLAIN, SCRAM credentials made, changed and removed through krafka's
AdminClient, OAUTHBEARER with tokens refreshed by re-authentication, refusals.

(The scripted-broker tests in tests/io/test_sasl.py cover what no broker shows.)
"""

from __future__ import annotations

import time
from typing import Any, Final

import anyio
import pytest
from _security import krafka_debug_logs, sasl, unique

from krafka import Producer, ScramDeletion, ScramUpsertion, TopicPartition
from krafka.errors import ResourceNotFoundError, SaslAuthenticationError
from krafka.io.admin import AdminClient
from krafka.io.oauth import UnsecuredJwtProvider
from krafka.sansio.admin.scram import ScramCredentialInfo, ScramMechanism
from krafka.sansio.sasl import OAuthBearerToken
from krafka.testing.kafka import KafkaCluster
from krafka.testing.proxy import FaultProxy

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]

PROMPT: Final = 10.0
SCRAM: Final = ("SCRAM-SHA-256", "SCRAM-SHA-512")


async def logs_in(kafka: KafkaCluster, user: str, password: str, mechanism: str) -> bool:
    """Whether a new client authenticates as `user` (False: refused, at once)."""
    try:
        with anyio.fail_after(PROMPT):
            async with AdminClient(**sasl(kafka, user, mechanism, password=password)) as client:
                await client.list_topics()
    except SaslAuthenticationError:
        return False
    return True


async def wait_described(admin: AdminClient, user: str, present: bool) -> Any:
    """The broker answers for the new credentials once it has applied them (KRaft metadata)."""
    with anyio.fail_after(PROMPT):
        while True:
            found = (await admin.describe_user_scram_credentials([user]))[user]
            if isinstance(found, ResourceNotFoundError) != present:
                return found
            await anyio.sleep(0.02)


async def test_scram_credentials_from_the_admin_client_apply_to_the_next_login(
    kafka: KafkaCluster,
) -> None:
    user, first, second = unique("carol"), unique("first"), unique("second")
    async with AdminClient(**sasl(kafka, "admin")) as admin:
        both = [
            ScramUpsertion(user, "SCRAM-SHA-256", first),
            ScramUpsertion(user, "SCRAM-SHA-512", first, iterations=8192),
        ]
        for upsertion in both:  # KRaft takes one alteration per user and request
            made = await admin.alter_user_scram_credentials([upsertion])
            assert made.raise_for_errors() == {user: None}
        assert set(await wait_described(admin, user, present=True)) == {
            ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 4096),
            ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 8192),
        }
        for mechanism in SCRAM:
            assert await logs_in(kafka, user, first, mechanism)
            assert not await logs_in(kafka, user, second, mechanism)

        await admin.alter_user_scram_credentials([ScramUpsertion(user, "SCRAM-SHA-512", second)])
        with anyio.fail_after(PROMPT):
            while await logs_in(kafka, user, first, "SCRAM-SHA-512"):
                await anyio.sleep(0.02)  # until the broker has the new one
        assert await logs_in(kafka, user, second, "SCRAM-SHA-512")
        assert await logs_in(kafka, user, first, "SCRAM-SHA-256")  # the other one unchanged

        for mechanism in SCRAM:
            gone = await admin.alter_user_scram_credentials([ScramDeletion(user, mechanism)])
            assert gone.raise_for_errors() == {user: None}
        await wait_described(admin, user, present=False)
        assert not await logs_in(kafka, user, first, "SCRAM-SHA-256")
        assert not await logs_in(kafka, user, second, "SCRAM-SHA-512")


@pytest.mark.parametrize("mechanism", ["PLAIN", *SCRAM, "OAUTHBEARER"])
async def test_a_refused_login_is_one_attempt_naming_the_broker(
    kafka: KafkaCluster, mechanism: str
) -> None:
    host, _, port = kafka.bootstrap_for("SASL_PLAINTEXT").partition(":")
    with FaultProxy((host, int(port))) as proxy:
        options: dict[str, Any] = sasl(
            kafka, "alice", mechanism, password="wrong", bootstrap=proxy.bootstrap_servers
        )
        if mechanism == "OAUTHBEARER":
            options["sasl_oauth_token_provider"] = lambda: OAuthBearerToken("not-a-jwt")
        started = time.monotonic()
        with anyio.fail_after(PROMPT), pytest.raises(SaslAuthenticationError) as info:
            async with Producer(**options) as producer:
                await producer.send_and_wait(unique("sasl"), b"refused")
        assert proxy.connections == 1, f"{proxy.connections} in {time.monotonic() - started} s"
    assert f"({proxy.bootstrap_servers}: SASL {mechanism} " in str(info.value)
    assert "authentication failed" in str(info.value)


@pytest.mark.one_backend
async def test_oauthbearer_tokens_are_renewed_by_reauthentication(kafka: KafkaCluster) -> None:
    """The broker ends a session when its token expires (KIP-368, even without
    connections.max.reauth.ms): short-lived tokens are replaced on the open connections."""
    issued: list[OAuthBearerToken] = []
    jwt = UnsecuredJwtProvider("alice", lifetime=2)

    def provider() -> OAuthBearerToken:
        issued.append(jwt())
        return issued[-1]

    options = {
        "bootstrap_servers": kafka.bootstrap_for("SASL_PLAINTEXT"),
        "sasl_mechanism": "OAUTHBEARER",
        "sasl_oauth_token_provider": provider,
    }
    topic, sent = unique("oauth"), 0
    with krafka_debug_logs() as logs:
        async with Producer(**options, linger=0) as producer:
            deadline = anyio.current_time() + 4.5
            while anyio.current_time() < deadline:
                await producer.send_and_wait(topic, b"%d" % sent)
                sent += 1
                await anyio.sleep(0.05)
    renewed = [line for line in logs.lines if "re-authenticated" in line]
    assert len(renewed) >= 2 and all("OAUTHBEARER" in line for line in renewed), logs.text
    assert len(issued) >= len(renewed) + 1
    assert not [line for line in logs.lines if line.startswith(("WARNING", "ERROR"))]
    async with AdminClient(**sasl(kafka, "admin")) as admin:
        ends = await admin.list_offsets([TopicPartition(topic, p) for p in range(4)])
    assert sum(e.offset for e in ends.raise_for_errors().values() if e) == sent
