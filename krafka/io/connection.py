"""An anyio driver for one `krafka.sansio.connection.BrokerConnection`.

Two tasks per connection: a reader feeding received bytes to the state machine, and a writer
that sends what the machine wants sent and sleeps until its next deadline (request timeouts,
throttle release, re-authentication). Callers `await request(...)` and get the decoded
response or a `KrafkaError`; a waiter can never hang, because every request has a deadline
in the state machine.
"""

from __future__ import annotations

import contextlib
import logging
import math
import socket
import struct
from typing import Any

import anyio
import anyio.abc

from krafka.errors import (
    AuthenticationError,
    KafkaConnectionError,
    KafkaTimeoutError,
    KrafkaError,
    ProxyConnectionError,
    UnsupportedVersionError,
)
from krafka.io.transport import TransportConfig, open_transport, transport_error
from krafka.protocol import ApiKey
from krafka.sansio.actions import Versioned
from krafka.sansio.connection import (
    BrokerConnection,
    ConnectionConfig,
    ConnectionState,
    Priority,
)
from krafka.sansio.events import (
    Authenticated,
    ConnectionClosed,
    ConnectionReady,
    Event,
    RequestFailed,
    ResponseReceived,
)

log = logging.getLogger(__name__)
_READ_SIZE = 256 * 1024


class _Waiter:
    __slots__ = ("done", "error", "response")

    def __init__(self) -> None:
        self.done = anyio.Event()
        self.response: Any = None
        self.error: KrafkaError | None = None

    def resolve(self, response: Any) -> None:
        self.response = response
        self.done.set()

    def fail(self, error: KrafkaError) -> None:
        self.error = error
        self.done.set()


class PendingResponse:
    """A request already queued on a connection; `await pending.wait()` for its response."""

    __slots__ = ("_cid", "_conn", "_waiter")

    def __init__(self, conn: Connection, cid: int, waiter: _Waiter) -> None:
        self._conn, self._cid, self._waiter = conn, cid, waiter

    async def wait(self) -> Any:
        waiter = self._waiter
        try:
            await waiter.done.wait()
        finally:
            self._conn._forget(self._cid)
        if waiter.error is not None:
            raise waiter.error
        return waiter.response


