"""Per-connection metrics of one `ClientCore`, as Java's client keeps them.

Java's selector and network client count, per client (the `producer-metrics` /
`consumer-metrics` connection group) and per broker (`producer-node-metrics` ...): requests
sent and answered, bytes each way, request sizes, request latency, connections opened and
closed, authentications; the core tells `ConnectionStats` of every request it puts on a
connection, every answer and failure, every byte and every connection event, with its `now`.
krafka also keeps them per API (Java's broker does, its client does not), and the throttle
times of Produce and Fetch answers. Latencies and throttle times are in seconds; rates are over
Java's sliding window (`krafka.sansio.rate`); averages and maxima are since the start.

A request is counted once, in its (node, API) cell; the client's, a node's and an API's values
are sums over cells, made when a snapshot is taken, so the request path stays short.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from krafka.protocol import ApiKey
from krafka.sansio.rate import WindowedRate
from krafka.sansio.responses import java_api_name

#: The node id of a connection whose broker the metadata does not name (a bootstrap server).
UNKNOWN_NODE = -1


class _Cell:
    """Requests, answers and latency of one (node, API)."""

    __slots__ = (
        "failures",
        "latency_max",
        "latency_sum",
        "request_bytes",
        "request_rate",
        "requests",
        "response_rate",
        "responses",
        "size_max",
    )

    def __init__(self) -> None:
        self.requests = 0
        self.responses = 0
        self.failures = 0
        self.request_bytes = 0
        self.size_max = 0
        self.latency_sum = 0.0
        self.latency_max = 0.0
        self.request_rate = WindowedRate()
        self.response_rate = WindowedRate()


def _traffic(cells: Iterable[_Cell], now: float) -> dict[str, float]:
    """Java's request metrics of the sum of `cells`."""
    requests = responses = failures = request_bytes = size_max = 0
    latency_sum = latency_max = request_rate = response_rate = 0.0
    for cell in cells:
        requests += cell.requests
        responses += cell.responses
        failures += cell.failures
        request_bytes += cell.request_bytes
        size_max = max(size_max, cell.size_max)
        latency_sum += cell.latency_sum
        latency_max = max(latency_max, cell.latency_max)
        request_rate += cell.request_rate.rate(now)
        response_rate += cell.response_rate.rate(now)
    return {
        "request-total": float(requests),
        "request-rate": request_rate,
        "response-total": float(responses),
        "response-rate": response_rate,
        "request-failed-total": float(failures),
        "request-size-avg": request_bytes / requests if requests else 0.0,
        "request-size-max": float(size_max),
        "request-latency-avg": latency_sum / responses if responses else 0.0,
        "request-latency-max": latency_max,
    }


class _Bytes:
    """Bytes read and written on the connections to one node."""

    __slots__ = ("incoming", "incoming_rate", "outgoing", "outgoing_rate")

    def __init__(self) -> None:
        self.incoming = 0
        self.outgoing = 0
        self.incoming_rate = WindowedRate()
        self.outgoing_rate = WindowedRate()


def _bytes(counted: Iterable[_Bytes], now: float) -> dict[str, float]:
    counted = list(counted)
    return {
        "incoming-byte-total": float(sum(b.incoming for b in counted)),
        "incoming-byte-rate": sum(b.incoming_rate.rate(now) for b in counted),
        "outgoing-byte-total": float(sum(b.outgoing for b in counted)),
        "outgoing-byte-rate": sum(b.outgoing_rate.rate(now) for b in counted),
    }


class _Throttle:
    __slots__ = ("count", "max", "sum")

    def __init__(self) -> None:
        self.count = 0
        self.sum = 0.0
        self.max = 0.0


#: The throttle metrics (Java's names) of the APIs whose answers Java reports throttling of.
_THROTTLED: dict[int, str] = {
    ApiKey.PRODUCE: "produce-throttle-time",
    ApiKey.FETCH: "fetch-throttle-time",
}


