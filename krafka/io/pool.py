"""Connections to brokers, pooled per broker address and lane, with reconnect backoff.

Each broker gets up to `connections_per_broker` DATA connections (requests go to the least
loaded, a new one opens while all are busy), one CONTROL connection and, when it coordinates a
group or transaction of this client, one COORDINATOR connection. The control lane carries
heartbeats, metadata and coordinator lookups, the coordinator lane what only a coordinator
answers (commits, offset fetches, joins, a transaction's requests), so neither waits behind
a large produce or a long-polling fetch on the same socket (Kafka answers a connection's
requests in order). Failed connects back off exponentially with jitter; only retriable errors
are retried, and only within `connect_timeout`: one `get` that has to connect fails within that
time.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from enum import Enum

import anyio
import anyio.abc

from krafka.errors import KafkaTimeoutError, KrafkaError
from krafka.io.connection import Connection
from krafka.io.transport import TransportConfig
from krafka.sansio.backoff import Backoff, BackoffPolicy
from krafka.sansio.connection import ConnectionConfig


class Lane(Enum):
    DATA = "data"
    CONTROL = "control"
    COORDINATOR = "coordinator"


@dataclass(slots=True)
class _Bucket:
    backoff: Backoff
    lock: anyio.Lock = field(default_factory=anyio.Lock)
    lanes: dict[Lane, list[Connection]] = field(default_factory=lambda: {lane: [] for lane in Lane})
    #: The last connect's non-retriable error (a refused login or certificate), raised again
    #: at once while the backoff forbids another attempt.
    refusal: KrafkaError | None = None


class ConnectionPool:
    """Opens, reuses and closes broker connections inside `task_group`."""

    def __init__(
        self,
        task_group: anyio.abc.TaskGroup,
        *,
        transport: TransportConfig | None = None,
        connection: ConnectionConfig | None = None,
        connections_per_broker: int = 1,
        backoff: BackoffPolicy | None = None,
    ) -> None:
        if connections_per_broker < 1:
            raise ValueError("connections_per_broker must be >= 1")
        self._tg = task_group
        self.transport = transport or TransportConfig()
        self.connection = connection or ConnectionConfig()
        self.connections_per_broker = connections_per_broker
        self.backoff = backoff or BackoffPolicy()
        self._buckets: dict[tuple[str, int], _Bucket] = {}
        self._closed = False

    def connections(
        self, host: str | None = None, port: int | None = None, lane: Lane | None = None
    ) -> list[Connection]:
        """Usable connections, to one address or to all, on one lane or on both."""
        out = []
        for (h, p), bucket in self._buckets.items():
            if host is not None and (h, p) != (host, port):
                continue
            for bucket_lane, conns in bucket.lanes.items():
                if lane is None or lane is bucket_lane:
                    out += [c for c in conns if c.usable]
        return out

    async def get(
        self,
        host: str,
        port: int,
        lane: Lane = Lane.DATA,
        *,
        ordered: bool = False,
        timeout: float | None = None,
        node_id: int | None = None,
    ) -> Connection:
        """A ready connection to `host:port` on `lane`, connecting (with backoff) if needed,
        within `timeout` seconds when given (never longer than `connect_timeout`); errors name
        the address and broker `node_id` when known.

        `ordered=True` always answers the lane's first usable connection, so requests sent
        through it keep their order.
        """
        if self._closed:
            raise KrafkaError("connection pool is closed")
        bucket = self._bucket(host, port)
        best = self._pick(bucket, lane, ordered)
        if best is not None:
            return best
        async with bucket.lock:
            best = self._pick(bucket, lane, ordered)
            if best is not None:
                return best
            fallback = self._least_loaded(bucket, lane)
            try:
                conn = await self._connect(host, port, bucket, timeout, node_id)
            except KrafkaError:
                if fallback is not None:
                    return fallback
                raise
            bucket.lanes[lane].append(conn)
            return conn

    async def close(self, timeout: float = 5.0) -> None:
        """Close every connection, waiting at most `timeout` in total."""
        self._closed = True
        conns = [c for b in self._buckets.values() for lane in b.lanes.values() for c in lane]
        for conn in conns:
            conn.close()
        with anyio.move_on_after(timeout):
            for conn in conns:
                await conn.aclose(timeout)
        self._buckets.clear()

    def close_idle(self, now: float, limit: float) -> int:
        """Close connections without a request in flight for more than `limit` seconds."""
        idle = [
            conn
            for bucket in self._buckets.values()
            for conns in bucket.lanes.values()
            for conn in conns
            if conn.usable and conn.idle_since is not None and now - conn.idle_since > limit
        ]
        for conn in idle:
            conn.close()
        return len(idle)

    def reconnect_wait(self, host: str, port: int, now: float) -> float:
        """Seconds before `host:port` may be connected to again (0: a usable connection is
        there, or no failure holds it back)."""
        bucket = self._buckets.get((host, port))
        if bucket is None or any(c.usable for lane in bucket.lanes.values() for c in lane):
            return 0.0
        return bucket.backoff.wait_time(now)

    def close_address(self, host: str, port: int) -> None:
        bucket = self._buckets.pop((host, port), None)
        if bucket is not None:
            for conn in (c for lane in bucket.lanes.values() for c in lane):
                conn.close()

    # -- internals ------------------------------------------------------------------------------

    def _bucket(self, host: str, port: int) -> _Bucket:
        bucket = self._buckets.get((host, port))
        if bucket is None:
            bucket = self._buckets[(host, port)] = _Bucket(Backoff(self.backoff))
        return bucket

    def _least_loaded(self, bucket: _Bucket, lane: Lane) -> Connection | None:
        live = [c for c in bucket.lanes[lane] if c.usable]
        bucket.lanes[lane] = live
        return min(live, key=lambda c: c.load, default=None)

    def _pick(self, bucket: _Bucket, lane: Lane, ordered: bool = False) -> Connection | None:
        best = self._least_loaded(bucket, lane)
        if ordered:
            return bucket.lanes[lane][0] if bucket.lanes[lane] else None
        limit = self.connections_per_broker if lane is Lane.DATA else 1
        if best is not None and (best.load == 0 or len(bucket.lanes[lane]) >= limit):
            return best
        return None

    async def _connect(
        self, host: str, port: int, bucket: _Bucket, timeout: float | None, node_id: int | None
    ) -> Connection:
        """Connect, retrying refused connections with backoff until the deadline; a peer that
        accepted but stayed silent is not asked again within it (it used the time up)."""
        backoff = bucket.backoff
        limit = self.transport.connect_timeout
        if timeout is not None:
            limit = max(0.0, min(limit, timeout))
        deadline = anyio.current_time() + limit
        wait = backoff.wait_time(anyio.current_time())
        if wait > 0 and bucket.refusal is not None:
            raise _again(bucket.refusal)
        await anyio.sleep(min(wait, limit))
        while True:
            try:
                conn = await Connection.open(
                    host,
                    port,
                    self._tg,
                    transport=self.transport,
                    config=self.connection,
                    timeout=max(0.0, deadline - anyio.current_time()),
                    node_id=node_id,
                )
            except KrafkaError as exc:
                retry_at = backoff.failed(anyio.current_time(), random.random)
                bucket.refusal = None if exc.retriable else exc
                final = not exc.retriable or isinstance(exc, KafkaTimeoutError)
                if final or backoff.exhausted or retry_at >= deadline:
                    raise
                await anyio.sleep(backoff.wait_time(anyio.current_time()))
                continue
            backoff.succeeded()
            bucket.refusal = None
            return conn


def _again(refusal: KrafkaError) -> KrafkaError:
    """The refusal once more: a broker that refused this client is not asked again before its
    backoff ends, and the caller learns why at once instead of waiting for it (as Java)."""
    try:
        error = type(refusal)(str(refusal))
    except TypeError:  # an error class with other arguments: the same one again
        return refusal
    error.__cause__ = refusal.__cause__
    return error