class Connection:
    """A live connection to one broker. Create with `await Connection.open(...)`."""

    def __init__(self, stream: anyio.abc.ByteStream, machine: BrokerConnection, where: str) -> None:
        self.where = where
        self.machine = machine
        self.error: KrafkaError | None = None
        self._stream = stream
        self._waiters: dict[int, _Waiter] = {}
        self._wake = anyio.Event()
        self._timer_wake = anyio.Event()
        self._ready = anyio.Event()
        self._finished = anyio.Event()
        self._scope = anyio.CancelScope()
        self._last_active = anyio.current_time()
        #: The connection ended in failure (a request timed out, the transport broke).
        self._given_up = False

    @classmethod
    async def open(
        cls,
        host: str,
        port: int,
        task_group: anyio.abc.TaskGroup,
        *,
        transport: TransportConfig | None = None,
        config: ConnectionConfig | None = None,
        timeout: float | None = None,
        node_id: int | None = None,
    ) -> Connection:
        """Connect, negotiate ApiVersions (and SASL); raises `KrafkaError` on failure, naming
        `host:port` (and broker `node_id` when known).

        The whole setup takes at most `timeout` seconds (default: the transport's
        `connect_timeout`), TCP, TLS and the Kafka handshake together; each handshake
        request at most the connection's request timeout.
        """
        transport = transport or TransportConfig()
        config = config or ConnectionConfig()
        limit = transport.connect_timeout if timeout is None else timeout
        deadline = anyio.current_time() + limit
        stream = await open_transport(host, port, transport, limit)
        machine = BrokerConnection(config.for_server(host), now=anyio.current_time())
        where = f"{host}:{port}" if node_id is None else f"{host}:{port} (node {node_id})"
        conn = cls(stream, machine, where)
        task_group.start_soon(conn._run, name=f"krafka connection {conn.where}")
        try:
            with anyio.fail_after(max(0.0, deadline - anyio.current_time())):
                await conn._ready.wait()
        except TimeoutError:
            silent = _silent(conn, f"{limit:.3g}s")
            await conn.aclose(1.0)
            raise silent from None
        except BaseException:
            conn.close()
            raise
        if isinstance(conn.error, KafkaTimeoutError):
            silent = _silent(conn, f"request_timeout={config.request_timeout:.3g}s")
            await conn.aclose(1.0)
            raise silent from conn.error
        if conn.error is not None or not machine.is_ready:
            await conn.aclose(1.0)
            raise _handshake_error(conn, transport)
        return conn

    # -- API ------------------------------------------------------------------------------------

    @property
    def usable(self) -> bool:
        return not self.machine.closed and self.error is None

    @property
    def load(self) -> int:
        return self.machine.load

    @property
    def idle_since(self) -> float | None:
        """When the last request finished, if none is in flight (None: busy)."""
        return self._last_active if self.machine.load == 0 else None

    def version_for(self, api_key: int) -> int:
        """The version this broker and krafka agree on for `api_key` (UnsupportedVersionError)."""
        return self.machine.version_for(api_key)

    async def request(self, body: Any, **options: Any) -> Any:
        """Send `body` and wait for its decoded response (None for a Produce with acks=0).

        Options as for `submit`.
        """
        return await self.submit(body, **options).wait()

    def submit(
        self,
        body: Any,
        *,
        timeout: float | None = None,
        version: int | None = None,
        max_version: int | None = None,
        min_version: int | None = None,
        priority: Priority = Priority.NORMAL,
    ) -> PendingResponse:
        """Queue `body` now (its place on the wire is fixed by this call); wait on the result.

        A `Versioned` body is built for the version negotiated on this connection; a broker
        offering less than `min_version` gets nothing (`UnsupportedVersionError`).
        """
        if not self.usable:
            raise KafkaConnectionError(f"connection to {self.where} is closed") from self.error
        if min_version is not None:
            _require_version(self, int(body.API_KEY), min_version)
        if version is None and (max_version is not None or isinstance(body, Versioned)):
            version = self.version_for(int(body.API_KEY))
            if max_version is not None:
                version = min(version, max_version)
        if isinstance(body, Versioned):
            assert version is not None
            body = body.build(version)
        now = self._last_active = anyio.current_time()
        cid = self.machine.send_request(
            body, now, timeout=timeout, version=version, priority=priority
        )
        waiter = _Waiter()
        self._waiters[cid] = waiter
        self._dispatch(self.machine.drain_events())
        self._kick()
        return PendingResponse(self, cid, waiter)

    def _forget(self, cid: int) -> None:
        self._waiters.pop(cid, None)

    def close(self) -> None:
        """Start closing: pending requests fail with `KafkaConnectionError`; returns at once."""
        self._dispatch(self.machine.close())
        self._kick()

    async def aclose(self, timeout: float = 5.0) -> None:
        """Close and wait (at most `timeout`) until the connection's tasks ended."""
        self.close()
        with anyio.move_on_after(timeout):
            await self._finished.wait()
        self._scope.cancel()

    # -- tasks ----------------------------------------------------------------------------------

    async def _run(self) -> None:
        try:
            with self._scope:
                async with anyio.create_task_group() as tg:
                    tg.start_soon(self._reader)
                    tg.start_soon(self._timer)
                    await self._writer()
                    tg.cancel_scope.cancel()
        except Exception as exc:  # never let one connection crash the client's task group
            log.warning("connection to %s failed unexpectedly: %r", self.where, exc)
            self._lost(KafkaConnectionError(f"connection to {self.where} failed: {exc!r}"))
        finally:
            self._lost(KafkaConnectionError(f"connection to {self.where} closed"))
            if self._given_up:
                _reset_on_close(self._stream)
            with anyio.CancelScope(shield=True), anyio.move_on_after(1.0):
                await self._stream.aclose()
            self._finished.set()

    def _kick(self) -> None:
        """State changed: the writer may have bytes to send, the timer a new deadline."""
        self._wake.set()
        self._timer_wake.set()

    async def _writer(self) -> None:
        machine = self.machine
        while True:
            self._wake = wake = anyio.Event()
            data = machine.data_to_send()
            if data:
                try:
                    await self._stream.send(data)
                except Exception as exc:
                    self._transport_failed(exc)
                continue
            if machine.closed:
                return
            await wake.wait()

    async def _timer(self) -> None:
        """Deadlines run apart from the writer, so a send stuck on a full socket still times out."""
        machine = self.machine
        while not machine.closed:
            self._timer_wake = wake = anyio.Event()
            self._dispatch(machine.handle_timeout(anyio.current_time()))
            self._wake.set()
            deadline = machine.next_deadline()
            delay = math.inf if deadline is None else max(0.0, deadline - anyio.current_time())
            with anyio.move_on_after(delay):
                await wake.wait()

    async def _reader(self) -> None:
        machine = self.machine
        while not machine.closed:
            try:
                data = await self._stream.receive(_READ_SIZE)
            except anyio.EndOfStream:
                data = b""
            except Exception as exc:
                self._transport_failed(exc)
                return
            self._last_active = anyio.current_time()
            events = machine.receive_data(data, self._last_active)
            self._dispatch(events)
            if events or not data or machine.has_data_to_send:
                self._kick()  # not for part of a frame: nothing to write, no deadline moved
            if not data:
                return

    # -- events ---------------------------------------------------------------------------------

    def _transport_failed(self, exc: BaseException) -> None:
        error = transport_error(exc, self.where) or KafkaConnectionError(f"{self.where}: {exc!r}")
        self._dispatch(self.machine.connection_lost(error))
        self._kick()

    def _lost(self, error: KrafkaError) -> None:
        if not self.machine.closed:
            self._dispatch(self.machine.connection_lost(error))
        for waiter in list(self._waiters.values()):
            if not waiter.done.is_set():
                waiter.fail(self.error or error)
        self._ready.set()

    def _dispatch(self, events: list[Event]) -> None:
        for event in events:
            if isinstance(event, ResponseReceived):
                waiter = self._waiters.get(event.correlation_id)
                if waiter is not None:
                    waiter.resolve(event.response)
            elif isinstance(event, RequestFailed):
                waiter = self._waiters.get(event.correlation_id)
                if waiter is not None:
                    waiter.fail(_located(event.error, self.where) or event.error)
            elif isinstance(event, ConnectionReady):
                self._ready.set()
            elif isinstance(event, Authenticated):
                log.debug(
                    "%s to %s with %s (session lifetime %s ms)",
                    "re-authenticated" if event.reauthentication else "authenticated",
                    self.where,
                    event.mechanism,
                    event.session_lifetime_ms or "unlimited",
                )
            elif isinstance(event, ConnectionClosed):
                self._given_up = self._given_up or event.error is not None
                self.error = _located(event.error, self.where) or KafkaConnectionError(
                    f"connection to {self.where} closed"
                )
                self._lost(self.error)
                self._scope.cancel()  # also aborts a send blocked on a full socket


