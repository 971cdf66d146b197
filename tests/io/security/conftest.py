"""Apache Kafka with real security for the security tests, and `_security` importable.

Three clusters, each shared by every test that names it:

- `kafka` (the suite's node): every listener, users admin/alice/bob, no authorizer;
- `authz`: StandardAuthorizer, `admin` the only super user, `_security.GRANTS` in place;
- `hostile_cluster`: sessions of 2 s (`connections.max.reauth.ms`, KIP-368), and TLS
  listeners presenting the certificates a client must refuse: `SSL` one for another host,
  `SASL_SSL` an expired one.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import anyio
import pytest

from krafka import AclBinding
from krafka.io.admin import AdminClient
from krafka.testing.kafka import CLIENT_LISTENERS, KafkaCluster

if TYPE_CHECKING:
    from krafka.testing.pytest_plugin import KafkaClusters

_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

from _security import GRANTS, REAUTH_MS, Authz  # noqa: E402

HOSTILE: Final[dict[str, Any]] = {
    "listeners": CLIENT_LISTENERS,
    "listener_certificates": {"SSL": "wrong_host", "SASL_SSL": "expired"},
    "broker_config": {"connections.max.reauth.ms": REAUTH_MS},
}
AUTHZ: Final[dict[str, Any]] = {
    "listeners": ("PLAINTEXT", "SASL_PLAINTEXT"),
    "authorizer": True,
}


@pytest.fixture(scope="session")
def authz(kafka_clusters: KafkaClusters) -> Authz:
    cluster = kafka_clusters.get(1, **AUTHZ)
    bindings = [
        AclBinding(kind, prefix, "PREFIXED", who, "*", operation, "ALLOW")
        for kind, prefix, who, operations in GRANTS
        for operation in operations
    ]

    async def grant() -> None:
        admin = cluster.users["admin"]
        async with AdminClient(
            bootstrap_servers=cluster.bootstrap_for("SASL_PLAINTEXT"),
            sasl_mechanism="SCRAM-SHA-256",
            sasl_username="admin",
            sasl_password=admin,
        ) as client:
            (await client.create_acls(bindings)).raise_for_errors()
            with anyio.fail_after(30):  # the broker applies them from the metadata log
                while len(await client.describe_acls()) < len(bindings):
                    await anyio.sleep(0.05)

    anyio.run(grant)
    return Authz(cluster)


@pytest.fixture
def hostile_cluster(kafka_cluster_factory: Callable[..., KafkaCluster]) -> KafkaCluster:
    return kafka_cluster_factory(1, **HOSTILE)
