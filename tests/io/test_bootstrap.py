"""Bootstrapping past bad addresses: whatever one bootstrap server does wrong (answers garbage,
stays silent, closes, fails TLS), the client moves on to the next within its connect timeout,
and when none answers the error names every address and why."""

from __future__ import annotations

import contextlib
import http.server
import ssl
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _hostile_servers import HostileServer, Misbehaviour

from krafka import AdminClient
from krafka.errors import KafkaConnectionError, KafkaTimeoutError, KrafkaError
from krafka.io.client import KafkaClient
from krafka.testing import free_port
from krafka.testing.proxy import FaultProxy

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]

#: Seconds a silent server may cost; every start below must finish well within a few of them.
CONNECT = 0.5


def client(servers: list[str], **options: Any) -> KafkaClient:
    return KafkaClient(",".join(servers), connect_timeout=CONNECT, request_timeout=5, **options)


@pytest.mark.parametrize("how", list(Misbehaviour), ids=lambda m: m.value)
@pytest.mark.parametrize("bad_first", [True, False], ids=["bad-first", "good-first"])
async def test_a_bad_bootstrap_address_is_passed_over(
    make_mock_cluster: Any, how: Misbehaviour, bad_first: bool
) -> None:
    good = make_mock_cluster(1).bootstrap_servers
    with HostileServer(how) as bad:
        servers = [bad.address, good] if bad_first else [good, bad.address]
        start = anyio.current_time()
        async with client(servers) as kafka:
            assert kafka.metadata.brokers
        assert anyio.current_time() - start < 3 * CONNECT + 1
        assert (bad.connections >= 1) if bad_first else bad.connections == 0


@pytest.mark.parametrize("how", ["untrusted", "plaintext-garbage", "plaintext-silent"])
async def test_a_bootstrap_address_failing_tls_is_passed_over(
    proxied_broker: Any, certs: Any, how: str
) -> None:
    server_tls: ssl.SSLContext | None = None
    if how == "untrusted":
        server_tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        server_tls.load_cert_chain(certs.other_ca, certs.other_ca.with_suffix(".key"))
    misbehaviour = Misbehaviour.GARBAGE if how == "plaintext-garbage" else Misbehaviour.SILENT
    tls = FaultProxy(proxied_broker.target, ssl_context=certs.server_context(),
                     port=proxied_broker.proxy_port)  # fmt: skip
    with HostileServer(misbehaviour, server_tls) as bad, tls:
        start = anyio.current_time()
        servers = [bad.address, tls.bootstrap_servers]
        async with client(servers, ssl_context=certs.client_context()) as kafka:
            assert kafka.metadata.brokers
        assert anyio.current_time() - start < 3 * CONNECT + 1
        assert bad.connections >= 1


async def test_when_no_bootstrap_address_answers_the_error_names_each_and_why() -> None:
    refused = f"127.0.0.1:{free_port()}"
    with (
        HostileServer(Misbehaviour.GARBAGE) as garbage,
        HostileServer(Misbehaviour.SILENT) as silent,
        HostileServer(Misbehaviour.CLOSE) as closing,
    ):
        servers = [garbage.address, silent.address, closing.address, refused]
        start = anyio.current_time()
        with pytest.raises(KafkaConnectionError) as info:
            async with client(servers):
                pass
        elapsed = anyio.current_time() - start
    message = str(info.value)
    for address in servers:
        assert address in message
    assert "ApiVersions" in message  # the silent one: what it did not answer
    assert elapsed < 4 * CONNECT + 2


@pytest.mark.parametrize("listener", ["tansu", "mock"])
async def test_tls_to_a_plaintext_listener_fails_within_the_connect_timeout(
    proxied_broker: Any, make_mock_cluster: Any, certs: Any, listener: str
) -> None:
    host, port = proxied_broker.target
    address = f"{host}:{port}" if listener == "tansu" else make_mock_cluster(1).brokers[1]
    start = anyio.current_time()
    with pytest.raises(KrafkaError) as info:
        async with KafkaClient(address, ssl_context=certs.client_context(), connect_timeout=1):
            pass
    elapsed = anyio.current_time() - start
    assert elapsed < 2.0, f"took {elapsed:.1f}s with connect_timeout=1"
    message = str(info.value)
    assert address in message and "TLS" in message
    if isinstance(info.value, KafkaTimeoutError):
        assert "1s" in message


class _AnswersAtOnce(http.server.BaseHTTPRequestHandler):
    """A web server's 400 to whatever arrives (http.server itself waits for a line end, which
    a Kafka request need not hold)."""

    def handle(self) -> None:
        self.request.recv(65536)
        self.request_version, self.command, self.requestline = "HTTP/1.1", "GET", "-"
        self.send_error(400)

    def log_message(self, format: str, *args: Any) -> None:
        return None


@contextlib.contextmanager
def _http_server() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _AnswersAtOnce)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


async def test_an_http_server_is_named_as_not_a_kafka_broker() -> None:
    with _http_server() as address, pytest.raises(KrafkaError) as info:
        async with AdminClient(address, connect_timeout=CONNECT, default_api_timeout=5):
            pass
    message = str(info.value)
    assert address in message and "not a Kafka broker but an HTTP server" in message
