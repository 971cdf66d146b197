"""krafka.testing.netns: namespaces with a client link each and a shared fabric; cutting one
client link leaves the fabric alone; nothing is left behind (also after a killed run).
FaultProxy.partition, the fallback where namespaces cannot be made."""

from __future__ import annotations

import os
import socket
import subprocess
import sys

import pytest

from krafka.testing import netns
from krafka.testing.kafka import _cluster_id
from krafka.testing.proxy import FaultProxy

pytestmark = [pytest.mark.timeout(60)]

needs_netns = pytest.mark.skipif(
    netns.available() is not None, reason=f"{netns.available()} (the proxy fallback is used)"
)

_SERVER = """
import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", int(sys.argv[1]))); s.listen(); print("ready", flush=True)
while True:
    c, _ = s.accept(); c.sendall(b"hello"); c.close()
"""

_CLIENT = """
import socket, sys
with socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=2) as c:
    print(c.recv(5).decode())
"""


def _serve(lab: netns.NetworkLab, node: int, port: int) -> subprocess.Popen[str]:
    command = [*lab.exec_prefix(node), sys.executable, "-c", _SERVER, str(port)]
    server = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    assert server.stdout is not None and server.stdout.readline().strip() == "ready"
    return server


def _hello(host: str, port: int, timeout: float = 1.0) -> bytes | None:
    try:
        with socket.create_connection((host, port), timeout=timeout) as conn:
            return conn.recv(5)
    except OSError:
        return None


def _links() -> str:
    names = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    links = subprocess.run(["ip", "-o", "link", "show"], capture_output=True, text=True).stdout
    return names + links


@needs_netns
def test_isolating_a_node_cuts_the_client_only_and_closing_leaves_nothing() -> None:
    lab = netns.NetworkLab.create([1, 2])
    servers = []
    try:
        servers = [_serve(lab, node, 9999) for node in (1, 2)]
        assert _hello(lab.client_host(1), 9999) == b"hello"
        lab.isolate(1)
        assert _hello(lab.client_host(1), 9999) is None  # silently dropped: a timeout
        assert _hello(lab.client_host(2), 9999) == b"hello"
        # node 2 still reaches node 1 over the fabric
        across = [*lab.exec_prefix(2), sys.executable, "-c", _CLIENT, lab.fabric_host(1), "9999"]
        assert subprocess.run(across, capture_output=True, text=True).stdout.strip() == "hello"
        lab.heal(1)
        assert _hello(lab.client_host(1), 9999, timeout=5) == b"hello"
    finally:
        for server in servers:
            server.kill()
            server.wait()
        lab.close()
    assert f"kf{lab.tag}" not in _links()


@needs_netns
def test_what_a_killed_run_left_is_removed() -> None:
    child = subprocess.run(
        [sys.executable, "-c", "from krafka.testing import netns; import os; "
         "lab = netns.NetworkLab.create([1]); print(lab.tag); os._exit(0)"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    tag = int(child.stdout)
    assert f"kf{tag}n1p" in _links()  # its atexit cleanup never ran
    netns.remove_stale()
    assert f"kf{tag}" not in _links()


def test_a_partitioned_proxy_forwards_nothing_until_healed() -> None:
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]
    with FaultProxy(("127.0.0.1", port)) as proxy:
        proxy.partition()
        client = socket.create_connection(("127.0.0.1", proxy.port), timeout=5)
        client.sendall(b"\x00\x00\x00\x01x")
        server.settimeout(0.5)
        with pytest.raises(TimeoutError):
            server.accept()  # the proxy does not even connect upstream
        proxy.heal()
        server.settimeout(5)
        upstream, _ = server.accept()
        assert upstream.recv(5) == b"\x00\x00\x00\x01x"
        client.close()
        upstream.close()
    server.close()


def test_cluster_ids_never_start_with_a_dash(monkeypatch: pytest.MonkeyPatch) -> None:
    draws = iter([b"\xf8" + bytes(15), b"\x01" + bytes(15)])  # base64url "-..." then "AQ..."
    monkeypatch.setattr(os, "urandom", lambda n: next(draws))
    assert _cluster_id().startswith("AQ")
