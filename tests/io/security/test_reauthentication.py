"""KIP-368 re-authentication on Apache Kafka with 2 s sessions (`connections.max.reauth.ms`):
clients under load re-authenticate their connections without an error or a lost record, and a
user deleted meanwhile is refused at its next re-authentication, clearly and without a storm of
reconnections."""

from __future__ import annotations

import math
import time
from typing import Any, Final

import anyio
import pytest
from _security import REAUTH_MS, krafka_debug_logs, sasl, unique

import krafka.io.sockets
from krafka import Consumer, NewTopic, Producer, ScramDeletion, ScramUpsertion
from krafka.errors import ResourceNotFoundError, SaslAuthenticationError
from krafka.io.admin import AdminClient
from krafka.io.client import KafkaClient
from krafka.protocol.messages import MetadataRequest
from krafka.testing.kafka import KafkaCluster

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]

SESSION: Final = REAUTH_MS / 1000


@pytest.mark.one_backend
async def test_producer_and_consumer_reauthenticate_under_load_and_lose_nothing(
    hostile_cluster: KafkaCluster,
) -> None:
    options = sasl(hostile_cluster, "alice", "SCRAM-SHA-512")
    topic = unique("reauth")
    async with AdminClient(**options) as admin:
        (await admin.create_topics([NewTopic(topic, 2, 1)])).raise_for_errors()
    sent: list[bytes] = []
    got: list[Any] = []
    producer = Producer(**options, linger=0.005)
    consumer = Consumer(
        **options, group_id=unique("g"), auto_offset_reset="earliest", fetch_max_wait=0.5
    )
    with krafka_debug_logs() as logs:
        try:
            await producer.start()
            async with consumer:
                await consumer.subscribe([topic])
                until = anyio.current_time() + 3.5 * SESSION

                async def produce() -> None:
                    while anyio.current_time() < until:
                        value = b"%d" % len(sent)
                        await producer.send_and_wait(topic, value)
                        sent.append(value)
                        await anyio.sleep(0.01)

                async def consume() -> None:
                    while anyio.current_time() < until or len(got) < len(sent):
                        got.extend(await consumer.poll(timeout=0.5))

                with anyio.fail_after(3.5 * SESSION + 60):
                    async with anyio.create_task_group() as tg:
                        tg.start_soon(produce)
                        tg.start_soon(consume)
        except BaseException:
            print(f"sent {len(sent)}, got {len(got)}; krafka's log:\n{logs.text[-30000:]}")
            raise
        finally:
            await producer.close(timeout=10)
    assert sorted(r.value for r in got) == sorted(sent) and len(sent) > 50
    renewals = [line for line in logs.lines if "re-authenticated to" in line]
    assert len(renewals) >= 6, logs.text  # several sessions of several connections
    for client in (producer, consumer):
        counted = client.metrics()["connection-metrics"]
        assert counted["successful-reauthentication-total"] >= 1
        assert counted["failed-reauthentication-total"] == 0
    assert not [line for line in logs.lines if line.startswith(("WARNING", "ERROR"))]


@pytest.mark.one_backend
async def test_a_deleted_user_is_refused_at_the_next_reauthentication(
    hostile_cluster: KafkaCluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    opened = 0
    connect = krafka.io.sockets.open_transport

    async def counting(*args: Any, **kwargs: Any) -> Any:
        nonlocal opened
        opened += 1
        return await connect(*args, **kwargs)

    monkeypatch.setattr(krafka.io.sockets, "open_transport", counting)
    user, password = unique("erin"), unique("pw")
    admin_options = sasl(hostile_cluster, "admin")
    async with AdminClient(**admin_options) as admin:
        made = [ScramUpsertion(user, "SCRAM-SHA-256", password)]
        (await admin.alter_user_scram_credentials(made)).raise_for_errors()
        with anyio.fail_after(10):  # until the broker has applied it
            while not isinstance(
                (await admin.describe_user_scram_credentials([user]))[user], tuple
            ):
                await anyio.sleep(0.02)
        options = sasl(hostile_cluster, user, password=password)
        async with KafkaClient(**options) as client:
            await client.send(MetadataRequest(topics=[]))
            gone = [ScramDeletion(user, "SCRAM-SHA-256")]
            (await admin.alter_user_scram_credentials(gone)).raise_for_errors()
            deleted = time.monotonic()
            with anyio.fail_after(2 * SESSION + 10):
                while True:  # served until the session ends
                    try:
                        await client.send(MetadataRequest(topics=[]))
                    except SaslAuthenticationError as exc:
                        refusal = exc
                        break
                    await anyio.sleep(0.05)
            assert time.monotonic() - deleted < 2 * SESSION + 5
            assert "re-authentication" in str(refusal)
            assert client.connection_metrics().client["failed-reauthentication-total"] >= 1
            assert hostile_cluster.bootstrap_for("SASL_PLAINTEXT") + ": SASL" in str(refusal)
            before = opened
            started = time.monotonic()
            for _ in range(20):  # each answered at once; reconnects only as the backoff allows
                with anyio.fail_after(5), pytest.raises(SaslAuthenticationError):
                    await client.send(MetadataRequest(topics=[]))
                await anyio.sleep(0.05)
            elapsed = time.monotonic() - started
            assert opened - before <= 2 + math.log2(1 + elapsed / 0.08)  # 0.1 s, doubling
        found = (await admin.describe_user_scram_credentials([user]))[user]
        assert isinstance(found, ResourceNotFoundError)
