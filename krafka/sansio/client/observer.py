"""What a `ClientCore` reports of its connections: `ConnectionStats` counts, DEBUG lines log.

The core calls one hook per event (a connection made, ready or closed, a request put on a
connection, its answer or failure, bytes read or written); this module turns a `Link` into the
broker node it goes to and feeds the counters and the loggers (`krafka.wire` behind one
`isEnabledFor` check per request, `krafka.connection` per transition).
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from krafka.errors import AuthenticationError, KrafkaError
from krafka.sansio import wirelog
from krafka.sansio.client.links import Address, Link, LinkState
from krafka.sansio.client.stats import UNKNOWN_NODE, ConnectionStats
from krafka.sansio.events import RequestFailed, ResponseReceived
from krafka.sansio.metadata import ClusterMetadata
from krafka.sansio.transitions import transition

_DEBUG = logging.DEBUG
_wire = wirelog.log
_log = logging.getLogger("krafka.connection")


class LinkObserver:
    """Counts and logs the connections of one core (`stats` holds the counts)."""

    def __init__(self, cluster: Callable[[], ClusterMetadata]) -> None:
        self.stats = ConnectionStats()
        self._cluster = cluster
        self._nodes: dict[int, int] = {}

    def node(self, link: Link) -> int:
        """The node id of the broker `link` goes to (`UNKNOWN_NODE` while the metadata does
        not name its address: a bootstrap server). A bootstrap connection is its broker's
        once the metadata names it; the bytes it carried before stay with node -1."""
        conn_id = link.conn_id
        node = self._nodes.get(conn_id)
        if node is None:  # closed
            return self._lookup(link.address)
        if node == UNKNOWN_NODE:
            node = self._lookup(link.address)
            if node != UNKNOWN_NODE:
                self._nodes[conn_id] = node
                self.stats.connection_moved(conn_id, node)
        return node

    def _lookup(self, address: Address) -> int:
        for broker in self._cluster().brokers.values():
            if broker.address == address:
                return broker.node_id
        return UNKNOWN_NODE

    def made(self, link: Link, now: float) -> None:
        node = self._nodes[link.conn_id] = self._lookup(link.address)
        self.stats.connection_created(link.conn_id, node, now)
        transition(_log, f"connection {link.where}", LinkState.CONNECTING, link.state)

    def ready(self, link: Link) -> None:
        transition(_log, f"connection {link.where}", link.state, LinkState.READY)

    def closed(self, link: Link, error: KrafkaError | None, now: float) -> None:
        """`link`'s connection ended (before its state changes: a failure of a ready link's
        SASL exchange is a refused re-authentication)."""
        self._nodes.pop(link.conn_id, None)
        self.stats.connection_closed(link.conn_id, now)
        if isinstance(error, AuthenticationError):
            self.stats.authentication_failed(reauthentication=link.ready)
        transition(_log, f"connection {link.where}", link.state, LinkState.CLOSED, error)

    def read(self, link: Link, size: int, now: float) -> None:
        self.stats.bytes_read(link.conn_id, size, now)

    def written(self, link: Link, size: int) -> None:
        self.stats.bytes_written(link.conn_id, size)

    def sent(
        self, link: Link, cid: int, api_key: int, version: int | None, size: int, now: float
    ) -> None:
        """A request went on `link` (`version` None: the connection's negotiated one)."""
        node = self.node(link)
        self.stats.request_sent(link.conn_id, cid, node, api_key, size, now)
        if _wire.isEnabledFor(_DEBUG):
            if version is None:
                assert link.machine is not None  # a request goes on a ready link
                version = link.machine.version_for(api_key)
            wirelog.request_sent(api_key, version, cid, link.where, node)

    def answered(self, link: Link, event: ResponseReceived, now: float) -> None:
        cid = event.correlation_id
        latency = self.stats.request_answered(
            link.conn_id, cid, event.api_key, event.throttle_time_ms, now
        )
        if _wire.isEnabledFor(_DEBUG):
            node = self.node(link)
            wirelog.response_received(
                event.api_key, event.api_version, cid, link.where, node, latency, event.response
            )

    def failed(self, link: Link, event: RequestFailed, now: float) -> None:
        waited = self.stats.request_failed(link.conn_id, event.correlation_id, now)
        if _wire.isEnabledFor(_DEBUG):
            node = self.node(link)
            wirelog.request_failed(event.correlation_id, link.where, node, waited, event.error)


__all__ = ["LinkObserver"]
