"""Per-connection metrics of one `ClientCore`, as Java's client keeps them.

Java's selector and network client count, per client (the `producer-metrics` /
`consumer-metrics` connection group) and per broker (`producer-node-metrics` ...): requests
sent and answered, bytes each way, request sizes, request latency, connections opened and
closed, authentications; the core tells `ConnectionStats` of every request it puts on a
connection, every answer and failure, every byte and every connection event, with its `now`.
krafka also keeps them per API (Java's broker does, its client does not), and the throttle
times of Produce and Fetch answers. Latencies and throttle times are in seconds; rates are over
Java's sliding window (`krafka.sansio.rate`); averages and maxima are since the start.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from krafka.protocol import ApiKey
from krafka.sansio.rate import WindowedRate
from krafka.sansio.responses import java_api_name

#: The node id of a connection whose broker the metadata does not name (a bootstrap server).
UNKNOWN_NODE = -1


class _Traffic:
    """Requests, answers and latency of one scope (the client, a node, an API, a node's API)."""

    __slots__ = (
        "failures",
        "latency_max",
        "latency_sum",
        "request_bytes",
        "request_rate",
        "request_size_max",
        "requests",
        "response_rate",
        "responses",
    )

    def __init__(self) -> None:
        self.requests = 0
        self.responses = 0
        self.failures = 0
        self.request_bytes = 0
        self.request_size_max = 0
        self.latency_sum = 0.0
        self.latency_max = 0.0
        self.request_rate = WindowedRate()
        self.response_rate = WindowedRate()

    def sent(self, size: int, now: float) -> None:
        self.requests += 1
        self.request_bytes += size
        self.request_size_max = max(self.request_size_max, size)
        self.request_rate.record(1, now)

    def answered(self, latency: float, now: float) -> None:
        self.responses += 1
        self.latency_sum += latency
        self.latency_max = max(self.latency_max, latency)
        self.response_rate.record(1, now)

    def java(self, now: float) -> dict[str, float]:
        requests, responses = self.requests, self.responses
        return {
            "request-total": float(requests),
            "request-rate": self.request_rate.rate(now),
            "response-total": float(responses),
            "response-rate": self.response_rate.rate(now),
            "request-failed-total": float(self.failures),
            "request-size-avg": self.request_bytes / requests if requests else 0.0,
            "request-size-max": float(self.request_size_max),
            "request-latency-avg": self.latency_sum / responses if responses else 0.0,
            "request-latency-max": self.latency_max,
        }


class _Bytes:
    """Bytes read and written on one scope."""

    __slots__ = ("incoming", "incoming_rate", "outgoing", "outgoing_rate")

    def __init__(self) -> None:
        self.incoming = 0
        self.outgoing = 0
        self.incoming_rate = WindowedRate()
        self.outgoing_rate = WindowedRate()

    def java(self, now: float) -> dict[str, float]:
        return {
            "incoming-byte-total": float(self.incoming),
            "incoming-byte-rate": self.incoming_rate.rate(now),
            "outgoing-byte-total": float(self.outgoing),
            "outgoing-byte-rate": self.outgoing_rate.rate(now),
        }


class _Throttle:
    __slots__ = ("count", "max", "sum")

    def __init__(self) -> None:
        self.count = 0
        self.sum = 0.0
        self.max = 0.0

    def record(self, seconds: float) -> None:
        self.count += 1
        self.sum += seconds
        self.max = max(self.max, seconds)

    @property
    def avg(self) -> float:
        return self.sum / self.count if self.count else 0.0


@dataclass(frozen=True, slots=True)
class _Pending:
    node: int
    api: str
    sent_at: float


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
        self._all = _Traffic()
        self._nodes: dict[int, _Traffic] = {}
        self._apis: dict[str, _Traffic] = {}
        self._node_apis: dict[tuple[int, str], _Traffic] = {}
        self._bytes = _Bytes()
        self._node_bytes: dict[int, _Bytes] = {}
        self._pending: dict[tuple[int, int], _Pending] = {}
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

    def connection_created(self, now: float) -> None:
        self._created += 1
        self._creation_rate.record(1, now)
        self.now = now

    def connection_closed(self, now: float) -> None:
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
        api = java_api_name(api_key)
        self._pending[conn_id, correlation_id] = _Pending(node, api, now)
        for traffic in self._scopes(node, api):
            traffic.sent(size, now)
        self.now = now

    def request_answered(
        self, conn_id: int, correlation_id: int, api_key: int, throttle_ms: int, now: float
    ) -> float | None:
        """Counts the answer; returns the request's latency (None: not one counted)."""
        pending = self._pending.pop((conn_id, correlation_id), None)
        if pending is None:
            return None
        latency = max(0.0, now - pending.sent_at)
        for traffic in self._scopes(pending.node, pending.api):
            traffic.answered(latency, now)
        throttle = self._throttles.get(api_key)
        if throttle is not None and throttle_ms >= 0:
            throttle.record(throttle_ms / 1000)
        self.now = now
        return latency

    def request_failed(self, conn_id: int, correlation_id: int, now: float) -> float | None:
        """Counts a request that got no answer; returns how long it waited."""
        pending = self._pending.pop((conn_id, correlation_id), None)
        if pending is None:
            return None
        for traffic in self._scopes(pending.node, pending.api):
            traffic.failures += 1
        self.now = now
        return max(0.0, now - pending.sent_at)

    def bytes_read(self, node: int, size: int, now: float) -> None:
        self._count_bytes(node, size, now, incoming=True)

    def bytes_written(self, node: int, size: int, now: float) -> None:
        self._count_bytes(node, size, now, incoming=False)

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
        client = self._all.java(now)
        client.update(self._bytes.java(now))
        client.update(self._connections(now))
        for api, throttle in self._throttles.items():
            name = _THROTTLED[api]
            client[f"{name}-avg"] = throttle.avg
            client[f"{name}-max"] = throttle.max
        nodes: dict[int, dict[str, float]] = {}
        for node, traffic in list(self._nodes.items()):
            nodes[node] = traffic.java(now)
        for node, counted in list(self._node_bytes.items()):
            nodes.setdefault(node, _Traffic().java(now)).update(counted.java(now))
        return ConnectionMetrics(
            client=client,
            nodes=nodes,
            apis={api: traffic.java(now) for api, traffic in list(self._apis.items())},
            node_apis={key: t.java(now) for key, t in list(self._node_apis.items())},
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

    # -- internals ------------------------------------------------------------------------------

    def _scopes(self, node: int, api: str) -> tuple[_Traffic, ...]:
        by_node = self._nodes.get(node)
        if by_node is None:
            by_node = self._nodes[node] = _Traffic()
        by_api = self._apis.get(api)
        if by_api is None:
            by_api = self._apis[api] = _Traffic()
        both = self._node_apis.get((node, api))
        if both is None:
            both = self._node_apis[node, api] = _Traffic()
        return self._all, by_node, by_api, both

    def _count_bytes(self, node: int, size: int, now: float, *, incoming: bool) -> None:
        by_node = self._node_bytes.get(node)
        if by_node is None:
            by_node = self._node_bytes[node] = _Bytes()
        for counted in (self._bytes, by_node):
            if incoming:
                counted.incoming += size
                counted.incoming_rate.record(size, now)
            else:
                counted.outgoing += size
                counted.outgoing_rate.record(size, now)
        self.now = now


__all__ = ["UNKNOWN_NODE", "ConnectionMetrics", "ConnectionStats"]
