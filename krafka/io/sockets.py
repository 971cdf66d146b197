"""The byte streams of a `ClientCore`'s connections, on anyio: transport only.

The core says which connections to open and close (`OpenConnection` / `CloseConnection`); this
opens them (TCP, TLS, SOCKS5: `krafka.io.transport`), runs one reader task per socket feeding
`core.receive_data`, and one writer task per socket writing `core.data_to_send`. Every input it
hands the core is followed by `on_input()`, the driver's turn (it steps the core).
"""

from __future__ import annotations

import contextlib
import logging
import socket
import struct
from collections.abc import Callable
from typing import Any

import anyio
import anyio.abc

from krafka.errors import KafkaConnectionError, KrafkaError, ProxyConnectionError
from krafka.io.transport import TransportConfig, open_transport, transport_error
from krafka.sansio.client import ClientCore, CloseConnection, OpenConnection, Want

log = logging.getLogger(__name__)
_READ_SIZE = 256 * 1024


class _Socket:
    """One open stream of connection `conn_id`."""

    __slots__ = ("conn_id", "heard", "scope", "stream", "where", "writable")

    def __init__(self, conn_id: int, stream: anyio.abc.ByteStream, where: str) -> None:
        self.conn_id = conn_id
        self.stream = stream
        self.where = where
        self.writable = anyio.Event()
        self.scope = anyio.CancelScope()
        #: The broker sent something (the handshake got an answer).
        self.heard = False


class Sockets:
    """The open streams of one core, their reader and writer tasks in `task_group`."""

    def __init__(
        self,
        core: ClientCore,
        transport: TransportConfig,
        task_group: anyio.abc.TaskGroup,
        on_input: Callable[[], None],
    ) -> None:
        self._core = core
        self._transport = transport
        self._tg = task_group
        self._on_input = on_input
        self._open: dict[int, _Socket] = {}
        self._opening: set[int] = set()
        self._dropped: set[int] = set()

    def carry_out(self, wants: list[Want]) -> None:
        """Open and close what the core asked for (opening runs in tasks)."""
        for want in wants:
            if isinstance(want, OpenConnection):
                self._opening.add(want.conn_id)
                self._tg.start_soon(self._connect, want, name=f"krafka connect {want.host}")
            elif isinstance(want, CloseConnection):
                self._close(want)

    def kick(self) -> None:
        """Wake the writers of the sockets the core has bytes for."""
        ready = self._core.has_data_to_send
        for conn_id, sock in self._open.items():
            if ready(conn_id):
                sock.writable.set()

    def close_all(self) -> None:
        for sock in list(self._open.values()):
            self._close(CloseConnection(sock.conn_id, abort=False))

    def local_addresses(self) -> list[Any]:
        """The local (source) address of every open socket."""
        return [
            s.stream.extra(anyio.abc.SocketAttribute.local_address) for s in self._open.values()
        ]

    @property
    def count(self) -> int:
        return len(self._open)

    # -- tasks ----------------------------------------------------------------------------------

    async def _connect(self, want: OpenConnection) -> None:
        where = f"{want.host}:{want.port}"
        try:
            stream = await open_transport(want.host, want.port, self._transport, want.timeout)
        except KrafkaError as exc:
            self._opening.discard(want.conn_id)
            self._dropped.discard(want.conn_id)
            self._core.connection_failed(want.conn_id, exc, anyio.current_time())
            self._on_input()
            return
        self._opening.discard(want.conn_id)
        if want.conn_id in self._dropped:
            self._dropped.discard(want.conn_id)
            with anyio.CancelScope(shield=True):
                await anyio.aclose_forcefully(stream)
            return
        sock = self._open[want.conn_id] = _Socket(want.conn_id, stream, where)
        self._core.connection_made(want.conn_id, anyio.current_time())
        self._tg.start_soon(self._serve, sock, name=f"krafka connection {where}")
        self._on_input()

    async def _serve(self, sock: _Socket) -> None:
        try:
            with sock.scope:
                async with anyio.create_task_group() as tg:
                    tg.start_soon(self._writer, sock)
                    await self._reader(sock)
                    tg.cancel_scope.cancel()
        except Exception as exc:  # never let one connection crash the client's task group
            log.warning("connection to %s failed unexpectedly: %r", sock.where, exc)
            self._lost(sock, KafkaConnectionError(f"connection to {sock.where} failed: {exc!r}"))
        finally:
            if self._open.get(sock.conn_id) is sock:
                self._lost(sock, KafkaConnectionError(f"connection to {sock.where} closed"))
            with anyio.CancelScope(shield=True), anyio.move_on_after(1.0):
                await sock.stream.aclose()

    async def _reader(self, sock: _Socket) -> None:
        core, conn_id = self._core, sock.conn_id
        while True:
            try:
                data = await sock.stream.receive(_READ_SIZE)
            except anyio.EndOfStream:
                data = b""
            except Exception as exc:
                self._lost(sock, self._error(exc, sock))
                return
            if not data and not sock.heard and self._transport.proxy is not None:
                self._lost(sock, KafkaConnectionError(f"connection to {sock.where} closed"))
                return
            sock.heard = True
            core.receive_data(conn_id, data, anyio.current_time())
            self._on_input()
            if not data:
                return

    async def _writer(self, sock: _Socket) -> None:
        core, conn_id = self._core, sock.conn_id
        while True:
            sock.writable = wake = anyio.Event()
            data = core.data_to_send(conn_id)
            if not data:
                await wake.wait()
                continue
            try:
                await sock.stream.send(data)
            except Exception as exc:
                self._lost(sock, self._error(exc, sock))
                return

    # -- endings --------------------------------------------------------------------------------

    def _error(self, exc: BaseException, sock: _Socket) -> KrafkaError:
        return transport_error(exc, sock.where) or KafkaConnectionError(f"{sock.where}: {exc!r}")

    def _lost(self, sock: _Socket, error: KrafkaError) -> None:
        if self._open.get(sock.conn_id) is not sock:
            return
        proxy = self._transport.proxy
        if proxy is not None and not sock.heard and type(error) is KafkaConnectionError:
            tls = " speaking TLS?" if self._transport.ssl_context else "?"
            error = ProxyConnectionError(
                f"{error} before the Kafka handshake completed, through the SOCKS5 proxy "
                f"{proxy.address}: can the proxy reach {sock.where}, and is it a Kafka "
                f"listener{tls}"
            )
        self._core.connection_lost(sock.conn_id, error, anyio.current_time())
        self._on_input()

    def _close(self, want: CloseConnection) -> None:
        sock = self._open.pop(want.conn_id, None)
        if sock is None:
            if want.conn_id in self._opening:
                self._dropped.add(want.conn_id)
            return
        if want.abort:
            _reset_on_close(sock.stream)
        self._tg.start_soon(self._finish, sock, name=f"krafka close {sock.where}")

    async def _finish(self, sock: _Socket) -> None:
        """Let the writer flush what the core queued last (a close), then end the socket."""
        with anyio.move_on_after(1.0):
            data = self._core.data_to_send(sock.conn_id)
            if data:
                with contextlib.suppress(Exception):
                    await sock.stream.send(data)
        sock.scope.cancel()


def _reset_on_close(stream: anyio.abc.ByteStream) -> None:
    """Make closing `stream` a reset (SO_LINGER 0): what is still in the kernel's send queue is
    dropped instead of retransmitted. An orderly close keeps retransmitting a request krafka
    already reported failed, and a broker cut off until then would still act on it (a produce
    written after records sent long after it)."""
    sock = stream.extra(anyio.abc.SocketAttribute.raw_socket, None)
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
