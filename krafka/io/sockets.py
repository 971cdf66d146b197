"""The byte streams of a `ClientCore`'s connections, on anyio: transport only.

The core says which connections to open and close (`OpenConnection` / `CloseConnection`); this
opens them (TCP, TLS, SOCKS5: `krafka.io.transport`), runs one reader task per socket feeding
`core.receive_data`, and one writer task per socket writing `core.data_to_send`. Every input it
hands the core is followed by `on_input()`, the driver's turn (it steps the core).

On asyncio, a plaintext connection without a proxy is a `_Wire` instead: an asyncio protocol
whose frames wait in an inbox until the driver's next turn (`deliver`, woken by `on_wake`) and
whose bytes `kick` writes at once. Per request that saves the reader's and the writer's task
wake-ups, anyio's stream bookkeeping and two `epoll_ctl` calls (a reader task pauses reading
between receives).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import struct
from collections.abc import Callable
from typing import Any

import anyio
import anyio.abc

from krafka.errors import KafkaConnectionError, KrafkaError, ProxyConnectionError
from krafka.io.clock import loop_clock
from krafka.io.transport import (
    TransportConfig,
    direct_eligible,
    open_direct,
    open_transport,
    transport_error,
)
from krafka.sansio.client import ClientCore, CloseConnection, OpenConnection, Want
from krafka.sansio.framing import LARGE_FRAME_SIZE, FrameReader

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


class _Wire(asyncio.BufferedProtocol):
    """One open plaintext connection on asyncio, fed by the loop: the frames it reads (their
    payloads) or what it learns (`None` at the end of the stream; a `KrafkaError` if it broke)
    wait in `inbox` until the driver's turn hands them to the core, in the driver's task.

    The loop reads into `frames.get_buffer()`: the rest of a large frame (a Fetch response)
    goes straight into that frame's payload, one block per response. Reading through chunks
    instead (`asyncio.Protocol`: a fresh bytes object per read, then joined) made glibc grow and
    trim its heap by megabytes per response; the page faults of that churn were a third of a
    consumer's CPU. Once a large frame is complete it stops reading until that turn, as a
    reader task does between receives: the kernel holds the next response meanwhile, instead of
    megabytes piling up while the application decodes."""

    def __init__(self, conn_id: int, where: str, on_wake: Callable[[], None]) -> None:
        self.conn_id = conn_id
        self.where = where
        self.transport: asyncio.Transport | None = None
        self.frames = FrameReader()
        self.inbox: list[bytes | bytearray | KrafkaError | None] = []
        self.paused = False
        self.reading_paused = False
        self._on_wake = on_wake

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def get_buffer(self, sizehint: int) -> memoryview:
        return self.frames.get_buffer()

    def buffer_updated(self, nbytes: int) -> None:
        reader = self.frames
        reader.buffer_updated(nbytes)
        try:
            frames = reader.frames()
        except KrafkaError as exc:
            self._pause()
            self._arrived(exc)
            return
        if frames:
            if len(frames[-1]) >= LARGE_FRAME_SIZE:
                self._pause()
            self.inbox += frames
            self._on_wake()

    def eof_received(self) -> bool:
        self._arrived(None)
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        if exc is not None:
            error = transport_error(exc, self.where)
            self._arrived(error or KafkaConnectionError(f"{self.where}: {exc!r}"))
        else:
            self._arrived(None)

    def pause_writing(self) -> None:
        self.paused = True

    def resume_writing(self) -> None:
        self.paused = False
        self._on_wake()

    def _pause(self) -> None:
        if not self.reading_paused and self.transport is not None:
            self.reading_paused = True
            self.transport.pause_reading()

    def _arrived(self, item: KrafkaError | None) -> None:
        self.inbox.append(item)
        self._on_wake()


class Sockets:
    """The open streams of one core: reader and writer tasks in `task_group`, or asyncio
    protocols the loop feeds (`_Wire`) where the connection allows."""

    def __init__(
        self,
        core: ClientCore,
        transport: TransportConfig,
        task_group: anyio.abc.TaskGroup,
        on_input: Callable[[], None],
        on_wake: Callable[[], None],
    ) -> None:
        self._core = core
        self._transport = transport
        self._tg = task_group
        self._on_input = on_input
        self._on_wake = on_wake
        self._direct = direct_eligible(transport)
        self._clock = loop_clock()
        self._open: dict[int, _Socket] = {}
        self._wires: dict[int, _Wire] = {}
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
        """Write what the core has for each wire; wake the writers of the other sockets the
        core has bytes for."""
        core = self._core
        ready = core.has_data_to_send
        for conn_id, wire in self._wires.items():
            if not wire.paused and wire.transport is not None and ready(conn_id):
                wire.transport.write(core.data_to_send(conn_id))
        for conn_id, sock in self._open.items():
            if ready(conn_id):
                sock.writable.set()

    def deliver(self) -> None:
        """Hand the core what the wires read or learned since the last turn."""
        for wire in list(self._wires.values()):
            if wire.inbox:
                self._deliver(wire)

    def close_all(self) -> None:
        for conn_id in [*self._open, *self._wires]:
            self._close(CloseConnection(conn_id, abort=False))

    def local_addresses(self) -> list[Any]:
        """The local (source) address of every open socket."""
        local = [
            s.stream.extra(anyio.abc.SocketAttribute.local_address) for s in self._open.values()
        ]
        local += [
            w.transport.get_extra_info("sockname")
            for w in self._wires.values()
            if w.transport is not None
        ]
        return local

    @property
    def count(self) -> int:
        return len(self._open) + len(self._wires)

    # -- tasks ----------------------------------------------------------------------------------

    async def _connect(self, want: OpenConnection) -> None:
        if self._direct:
            await self._connect_wire(want)
            return
        where = f"{want.host}:{want.port}"
        try:
            stream = await open_transport(want.host, want.port, self._transport, want.timeout)
        except KrafkaError as exc:
            self._failed_to_open(want, exc)
            return
        if not self._still_wanted(want):
            with anyio.CancelScope(shield=True):
                await anyio.aclose_forcefully(stream)
            return
        sock = self._open[want.conn_id] = _Socket(want.conn_id, stream, where)
        self._core.connection_made(want.conn_id, anyio.current_time())
        self._tg.start_soon(self._serve, sock, name=f"krafka connection {where}")
        self._on_input()

    async def _connect_wire(self, want: OpenConnection) -> None:
        where = f"{want.host}:{want.port}"
        try:
            transport, wire = await open_direct(
                want.host,
                want.port,
                self._transport,
                lambda: _Wire(want.conn_id, where, self._on_wake),
                want.timeout,
            )
        except KrafkaError as exc:
            self._failed_to_open(want, exc)
            return
        if not self._still_wanted(want):
            transport.abort()
            return
        self._wires[want.conn_id] = wire
        self._core.connection_made(want.conn_id, self._clock())
        self._on_input()

    def _failed_to_open(self, want: OpenConnection, error: KrafkaError) -> None:
        self._opening.discard(want.conn_id)
        self._dropped.discard(want.conn_id)
        self._core.connection_failed(want.conn_id, error, anyio.current_time())
        self._on_input()

    def _still_wanted(self, want: OpenConnection) -> bool:
        """It opened: whether the core still wants it (it may have closed it meanwhile)."""
        self._opening.discard(want.conn_id)
        if want.conn_id in self._dropped:
            self._dropped.discard(want.conn_id)
            return False
        return True

    def _deliver(self, wire: _Wire) -> None:
        core, conn_id = self._core, wire.conn_id
        inbox, wire.inbox = wire.inbox, []
        if wire.reading_paused and wire.transport is not None:
            wire.reading_paused = False
            wire.transport.resume_reading()
        now = self._clock()
        frames: list[bytes | bytearray] = []
        for item in inbox:
            if isinstance(item, (bytes, bytearray)):
                frames.append(item)
                continue
            if frames:
                core.receive_frames(conn_id, frames, now)
                frames = []
            if self._wires.get(conn_id) is not wire:
                return
            if isinstance(item, KrafkaError):
                self._lost_wire(wire, item)
            elif wire.frames.buffered:
                mid_frame = KafkaConnectionError("broker closed the connection mid-frame")
                self._lost_wire(wire, mid_frame)
            else:
                core.receive_data(conn_id, b"", now)
                self._lost_wire(wire, KafkaConnectionError(f"connection to {wire.where} closed"))
        if frames:
            core.receive_frames(conn_id, frames, now)

    def _lost_wire(self, wire: _Wire, error: KrafkaError) -> None:
        if self._wires.get(wire.conn_id) is not wire:
            return
        del self._wires[wire.conn_id]
        if wire.transport is not None:
            wire.transport.abort()
        self._core.connection_lost(wire.conn_id, error, self._clock())

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
        wire = self._wires.pop(want.conn_id, None)
        if wire is not None:
            self._close_wire(wire, want.abort)
            return
        sock = self._open.pop(want.conn_id, None)
        if sock is None:
            if want.conn_id in self._opening:
                self._dropped.add(want.conn_id)
            return
        if want.abort:
            _reset_on_close(sock.stream)
        self._tg.start_soon(self._finish, sock, name=f"krafka close {sock.where}")

    def _close_wire(self, wire: _Wire, abort: bool) -> None:
        """Write what the core queued last (a close), then close: the loop flushes the
        transport's buffer first, or drops it (a reset) when `abort`."""
        transport = wire.transport
        if transport is None:
            return
        if abort:
            _reset_socket(transport.get_extra_info("socket"))
        data = self._core.data_to_send(wire.conn_id)
        if data and not transport.is_closing():
            transport.write(data)
        transport.close()

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
    _reset_socket(stream.extra(anyio.abc.SocketAttribute.raw_socket, None))


def _reset_socket(sock: Any) -> None:
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
