"""Delegation tokens (KIP-48) on Apache Kafka: a SASL user creates one, a job logs in with it
(SCRAM with `tokenauth=true`) to produce and consume, the owner renews and expires it, and an
expired token no longer logs in."""

from __future__ import annotations

import time
from typing import Any

import anyio
import pytest
from _members import eventually, unique

from krafka import AdminClient, Consumer, DelegationToken, NewTopic, Producer, TopicPartition
from krafka.config import keywords_from_config
from krafka.errors import (
    AuthenticationError,
    DelegationTokenNotFoundError,
    DelegationTokenRequestNotAllowedError,
    KafkaTimeoutError,
)

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(90), pytest.mark.one_backend]


def _alice(cluster: Any) -> dict[str, Any]:
    return {
        "bootstrap_servers": cluster.bootstrap_for("SASL_PLAINTEXT"),
        "sasl_mechanism": "SCRAM-SHA-256",
        "sasl_username": "alice",
        "sasl_password": "alice-secret",
        "default_api_timeout": 15.0,
    }


def _token_login(cluster: Any, token: DelegationToken) -> dict[str, Any]:
    """The Java properties a job gets: the token through `sasl.jaas.config`."""
    jaas = (
        "org.apache.kafka.common.security.scram.ScramLoginModule required "
        f'username="{token.token_id}" password="{token.password.reveal()}" tokenauth="true";'
    )
    return keywords_from_config(
        {
            "bootstrap.servers": cluster.bootstrap_for("SASL_PLAINTEXT"),
            "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": "SCRAM-SHA-512",
            "sasl.jaas.config": jaas,
        },
        "client",
    )


async def _logs_in(options: dict[str, Any]) -> bool:
    try:
        async with AdminClient(**options, default_api_timeout=5.0) as admin:
            await admin.list_topics()
    except (AuthenticationError, KafkaTimeoutError):
        return False
    return True


async def test_a_token_is_created_used_renewed_and_expired(kafka_cluster_factory: Any) -> None:
    cluster = kafka_cluster_factory(
        1, listeners=("PLAINTEXT", "SASL_PLAINTEXT"), delegation_tokens=True
    )
    topic = unique("dt")
    before = int(time.time() * 1000)
    async with AdminClient(**_alice(cluster)) as alice:
        token = await alice.create_delegation_token(renewers=["User:bob"], max_lifetime=3600)
        assert token.owner == token.requester == "User:alice"
        assert token.renewers == ("User:bob",)
        assert before - 1000 <= token.issue_timestamp < token.expiry_timestamp
        assert token.expiry_timestamp <= token.max_timestamp
        assert token.max_timestamp == token.issue_timestamp + 3_600_000
        assert token.hmac and token.hmac.hex() not in repr(token)

        described = await eventually(
            lambda: alice.describe_delegation_tokens(),
            lambda ts: token.token_id in {t.token_id for t in ts},
        )
        (mine,) = [t for t in described if t.token_id == token.token_id]
        assert mine == token
        assert await alice.describe_delegation_tokens(owners=["User:bob"]) == [token]  # renewer
        assert await alice.describe_delegation_tokens(owners=["User:carol"]) == []
        await alice.create_topics([NewTopic(topic, 1)])

        # a job logs in with the token (keywords, and Java's JAAS line) and produces/consumes
        async with Producer(
            **token.sasl_options(), bootstrap_servers=_alice(cluster)["bootstrap_servers"]
        ) as producer:
            meta = await producer.send_and_wait(topic, b"with a token")
        async with Consumer(**_token_login(cluster, token)) as consumer:
            await consumer.assign([TopicPartition(topic, 0)])
            await consumer.seek(TopicPartition(topic, 0), meta.offset)
            with anyio.fail_after(15):
                record = await consumer.recv()
            assert record.value == b"with a token"

        # a token-authenticated client may not make tokens of its own (KIP-48)
        async with AdminClient(**_token_login(cluster, token)) as as_token:
            with pytest.raises(DelegationTokenRequestNotAllowedError):
                await as_token.create_delegation_token()

        renewed = await alice.renew_delegation_token(token.hmac, renew_period=600)
        assert token.issue_timestamp < renewed <= token.max_timestamp
        expired = await alice.expire_delegation_token(token)
        assert expired <= int(time.time() * 1000) + 1000
        await eventually(lambda: _logs_in(_token_login(cluster, token)), lambda ok: not ok)
        with pytest.raises(DelegationTokenNotFoundError):
            await alice.renew_delegation_token(token.hmac)


async def test_tokens_need_a_sasl_login(kafka_cluster_factory: Any) -> None:
    """Over PLAINTEXT (no authenticated principal) the broker refuses to make a token."""
    cluster = kafka_cluster_factory(
        1, listeners=("PLAINTEXT", "SASL_PLAINTEXT"), delegation_tokens=True
    )
    async with AdminClient(cluster.bootstrap_servers, default_api_timeout=15.0) as anonymous:
        with pytest.raises(DelegationTokenRequestNotAllowedError):
            await anonymous.create_delegation_token()