@dataclass(frozen=True, slots=True)
class ConnectionMetrics:
    """A snapshot: `client` holds the connection group's Java names (`connection-count`,
    `request-rate`, `produce-throttle-time-avg`, ...), `nodes` each broker's node metrics
    (node id -> `request-latency-avg`, `outgoing-byte-rate`, ...), `apis` the same per API
    name (`"Produce"`), `node_apis` per (node id, API name) for exporters' labels."""

    client: Mapping[str, float] = field(default_factory=dict)
    nodes: Mapping[int, Mapping[str, float]] = field(default_factory=dict)
    apis: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    node_apis: Mapping[tuple[int, str], Mapping[str, float]] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        """What a client's `metrics()` holds under `connection-metrics`, `node-metrics`,
        `api-metrics` and `node-api-metrics` ((node id, API name) -> values)."""
        return {
            "connection-metrics": dict(self.client),
            "node-metrics": {node: dict(values) for node, values in self.nodes.items()},
            "api-metrics": {api: dict(values) for api, values in self.apis.items()},
            "node-api-metrics": {key: dict(values) for key, values in self.node_apis.items()},
        }


class ConnectionStats:
    """Counters the core feeds (not thread-safe: one core, one event loop; a snapshot from
    another thread retries when a dict changed under it)."""

    def __init__(self) -> None:
        self._cells: dict[tuple[int, int], _Cell] = {}
        self._bytes: dict[int, _Bytes] = {}
        self._conn_bytes: dict[int, _Bytes] = {}
        self._pending: dict[tuple[int, int], tuple[_Cell, float]] = {}
        self._throttles = {api: _Throttle() for api in _THROTTLED}
        self._created = 0
        self._closed = 0
        self._creation_rate = WindowedRate()
        self._close_rate = WindowedRate()
        self._auth_ok = 0
        self._auth_failed = 0
        self._reauth_ok = 0
        self._reauth_failed = 0
        self.now = 0.0

    # -- what the core tells --------------------------------------------------------------------

    def connection_created(self, conn_id: int, node: int, now: float) -> None:
        """Connection `conn_id` to `node` is up: its bytes count for that node."""
        self._conn_bytes[conn_id] = self._node_bytes(node)
        self._created += 1
        self._creation_rate.record(1, now)
        self.now = now

    def connection_moved(self, conn_id: int, node: int) -> None:
        """Connection `conn_id` turned out to go to `node`: its next bytes count there."""
        if conn_id in self._conn_bytes:
            self._conn_bytes[conn_id] = self._node_bytes(node)

    def connection_closed(self, conn_id: int, now: float) -> None:
        self._conn_bytes.pop(conn_id, None)
        self._closed += 1
        self._close_rate.record(1, now)
        self.now = now

    def authenticated(self, reauthentication: bool) -> None:
        if reauthentication:
            self._reauth_ok += 1
        else:
            self._auth_ok += 1

    def authentication_failed(self, reauthentication: bool) -> None:
        if reauthentication:
            self._reauth_failed += 1
        else:
            self._auth_failed += 1

    def request_sent(
        self, conn_id: int, correlation_id: int, node: int, api_key: int, size: int, now: float
    ) -> None:
        cell = self._cells.get((node, api_key))
        if cell is None:
            cell = self._cells[node, api_key] = _Cell()
        cell.requests += 1
        cell.request_bytes += size
        if size > cell.size_max:
            cell.size_max = size
        cell.request_rate.record(1, now)
        self._pending[conn_id, correlation_id] = (cell, now)
        self.now = now

    def request_answered(
        self, conn_id: int, correlation_id: int, api_key: int, throttle_ms: int, now: float
    ) -> float | None:
        """Counts the answer; returns the request's latency (None: not one counted)."""
        pending = self._pending.pop((conn_id, correlation_id), None)
        if pending is None:
            return None
        cell, sent_at = pending
        latency = now - sent_at if now > sent_at else 0.0
        cell.responses += 1
        cell.latency_sum += latency
        if latency > cell.latency_max:
            cell.latency_max = latency
        cell.response_rate.record(1, now)
        throttle = self._throttles.get(api_key)
        if throttle is not None:
            seconds = throttle_ms / 1000
            throttle.count += 1
            throttle.sum += seconds
            if seconds > throttle.max:
                throttle.max = seconds
        self.now = now
        return latency

    def request_failed(self, conn_id: int, correlation_id: int, now: float) -> float | None:
        """Counts a request that got no answer; returns how long it waited."""
        pending = self._pending.pop((conn_id, correlation_id), None)
        if pending is None:
            return None
        cell, sent_at = pending
        cell.failures += 1
        self.now = now
        return max(0.0, now - sent_at)

    def bytes_read(self, conn_id: int, size: int, now: float) -> None:
        counted = self._conn_bytes.get(conn_id)
        if counted is not None:
            counted.incoming += size
            counted.incoming_rate.record(size, now)
        self.now = now

    def bytes_written(self, conn_id: int, size: int) -> None:
        counted = self._conn_bytes.get(conn_id)
        if counted is not None:
            counted.outgoing += size
            counted.outgoing_rate.record(size, self.now)

    def _node_bytes(self, node: int) -> _Bytes:
        counted = self._bytes.get(node)
        if counted is None:
            counted = self._bytes[node] = _Bytes()
        return counted

    # -- the snapshot ---------------------------------------------------------------------------

    def snapshot(self, now: float | None = None) -> ConnectionMetrics:
        """The metrics as of `now` (None: the last time the core saw)."""
        at = self.now if now is None else now
        for _ in range(3):
            try:
                return self._snapshot(at)
            except RuntimeError:  # a dict changed size: the loop thread counted meanwhile
                continue
        return ConnectionMetrics()

    def _snapshot(self, now: float) -> ConnectionMetrics:
        cells = list(self._cells.items())
        counted = list(self._bytes.items())
        client = _traffic((cell for _, cell in cells), now)
        client.update(_bytes((b for _, b in counted), now))
        client.update(self._connections(now))
        for api, throttle in self._throttles.items():
            name = _THROTTLED[api]
            client[f"{name}-avg"] = throttle.sum / throttle.count if throttle.count else 0.0
            client[f"{name}-max"] = throttle.max
        by_node: dict[int, list[_Cell]] = {}
        by_api: dict[str, list[_Cell]] = {}
        for (node, api_key), cell in cells:
            by_node.setdefault(node, []).append(cell)
            by_api.setdefault(java_api_name(api_key), []).append(cell)
        node_ids = by_node.keys() | {node for node, _ in counted}
        nodes = {node: _traffic(by_node.get(node, ()), now) for node in node_ids}
        for node, values in counted:
            nodes[node].update(_bytes([values], now))
        return ConnectionMetrics(
            client=client,
            nodes=nodes,
            apis={api: _traffic(group, now) for api, group in by_api.items()},
            node_apis={
                (node, java_api_name(api_key)): _traffic([cell], now)
                for (node, api_key), cell in cells
            },
        )

    def _connections(self, now: float) -> dict[str, float]:
        return {
            "connection-count": float(self._created - self._closed),
            "connection-creation-total": float(self._created),
            "connection-creation-rate": self._creation_rate.rate(now),
            "connection-close-total": float(self._closed),
            "connection-close-rate": self._close_rate.rate(now),
            "successful-authentication-total": float(self._auth_ok),
            "failed-authentication-total": float(self._auth_failed),
            "successful-reauthentication-total": float(self._reauth_ok),
            "failed-reauthentication-total": float(self._reauth_failed),
        }


__all__ = ["UNKNOWN_NODE", "ConnectionMetrics", "ConnectionStats"]
