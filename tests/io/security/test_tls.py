"""TLS and mutual TLS on Apache Kafka's own SSL listeners.

A correct setup works for the producer, the consumer, the admin client and the CLI; a broker
certificate for another host, from an unknown CA or expired, and a missing client certificate
are each refused with an error naming the address and the cause, at once, after one connection
(counted by a TCP proxy in front of the listener: no retry storm).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import anyio
import pytest
from _security import mtls, run_cli, unique, write_properties

from krafka import Consumer, Producer, TopicPartition
from krafka.config import keywords_from_config
from krafka.errors import AuthenticationError
from krafka.io.admin import AdminClient
from krafka.testing.kafka import KafkaCluster
from krafka.testing.proxy import FaultProxy
from krafka.testing.tls import TlsMaterial

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]

PROMPT: Final = 10.0
CLIENTS: Final = {"producer": Producer, "consumer": Consumer, "admin": AdminClient}


def mtls_properties(cluster: KafkaCluster, listener: str = "SSL") -> dict[str, str]:
    """Java-style properties for mutual TLS (hostname verification left at its default)."""
    tls = cluster.tls
    assert tls is not None
    return {
        "bootstrap.servers": cluster.bootstrap_for(listener),
        "security.protocol": "SSL",
        "ssl.ca.location": str(tls.ca),
        "ssl.certificate.location": str(tls.client_cert),
        "ssl.key.location": str(tls.client_key),
    }


async def test_mutual_tls_serves_every_client_and_checks_the_host_name(kafka: KafkaCluster) -> None:
    config = mtls_properties(kafka)
    built = keywords_from_config(config, "client")["ssl_context"]
    assert built.check_hostname  # on unless ssl.endpoint.identification.algorithm says ""
    topic = unique("tls")
    async with AdminClient.from_config(config) as admin:
        assert (await admin.describe_cluster()).nodes
    async with Producer.from_config(config) as producer:
        meta = await producer.send_and_wait(topic, b"over mtls")
    async with Consumer.from_config({**config, "auto.offset.reset": "earliest"}) as consumer:
        await consumer.assign([TopicPartition(topic, meta.partition)])
        with anyio.fail_after(PROMPT):
            records: list[Any] = []
            while not records:
                records = await consumer.poll(timeout=1)
    assert [r.value for r in records] == [b"over mtls"]


@dataclass(frozen=True)
class Refusal:
    """A client TLS setup the broker or the client must refuse, and what the error says."""

    hostile: bool  # on `hostile_cluster` (its TLS listeners present bad certificates)
    listener: str
    context: Callable[[TlsMaterial], dict[str, Any]]
    says: str


REFUSALS: Final = {
    "unknown CA": Refusal(
        False, "SSL", lambda tls: {"cafile": str(tls.other_ca)},
        "TLS certificate of {where} rejected: self-signed certificate in certificate chain",
    ),
    "no client certificate": Refusal(
        False, "SSL", lambda tls: {"certfile": None, "keyfile": None},
        "TLS with {where} failed: the broker refused the client certificate",
    ),
    "wrong host": Refusal(
        True, "SSL", lambda tls: {},
        "TLS certificate of {where} rejected: IP address mismatch",
    ),
    "expired": Refusal(
        True, "SASL_SSL", lambda tls: {},
        "TLS certificate of {where} rejected: certificate has expired",
    ),
}  # fmt: skip


@pytest.mark.parametrize("client", list(CLIENTS))
@pytest.mark.parametrize("case", list(REFUSALS))
async def test_a_refused_certificate_is_one_attempt_naming_broker_and_cause(
    kafka: KafkaCluster, hostile_cluster: KafkaCluster, case: str, client: str
) -> None:
    refusal = REFUSALS[case]
    cluster = hostile_cluster if refusal.hostile else kafka
    assert cluster.tls is not None
    host, _, port = cluster.bootstrap_for(refusal.listener).partition(":")
    sasl: dict[str, Any] = {}
    if refusal.listener == "SASL_SSL":
        sasl = {"sasl_mechanism": "PLAIN", "sasl_username": "alice", "sasl_password": "x"}
    with FaultProxy((host, int(port))) as proxy:
        context = refusal.context(cluster.tls)
        options = {**mtls(cluster, bootstrap=proxy.bootstrap_servers, **context), **sasl}
        started = time.monotonic()
        with anyio.fail_after(PROMPT), pytest.raises(AuthenticationError) as info:
            async with CLIENTS[client](**options) as opened:
                if isinstance(opened, Producer):
                    await opened.send_and_wait(unique("tls"), b"refused")
        elapsed = time.monotonic() - started
        assert proxy.connections == 1, f"{proxy.connections} connections in {elapsed:.1f} s"
    assert refusal.says.format(where=proxy.bootstrap_servers) in str(info.value)


def test_the_cli_over_mutual_tls_with_a_command_config(kafka: KafkaCluster, tmp_path: Path) -> None:
    good = mtls_properties(kafka)
    bootstrap = good.pop("bootstrap.servers")
    config = write_properties(tmp_path / "mtls.properties", good)
    topic = unique("tls-cli")
    cli = ("--bootstrap-server", bootstrap, "--command-config", str(config))
    produced = run_cli(*cli, "produce", topic, stdin="one\ntwo\n")
    assert produced.returncode == 0, produced.stderr
    consumed = run_cli(*cli, "consume", topic, "--from-beginning", "--count", "2")
    assert (consumed.returncode, consumed.stdout.split()) == (0, ["one", "two"]), consumed.stderr
    assert kafka.tls is not None
    unknown_ca = {**good, "ssl.ca.location": str(kafka.tls.other_ca)}
    bad = write_properties(tmp_path / "bad.properties", unknown_ca)
    started = time.monotonic()
    refused = run_cli(
        "--bootstrap-server", bootstrap, "--command-config", str(bad), "topics", "list"
    )
    assert time.monotonic() - started < 30
    assert refused.returncode == 1 and refused.stdout == ""
    (line,) = refused.stderr.strip().splitlines()
    assert line.startswith("krafka: error: ") and "TLS certificate of " + bootstrap in line, line
    assert "self-signed certificate in certificate chain" in line
