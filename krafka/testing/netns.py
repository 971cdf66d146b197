"""Network namespaces for Apache Kafka nodes, so a test can cut the network between the client
and one broker while the brokers keep talking to each other.

    lab = NetworkLab.create([1, 2, 3])        # root, with `ip`: one namespace per node
    lab.client_host(1)                        # "198.18.T.6": where node 1 serves clients
    lab.isolate(1); lab.heal(1)               # the client's link to node 1 down / up again
    lab.close()                               # namespaces, links and the bridge removed

Each node gets two links: a *client* veth pair to the root namespace (where the test's clients
run), and a *fabric* veth on a bridge shared by the nodes only (inter-broker and controller
traffic; the root namespace has no address on it). Taking the root side of a client link down
drops the packets silently both ways, as a real partition does: connections hang, nothing is
refused. Addresses come from 198.18.0.0/15 (RFC 2544's range for test networks), one /24 of
each half per lab; interfaces and namespaces are named `kf<tag>...` with the creating process's
id in the namespace name, so `remove_stale()` clears what a killed test run left behind.

`tc` filters would be the finer tool, but kernels without the traffic-control modules (this
project's VMs) refuse them; link state works everywhere `ip netns add` does.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import re
import shutil
import subprocess
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final

_CLIENT_NET: Final = "198.18"
_FABRIC_NET: Final = "198.19"
_PREFIX: Final = "kf"
_LIVE: set[NetworkLab] = set()


class NetnsUnavailable(RuntimeError):
    """This machine cannot make network namespaces (not root, no `ip`, or refused)."""


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(["ip", *args], capture_output=True, text=True, timeout=30)
    if check and done.returncode != 0:
        raise NetnsUnavailable(f"ip {' '.join(args)}: {done.stderr.strip()}")
    return done


def available() -> str | None:
    """None when namespaces can be made here, else why not."""
    if shutil.which("ip") is None:
        return "the `ip` tool (iproute2) is not installed"
    if os.geteuid() != 0:
        return "network namespaces need root"
    probe = f"{_PREFIX}probe{os.getpid()}"
    done = _ip("netns", "add", probe, check=False)
    if done.returncode != 0:
        return f"`ip netns add` refused: {done.stderr.strip()}"
    _ip("netns", "delete", probe, check=False)
    return None


@dataclass(frozen=True, slots=True)
class NodeLinks:
    """One node's namespace and addresses."""

    node_id: int
    namespace: str
    client_link: str  # root side of the client veth pair
    client_host: str  # the node's address on the client link
    fabric_host: str  # the node's address on the brokers' bridge


