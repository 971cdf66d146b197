"""io fixtures: TLS material made by `openssl`, and a Tansu that advertises a proxy's port."""

from __future__ import annotations

import shutil
import ssl
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from krafka.testing import LocalBroker, free_port


@dataclass(frozen=True)
class Certs:
    ca: Path
    other_ca: Path
    server_cert: Path
    server_key: Path
    client_cert: Path
    client_key: Path

    def server_context(self, require_client_cert: bool = False) -> ssl.SSLContext:
        ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        ctx.load_cert_chain(self.server_cert, self.server_key)
        if require_client_cert:
            ctx.verify_mode = ssl.CERT_REQUIRED
            ctx.load_verify_locations(self.ca)
        return ctx

    def client_context(self, ca: Path | None = None, with_cert: bool = False) -> ssl.SSLContext:
        ctx = ssl.create_default_context(cafile=str(ca or self.ca))
        if with_cert:
            ctx.load_cert_chain(self.client_cert, self.client_key)
        return ctx


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True, timeout=30)


def _make_ca(d: Path, name: str) -> None:
    _openssl(
        "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
        "-keyout", f"{name}.key", "-out", f"{name}.crt", "-days", "2", "-subj", f"/CN={name}",
        "-addext", "basicConstraints=critical,CA:TRUE",
        "-addext", "keyUsage=critical,keyCertSign,cRLSign",
        cwd=d,
    )  # fmt: skip


def _make_leaf(d: Path, name: str, ca: str, ext: str) -> None:
    _openssl(
        "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
        "-keyout", f"{name}.key", "-out", f"{name}.csr", "-subj", f"/CN={name}",
        cwd=d,
    )  # fmt: skip
    (d / f"{name}.ext").write_text(ext)
    _openssl(
        "x509", "-req", "-in", f"{name}.csr", "-CA", f"{ca}.crt", "-CAkey", f"{ca}.key",
        "-CAcreateserial", "-out", f"{name}.crt", "-days", "2", "-extfile", f"{name}.ext",
        cwd=d,
    )  # fmt: skip


@pytest.fixture(scope="session")
def certs(tmp_path_factory: pytest.TempPathFactory) -> Certs:
    """A test CA, a server certificate for localhost/127.0.0.1, a client certificate, and an
    unrelated CA (for the wrong-CA case)."""
    if shutil.which("openssl") is None:
        pytest.fail("the openssl CLI is required for the TLS tests")
    d = tmp_path_factory.mktemp("tls")
    _make_ca(d, "ca")
    _make_ca(d, "other-ca")
    _make_leaf(
        d,
        "server",
        "ca",
        "subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n"
        "basicConstraints=CA:FALSE\nkeyUsage=digitalSignature\n",
    )
    _make_leaf(
        d,
        "client",
        "ca",
        "extendedKeyUsage=clientAuth\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature\n",
    )
    return Certs(
        ca=d / "ca.crt",
        other_ca=d / "other-ca.crt",
        server_cert=d / "server.crt",
        server_key=d / "server.key",
        client_cert=d / "client.crt",
        client_key=d / "client.key",
    )


@dataclass(frozen=True)
class ProxiedBroker:
    """A Tansu that advertises `proxy_port`: start a FaultProxy there to sit in every path."""

    broker: LocalBroker
    proxy_port: int

    @property
    def target(self) -> tuple[str, int]:
        return ("127.0.0.1", self.broker.port)

    @property
    def bootstrap_servers(self) -> str:
        return f"127.0.0.1:{self.proxy_port}"


@pytest.fixture(scope="session")
def proxied_broker() -> Iterator[ProxiedBroker]:
    proxy_port = free_port()
    with LocalBroker(advertised_port=proxy_port) as broker:
        yield ProxiedBroker(broker, proxy_port)


@pytest.fixture
def exporter() -> Any:
    """An OpenTelemetry SDK exporter keeping every finished span in memory."""
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    return InMemorySpanExporter()


@pytest.fixture
def provider(exporter: Any) -> Iterator[Any]:
    """An SDK tracer provider whose spans all go to `exporter` as they end."""
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    made = TracerProvider()
    made.add_span_processor(SimpleSpanProcessor(exporter))
    yield made
    made.shutdown()
