"""Helpers of the security tests: client settings per principal and listener, a log capture."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from krafka.io.transport import create_ssl_context
from krafka.sansio.secret import Secret
from krafka.testing.kafka import KafkaCluster


def sasl(
    cluster: KafkaCluster,
    user: str,
    mechanism: str = "SCRAM-SHA-256",
    *,
    password: str | Secret | None = None,
    bootstrap: str | None = None,
) -> dict[str, Any]:
    """Client keywords authenticating `user` on the SASL_PLAINTEXT listener."""
    return {
        "bootstrap_servers": bootstrap or cluster.bootstrap_for("SASL_PLAINTEXT"),
        "sasl_mechanism": mechanism,
        "sasl_username": user,
        "sasl_password": cluster.users[user] if password is None else password,
    }


def mtls(cluster: KafkaCluster, *, bootstrap: str | None = None, **context: Any) -> dict[str, Any]:
    """Client keywords for the SSL listener with the cluster's CA and client certificate;
    `context` overrides `create_ssl_context`'s arguments (`cafile=`, `certfile=None`, ...)."""
    tls = cluster.tls
    assert tls is not None
    options: dict[str, Any] = {
        "cafile": str(tls.ca),
        "certfile": str(tls.client_cert),
        "keyfile": str(tls.client_key),
        **context,
    }
    return {
        "bootstrap_servers": bootstrap or cluster.bootstrap_for("SSL"),
        "ssl_context": create_ssl_context(**options),
    }


ROOT: Final = Path(__file__).resolve().parents[3]
#: `connections.max.reauth.ms` of the hostile cluster (KIP-368 sessions of 2 s).
REAUTH_MS: Final = 2000


@dataclass(frozen=True)
class CliRun:
    returncode: int
    stdout: str
    stderr: str


def run_cli(*args: str, stdin: str | None = None, timeout: float = 60) -> CliRun:
    """`krafka ARGS` as an operator runs it (a subprocess of this interpreter)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200"}
    env.pop("KRAFKA_BOOTSTRAP_SERVERS", None)
    done = subprocess.run(
        [sys.executable, "-m", "krafka.cli", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        cwd=ROOT,
    )
    return CliRun(done.returncode, done.stdout, done.stderr)


def write_properties(path: Path, properties: dict[str, str]) -> Path:
    path.write_text("".join(f"{k}={v}\n" for k, v in properties.items()))
    return path


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


class Captured(logging.Handler):
    """Every record of the `krafka` loggers, formatted with its traceback."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(self.format(record))

    @property
    def text(self) -> str:
        return "\n".join(self.lines)


@contextmanager
def krafka_debug_logs() -> Iterator[Captured]:
    """All `krafka` loggers at DEBUG for the block."""
    logger = logging.getLogger("krafka")
    handler = Captured()
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    try:
        yield handler
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


#: The rules the authorization tests run under, granted once by the super user. Topics and
#: transactional ids are matched by prefix, so each test makes resources of its own:
#: `w-*` topics alice writes (and creates, and reads the configs of) and bob reads, `ro-*`
#: topics alice may only describe, `hidden-*` topics only the super user sees; `tx-*`
#: transactional ids are alice's; `g-*` groups are bob's, and alice's for `tx-*` offsets.
GRANTS: Final = (
    ("TOPIC", "w-", "User:alice", ("WRITE", "DESCRIBE", "CREATE", "DESCRIBE_CONFIGS")),
    ("TOPIC", "ro-", "User:alice", ("DESCRIBE",)),
    ("TRANSACTIONAL_ID", "tx-", "User:alice", ("WRITE", "DESCRIBE")),
    ("TOPIC", "w-", "User:bob", ("READ", "DESCRIBE")),
    ("GROUP", "g-", "User:bob", ("READ",)),
    ("GROUP", "g-", "User:alice", ("READ",)),
)


@dataclass(frozen=True)
class Authz:
    """The authorizer cluster with `GRANTS` in place."""

    cluster: KafkaCluster