class NetworkLab:
    """Namespaces, links and a bridge for some nodes; `close()` removes all of it."""

    def __init__(self, tag: int, bridge: str, nodes: Sequence[NodeLinks]) -> None:
        self.tag = tag
        self.bridge = bridge
        self.nodes = {n.node_id: n for n in nodes}
        self.isolated: set[int] = set()

    @classmethod
    def create(cls, node_ids: Iterable[int]) -> NetworkLab:
        reason = available()
        if reason is not None:
            raise NetnsUnavailable(reason)
        remove_stale()
        tag = _free_tag()
        bridge = f"{_PREFIX}{tag}br"
        lab = cls(tag, bridge, [])
        _LIVE.add(lab)
        try:
            _ip("link", "add", bridge, "type", "bridge")
            _ip("link", "set", bridge, "up")
            for node_id in node_ids:
                lab.nodes[node_id] = lab._add_node(node_id)
        except BaseException:
            lab.close()
            raise
        return lab

    def _add_node(self, node_id: int) -> NodeLinks:
        if not 1 <= node_id <= 60:
            raise ValueError("node ids 1..60 fit a lab's addresses")
        tag = self.tag
        namespace = f"{_PREFIX}{tag}n{node_id}p{os.getpid()}"
        client_link, fabric_link = f"{_PREFIX}{tag}c{node_id}", f"{_PREFIX}{tag}f{node_id}"
        root_host = f"{_CLIENT_NET}.{tag}.{4 * node_id + 1}"
        client_host = f"{_CLIENT_NET}.{tag}.{4 * node_id + 2}"
        fabric_host = f"{_FABRIC_NET}.{tag}.{node_id}"
        _ip("netns", "add", namespace)
        links = NodeLinks(node_id, namespace, client_link, client_host, fabric_host)
        _ip(
            "link", "add", client_link, "type", "veth", "peer", "name", "client", "netns", namespace
        )
        _ip("addr", "add", f"{root_host}/30", "dev", client_link)
        _ip("link", "set", client_link, "up")
        _ip(
            "link", "add", fabric_link, "type", "veth", "peer", "name", "fabric", "netns", namespace
        )
        _ip("link", "set", fabric_link, "master", self.bridge)
        _ip("link", "set", fabric_link, "up")
        inside = ("-n", namespace)
        _ip(*inside, "link", "set", "lo", "up")
        _ip(*inside, "addr", "add", f"{client_host}/30", "dev", "client")
        _ip(*inside, "link", "set", "client", "up")
        _ip(*inside, "addr", "add", f"{fabric_host}/24", "dev", "fabric")
        _ip(*inside, "link", "set", "fabric", "up")
        return links

    def client_host(self, node_id: int) -> str:
        return self.nodes[node_id].client_host

    def fabric_host(self, node_id: int) -> str:
        return self.nodes[node_id].fabric_host

    def exec_prefix(self, node_id: int) -> list[str]:
        """Run a command inside the node's namespace: prefix it with this."""
        return ["ip", "netns", "exec", self.nodes[node_id].namespace]

    def isolate(self, node_id: int) -> None:
        """Cut the client's link to a node (its packets vanish both ways)."""
        _ip("link", "set", self.nodes[node_id].client_link, "down")
        self.isolated.add(node_id)

    def heal(self, node_id: int | None = None) -> None:
        """Bring one (None: every) cut client link back."""
        for nid in [node_id] if node_id is not None else sorted(self.isolated):
            _ip("link", "set", self.nodes[nid].client_link, "up")
            self.isolated.discard(nid)

    def close(self) -> None:
        """Remove the namespaces (their processes should be gone), links and bridge."""
        _LIVE.discard(self)
        for links in self.nodes.values():
            _ip("link", "delete", links.client_link, check=False)
            _ip("link", "delete", f"{_PREFIX}{self.tag}f{links.node_id}", check=False)
            _ip("netns", "delete", links.namespace, check=False)
        _ip("link", "delete", self.bridge, check=False)


def _free_tag() -> int:
    used = {int(m) for m in re.findall(rf"\b{_PREFIX}(\d+)br\b", _ip("link", "show").stdout)}
    for tag in range(1, 255):
        if tag not in used:
            return tag
    raise NetnsUnavailable("every lab tag is in use")


def remove_stale() -> None:
    """Remove namespaces and links of labs whose creating process is gone."""
    names = _ip("netns", "list", check=False).stdout.split()
    stale_tags: set[str] = set()
    for name in names:
        match = re.fullmatch(rf"{_PREFIX}(\d+)n\d+p(\d+)", name)
        if match and not _alive(int(match.group(2))):
            _ip("netns", "delete", name, check=False)
            stale_tags.add(match.group(1))
    if not stale_tags:
        return
    for link in re.findall(rf"\b({_PREFIX}\d+(?:br|c\d+|f\d+))[@:]", _ip("link", "show").stdout):
        tag = re.match(rf"{_PREFIX}(\d+)", link)
        if tag and tag.group(1) in stale_tags:
            _ip("link", "delete", link, check=False)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@atexit.register
def _close_leftovers() -> None:
    for lab in list(_LIVE):
        with contextlib.suppress(Exception):
            lab.close()
