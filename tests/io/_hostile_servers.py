"""Small loopback servers that accept Kafka clients and then misbehave, one way each.

Thread based, so tests under asyncio and trio alike can use them; every connection ends when
the server stops.
"""

from __future__ import annotations

import contextlib
import socket
import ssl
import threading
from enum import Enum
from types import TracebackType

#: Not a Kafka response: what a web server on the wrong port would say.
GARBAGE = b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n"


class Misbehaviour(Enum):
    GARBAGE = "garbage"  # answers the first bytes with something that is not Kafka
    SILENT = "silent"  # accepts and reads, never answers
    CLOSE = "close"  # accepts and closes at once


class HostileServer:
    """Listen on 127.0.0.1 (any free port) and misbehave; `ssl_context` wraps each connection
    in TLS first (a TLS listener with that certificate)."""

    def __init__(self, how: Misbehaviour, ssl_context: ssl.SSLContext | None = None) -> None:
        self.how = how
        self.ssl_context = ssl_context
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self._listener.getsockname()[1]
        self.connections = 0
        self._open: list[socket.socket] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, name="hostile-server", daemon=True)

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def __enter__(self) -> HostileServer:
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._stop.set()
        with contextlib.suppress(OSError):
            self._listener.close()
        for sock in self._open:
            with contextlib.suppress(OSError):
                sock.close()
        self._thread.join(5)

    def _serve(self) -> None:
        self._listener.settimeout(0.05)
        while not self._stop.is_set():
            try:
                sock, _ = self._listener.accept()
            except (TimeoutError, OSError):
                continue
            self.connections += 1
            self._open.append(sock)
            threading.Thread(target=self._misbehave, args=(sock,), daemon=True).start()

    def _misbehave(self, sock: socket.socket) -> None:
        with contextlib.suppress(OSError, ssl.SSLError):
            if self.ssl_context is not None:
                sock.settimeout(5)
                sock = self.ssl_context.wrap_socket(sock, server_side=True)
                self._open.append(sock)
            if self.how is Misbehaviour.CLOSE:
                sock.close()
                return
            sock.settimeout(0.1)
            while not self._stop.is_set():
                try:
                    data = sock.recv(65536)
                except TimeoutError:
                    continue
                if not data:
                    return
                if self.how is Misbehaviour.GARBAGE:
                    sock.sendall(GARBAGE)