def _located(error: KrafkaError | None, where: str) -> KrafkaError | None:
    """An authentication error (from the SASL exchange, which knows no addresses) naming the
    broker that refused; a request timeout naming the broker that did not answer."""
    located_kinds = AuthenticationError | KafkaTimeoutError
    if isinstance(error, located_kinds) and where not in str(error):
        located = type(error)(f"{where}: {error}")
        located.__cause__ = error.__cause__
        return located
    return error


def _reset_on_close(stream: anyio.abc.ByteStream) -> None:
    """Make closing `stream` a reset (SO_LINGER 0): what is still in the kernel's send queue is
    dropped instead of retransmitted. An orderly close keeps retransmitting a request krafka
    already reported failed, and a broker cut off until then would still act on it (a produce
    written after records sent long after it)."""
    sock = stream.extra(anyio.abc.SocketAttribute.raw_socket, None)
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))


def _silent(conn: Connection, within: str) -> KafkaTimeoutError:
    """A peer that accepted the connection but did not answer the handshake in time."""
    step = (
        "SASL authentication"
        if conn.machine.state is ConnectionState.AUTHENTICATING
        else "the ApiVersions handshake"
    )
    return KafkaTimeoutError(
        f"{conn.where} accepted the connection but {step} did not complete within {within}: "
        "is it a Kafka listener, and does it expect TLS?"
    )


def _handshake_error(conn: Connection, transport: TransportConfig | None) -> KrafkaError:
    error = conn.error or KafkaConnectionError(f"connection to {conn.where} failed")
    if type(error) is KafkaConnectionError and transport is not None and transport.proxy:
        return ProxyConnectionError(
            f"{error} before the Kafka handshake completed, through the SOCKS5 proxy "
            f"{transport.proxy.address}: can the proxy reach {conn.where}, and is it a Kafka "
            "listener" + (" speaking TLS?" if transport.ssl_context else "?")
        )
    if type(error) is KafkaConnectionError and transport is not None and transport.ssl_context:
        return KafkaConnectionError(
            f"{error} before the Kafka handshake completed; over TLS this usually means the "
            "broker rejected the client certificate (mTLS) or does not speak TLS"
        )
    return error


def _require_version(conn: Connection, api_key: int, min_version: int) -> None:
    offered = conn.version_for(api_key)
    if offered < min_version:
        raise UnsupportedVersionError(
            f"{ApiKey(api_key).name} needs v{min_version}+ but {conn.where} offers "
            f"v{offered} at most"
        )
