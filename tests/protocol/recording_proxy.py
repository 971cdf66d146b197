"""A loopback TCP proxy that forwards bytes unchanged and records every Kafka frame.

Thread based, so any client library (librdkafka, kafka-python) can talk through it. Requests
are matched to responses by connection and correlation id; each `Exchange` keeps the exact frame
bytes (without the 4-byte size prefix) as they crossed the wire.
"""

from __future__ import annotations

import contextlib
import socket
import struct
import threading
from dataclasses import dataclass
from types import TracebackType


@dataclass
class Exchange:
    api_key: int
    api_version: int
    request: bytes
    response: bytes | None = None


class _Framer:
    """Splits a byte stream into size-prefixed Kafka frames."""

    def __init__(self) -> None:
        self.buf = bytearray()

    def feed(self, data: bytes) -> list[bytes]:
        self.buf += data
        frames = []
        while len(self.buf) >= 4:
            (size,) = struct.unpack_from(">i", self.buf)
            if len(self.buf) < 4 + size:
                break
            frames.append(bytes(self.buf[4 : 4 + size]))
            del self.buf[: 4 + size]
        return frames


class RecordingProxy:
    """Listen on 127.0.0.1:`port`, forward to `upstream`, record every request and response."""

    def __init__(self, upstream: tuple[str, int], port: int = 0) -> None:
        self.upstream = upstream
        self._listener = socket.create_server(("127.0.0.1", port))
        self.port: int = self._listener.getsockname()[1]
        self.exchanges: list[Exchange] = []
        self._lock = threading.Lock()
        self._sockets: list[socket.socket] = []
        self._threads: list[threading.Thread] = []
        self._closed = False

    @property
    def bootstrap_servers(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self) -> RecordingProxy:
        t = threading.Thread(target=self._accept, daemon=True)
        t.start()
        self._threads.append(t)
        return self

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            try:
                server = socket.create_connection(self.upstream, timeout=5)
            except OSError:
                client.close()
                continue
            server.settimeout(None)
            pending: dict[int, Exchange] = {}
            with self._lock:
                self._sockets += [client, server]
            for src, dst, is_req in ((client, server, True), (server, client, False)):
                t = threading.Thread(target=self._pump, args=(src, dst, is_req, pending))
                t.daemon = True
                t.start()
                self._threads.append(t)

    def _pump(
        self, src: socket.socket, dst: socket.socket, is_req: bool, pending: dict[int, Exchange]
    ) -> None:
        framer = _Framer()
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                for frame in framer.feed(data):
                    self._record(frame, is_req, pending)
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                with contextlib.suppress(OSError):
                    s.shutdown(socket.SHUT_RDWR)

    def _record(self, frame: bytes, is_req: bool, pending: dict[int, Exchange]) -> None:
        with self._lock:
            if is_req:
                key, version, corr = struct.unpack_from(">hhi", frame)
                ex = Exchange(key, version, frame)
                pending[corr] = ex
                self.exchanges.append(ex)
            else:
                (corr,) = struct.unpack_from(">i", frame)
                ex_or_none = pending.pop(corr, None)
                if ex_or_none is not None:
                    ex_or_none.response = frame

    def stop(self) -> None:
        self._closed = True
        self._listener.close()
        with self._lock:
            for s in self._sockets:
                with contextlib.suppress(OSError):
                    s.close()
        for t in self._threads:
            t.join(timeout=2)

    def __enter__(self) -> RecordingProxy:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
