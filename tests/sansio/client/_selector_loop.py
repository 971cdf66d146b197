"""The smallest embedder of a `ClientCore`: one thread, `selectors`, plain sockets, one clock.

What an embedder in another framework writes: open the connections the core wants, move bytes
both ways, sleep until a socket is readable or `next_deadline()` passes, step the core after
every input. `turns` counts loop turns and `spins` the turns that woke for nothing at once (a
deadline already past): a core that names deadlines it does not act on shows as spins.
"""

from __future__ import annotations

import selectors
import socket
import time
from collections.abc import Callable
from typing import Any

from krafka.errors import KafkaConnectionError
from krafka.sansio.client import ClientCore, CloseConnection, MachineEvent, OpenConnection


class SelectorLoop:
    def __init__(self, core: ClientCore) -> None:
        self.core = core
        self.selector = selectors.DefaultSelector()
        self.sockets: dict[int, socket.socket] = {}
        self.outgoing: dict[int, bytearray] = {}
        self.turns = 0
        self.spins = 0

    def run_until(self, on_event: Callable[[Any, float], bool], timeout: float) -> float:
        """Turn until `on_event(event, now)` returns True; returns the time then."""
        give_up = time.monotonic() + timeout
        while True:
            now = time.monotonic()
            if now > give_up:
                raise TimeoutError(f"not done within {timeout}s")
            self.turns += 1
            done = False
            for event in self.core.step(now):
                inner = event.event if isinstance(event, MachineEvent) else event
                done = on_event(inner, now) or done
            if done:
                return now
            self._carry_out(now)
            self._write(now)
            self._wait(now, give_up)

    def close(self) -> None:
        for sock in self.sockets.values():
            sock.close()
        self.sockets.clear()
        self.selector.close()

    def _carry_out(self, now: float) -> None:
        for want in self.core.connections_wanted():
            if isinstance(want, OpenConnection):
                self._open(want, now)
            elif isinstance(want, CloseConnection):
                self._drop(want.conn_id)

    def _open(self, want: OpenConnection, now: float) -> None:
        try:
            sock = socket.create_connection((want.host, want.port), timeout=want.timeout)
        except OSError as exc:
            error = KafkaConnectionError(f"cannot reach {want.host}:{want.port}: {exc}")
            self.core.connection_failed(want.conn_id, error, time.monotonic())
            return
        sock.setblocking(False)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.sockets[want.conn_id] = sock
        self.outgoing[want.conn_id] = bytearray()
        self.selector.register(sock, selectors.EVENT_READ, want.conn_id)
        self.core.connection_made(want.conn_id, time.monotonic())

    def _drop(self, conn_id: int) -> None:
        sock = self.sockets.pop(conn_id, None)
        self.outgoing.pop(conn_id, None)
        if sock is not None:
            self.selector.unregister(sock)
            sock.close()

    def _write(self, now: float) -> None:
        for conn_id, sock in list(self.sockets.items()):
            pending = self.outgoing[conn_id]
            pending += self.core.data_to_send(conn_id)
            if not pending:
                continue
            try:
                sent = sock.send(pending)
            except BlockingIOError:
                sent = 0
            except OSError as exc:
                self._lost(conn_id, exc)
                continue
            del pending[:sent]
            events = selectors.EVENT_READ | (selectors.EVENT_WRITE if pending else 0)
            self.selector.modify(sock, events, conn_id)

    def _wait(self, now: float, give_up: float) -> None:
        deadline = self.core.next_deadline()
        until = give_up if deadline is None else min(deadline, give_up)
        ready = self.selector.select(max(0.0, until - now))
        if not ready and until <= now:
            self.spins += 1
        for key, mask in ready:
            conn_id = key.data
            if mask & selectors.EVENT_READ and conn_id in self.sockets:
                self._read(conn_id)

    def _read(self, conn_id: int) -> None:
        try:
            data = self.sockets[conn_id].recv(1 << 20)
        except BlockingIOError:
            return
        except OSError as exc:
            self._lost(conn_id, exc)
            return
        self.core.receive_data(conn_id, data, time.monotonic())
        if not data:
            self._drop(conn_id)

    def _lost(self, conn_id: int, exc: OSError) -> None:
        self._drop(conn_id)
        error = KafkaConnectionError(f"connection {conn_id} broke: {exc}")
        self.core.connection_lost(conn_id, error, time.monotonic())
