"""A loopback TCP proxy in front of a broker that can terminate TLS and inject faults.

Runs an asyncio loop in a daemon thread, so tests under any event loop (asyncio, trio, plain
threads) can use it. Listens on 127.0.0.1 only and is bounded: every connection ends when the
proxy stops, and `stop()` waits a bounded time.

    with FaultProxy(("127.0.0.1", broker_port)) as proxy:
        proxy.arm(Fault.DROP_MID_FRAME, after_requests=1)   # 2nd request's response is cut
        ... connect a client to proxy.bootstrap_servers ...

Faults fire on the Kafka request frame numbered `after_requests` (0-based) of a connection:

* `DROP_MID_FRAME` — forward the request, deliver half of the response, then close;
* `STALL`          — swallow the request and everything after it; never answer;
* `RESET`          — abort the connection with a TCP RST;
* `GARBAGE`        — answer with bytes that are not a Kafka response;
* `CLOSE`          — close the connection cleanly (EOF) instead of forwarding;
* `FREEZE`         — stop reading from the client at all, so its socket buffers fill up and
                     its sends block (a wedged peer).

With `once=True` only the first connection that reaches the trigger sees the fault, so a
client that reconnects gets through.

`partition()` cuts the proxy off as a network partition would, for every connection, old and
new: nothing is forwarded either way (bytes wait in the socket buffers, as unacknowledged TCP
segments do) until `heal()`.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import ssl
import struct
import threading
from dataclasses import dataclass
from enum import Enum
from types import TracebackType
from typing import Any

_GARBAGE = b"\x00\x00\x00\x08\xde\xad\xbe\xef\x00\x00\x00\x00" + b"\xff" * 16


class Fault(Enum):
    NONE = "none"
    DROP_MID_FRAME = "drop-mid-frame"
    STALL = "stall"
    RESET = "reset"
    GARBAGE = "garbage"
    CLOSE = "close"
    FREEZE = "freeze"


@dataclass(frozen=True, slots=True)
class _Arming:
    fault: Fault
    after_requests: int
    once: bool


class _Frames:
    """Counts complete size-prefixed frames in one direction of a stream."""

    __slots__ = ("_buf", "count")

    def __init__(self) -> None:
        self._buf = bytearray()
        self.count = 0

    @property
    def started(self) -> int:
        """Frames begun so far (complete ones plus a partial one)."""
        return self.count + (1 if self._buf else 0)

    def feed(self, data: bytes) -> None:
        self._buf += data
        while len(self._buf) >= 4:
            (size,) = struct.unpack_from(">i", self._buf)
            if size < 0 or len(self._buf) < 4 + size:
                return
            del self._buf[: 4 + size]
            self.count += 1


class FaultProxy:
    """Proxy `host:port` (port 0: any free one) -> `target`, optionally terminating TLS.

    To keep every connection going through the proxy, start the broker advertising the
    proxy's port: `LocalBroker(advertised_port=p)` and `FaultProxy(..., port=p)`.
    """

    def __init__(
        self,
        target: tuple[str, int],
        *,
        ssl_context: ssl.SSLContext | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        self.target = target
        self.host = host
        self.ssl_context = ssl_context
        self.port = port
        self.connections = 0
        self.faults_fired = 0
        self._arming = _Arming(Fault.NONE, 0, False)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._writers: set[asyncio.StreamWriter] = set()
        self._open: asyncio.Event | None = None

    @property
    def bootstrap_servers(self) -> str:
        return f"{self.host}:{self.port}"

    def arm(self, fault: Fault, *, after_requests: int = 0, once: bool = False) -> None:
        """Inject `fault` at request frame `after_requests` of each (or the next) connection."""
        self._arming = _Arming(fault, after_requests, once)

    def disarm(self) -> None:
        self._arming = _Arming(Fault.NONE, 0, False)

    @property
    def partitioned(self) -> bool:
        return self._open is not None and not self._open.is_set()

    def partition(self) -> None:
        """Stop forwarding anything, on every connection, until `heal()`."""
        self._call(lambda event: event.clear())

    def heal(self) -> None:
        self._call(lambda event: event.set())

    def _call(self, action: Any) -> None:
        loop, event = self._loop, self._open
        if loop is not None and event is not None:
            asyncio.run_coroutine_threadsafe(_run(action, event), loop).result(timeout=5)

    # -- lifecycle ------------------------------------------------------------------------------

    def start(self) -> FaultProxy:
        loop = asyncio.new_event_loop()
        self._loop = loop
        self._thread = threading.Thread(target=loop.run_forever, name="krafka-proxy", daemon=True)
        self._thread.start()
        future = asyncio.run_coroutine_threadsafe(self._listen(), loop)
        future.result(timeout=5)
        return self

    def stop(self, timeout: float = 5.0) -> None:
        loop, self._loop = self._loop, None
        if loop is None:
            return
        with contextlib.suppress(Exception):
            asyncio.run_coroutine_threadsafe(self._shutdown(), loop).result(timeout=timeout)
        loop.call_soon_threadsafe(loop.stop)
        if self._thread is not None:
            self._thread.join(timeout)
        if not loop.is_running():
            loop.close()

    def drop_connections(self) -> None:
        """Close every proxied connection now (as a broker restart would)."""
        loop = self._loop
        if loop is not None:
            asyncio.run_coroutine_threadsafe(self._close_all(), loop).result(timeout=5)

    def __enter__(self) -> FaultProxy:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    # -- inside the proxy's loop ----------------------------------------------------------------

    async def _listen(self) -> None:
        self._open = asyncio.Event()
        self._open.set()
        tls: dict[str, Any] = {}
        if self.ssl_context is not None:
            tls = {"ssl": self.ssl_context, "ssl_handshake_timeout": 5}
        self._server = await asyncio.start_server(self._spawn, self.host, self.port, **tls)
        self.port = self._server.sockets[0].getsockname()[1]

    async def _shutdown(self) -> None:
        if self._server is not None:
            self._server.close()
        await self._close_all()
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.wait(self._tasks, timeout=2)

    async def _close_all(self) -> None:
        for writer in list(self._writers):
            writer.close()

    async def _spawn(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            await self._handle(reader, writer)
        finally:
            self._tasks.discard(task)

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        self._writers.add(writer)
        await self._passable()
        try:
            up_reader, up_writer = await asyncio.wait_for(
                asyncio.open_connection(*self.target), timeout=5
            )
        except (OSError, TimeoutError):
            writer.close()
            self._writers.discard(writer)
            return
        self._writers.add(up_writer)
        state = _ConnState()
        try:
            await asyncio.gather(
                self._client_to_broker(reader, writer, up_writer, state),
                self._broker_to_client(up_reader, writer, state),
            )
        except (OSError, asyncio.IncompleteReadError, ssl.SSLError):
            pass
        finally:
            for w in (writer, up_writer):
                self._writers.discard(w)
                w.close()

    async def _client_to_broker(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        upstream: asyncio.StreamWriter,
        state: _ConnState,
    ) -> None:
        frames = _Frames()
        while data := await reader.read(65536):
            if state.stalled:
                continue
            await self._passable()
            frames.feed(data)
            if self._fire(frames.started, state) and not await self._apply(writer, upstream, state):
                return
            if state.fault is Fault.FREEZE:
                await asyncio.Event().wait()  # until the proxy stops
            if not state.stalled:
                upstream.write(data)
                await upstream.drain()
        upstream.close()

    def _fire(self, started: int, state: _ConnState) -> bool:
        arming = self._arming
        if arming.fault is Fault.NONE or state.fired or started <= arming.after_requests:
            return False
        state.fired = True
        state.fault = arming.fault
        self.faults_fired += 1
        if arming.once:
            self.disarm()
        return True

    async def _apply(
        self, writer: asyncio.StreamWriter, upstream: asyncio.StreamWriter, state: _ConnState
    ) -> bool:
        """Carry out the fault; False means stop forwarding this connection."""
        fault = state.fault
        if fault in (Fault.STALL, Fault.FREEZE):
            state.stalled = True
            return True
        if fault is Fault.DROP_MID_FRAME:
            state.cut_next_response = True
            return True
        if fault is Fault.GARBAGE:
            writer.write(_GARBAGE)
            await writer.drain()
            state.stalled = True
            return True
        if fault is Fault.RESET:
            _abort(writer)
        writer.close()
        upstream.close()
        return False

    async def _passable(self) -> None:
        if self._open is not None:
            await self._open.wait()

    async def _broker_to_client(
        self, up_reader: asyncio.StreamReader, writer: asyncio.StreamWriter, state: _ConnState
    ) -> None:
        while data := await up_reader.read(65536):
            if state.stalled:
                continue
            await self._passable()
            if state.cut_next_response:
                writer.write(data[: max(1, len(data) // 2)])
                await writer.drain()
                writer.close()
                return
            writer.write(data)
            await writer.drain()
        writer.close()


@dataclass(slots=True)
class _ConnState:
    fired: bool = False
    fault: Fault = Fault.NONE
    stalled: bool = False
    cut_next_response: bool = False


async def _run(action: Any, event: asyncio.Event) -> None:
    action(event)


def _abort(writer: asyncio.StreamWriter) -> None:
    """Close with RST: SO_LINGER on, timeout 0."""
    sock = writer.get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    writer.transport.abort()
