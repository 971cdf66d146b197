"""A real SOCKS5 server for tests: PyPI `pproxy` in a subprocess, its log read as it comes.

    with Socks5Server(username="alice", password="s3cret") as proxy:
        ... Producer(bootstrap_servers=..., socks5_proxy=proxy.url) ...
        proxy.tunnels()     # [(client's source port, "host:port" it was asked to reach), ...]
        proxy.refusals()    # log lines of handshakes it refused (wrong credentials ...)

It listens on `host` (127.0.0.1 by default; any loopback address works on Linux) and stops
with the block. Credentials are checked on every connection (`--auth 0`: pproxy otherwise
trusts an address for 30 days once it authenticated).
"""

from __future__ import annotations

import re
import subprocess
import sys
import threading
import time
from types import TracebackType
from typing import Final
from urllib.parse import quote

from krafka.testing.broker import free_port

_TUNNEL: Final = re.compile(r"^socks5 [\d.]+:(\d+) -> (\S+)$")
_START_TIMEOUT: Final = 15.0


class Socks5Server:
    """`pproxy -l socks5://host:port[#user:pass]`; use as a context manager."""

    def __init__(
        self, *, host: str = "127.0.0.1", username: str | None = None, password: str | None = None
    ) -> None:
        self.host = host
        self.port = free_port()
        self.username = username
        self.password = password
        self._lines: list[str] = []
        self._lock = threading.Lock()
        self._started = threading.Event()
        self._process: subprocess.Popen[str] | None = None

    @property
    def url(self) -> str:
        """The `socks5_proxy` URL, with the credentials when the server wants them."""
        login = ""
        if self.username is not None and self.password is not None:
            login = f"{quote(self.username, safe='')}:{quote(self.password, safe='')}@"
        return f"socks5://{login}{self.host}:{self.port}"

    def start(self) -> Socks5Server:
        auth = f"#{self.username}:{self.password}" if self.username is not None else ""
        command = [sys.executable, "-u", "-m", "pproxy", "--auth", "0", "-v"]
        command += ["-l", f"socks5://{self.host}:{self.port}{auth}"]
        self._process = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        threading.Thread(target=self._read, daemon=True, name="socks5 server log").start()
        if not self._started.wait(_START_TIMEOUT):
            self.stop()
            raise RuntimeError(f"pproxy did not start within {_START_TIMEOUT}s: {self.log()}")
        return self

    def stop(self) -> None:
        process = self._process
        if process is None or process.poll() is not None:
            return
        process.terminate()
        try:
            process.wait(5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(5)

    def _read(self) -> None:
        assert self._process is not None and self._process.stdout is not None
        for line in self._process.stdout:
            with self._lock:
                self._lines.append(line.rstrip("\n"))
            if line.startswith("Serving on"):
                self._started.set()
        self._started.set()

    def log(self) -> list[str]:
        with self._lock:
            return list(self._lines)

    def tunnels(self) -> list[tuple[int, str]]:
        """Every connection it forwarded: the client's source port and the `host:port` the
        client asked for."""
        found = (_TUNNEL.match(line) for line in self.log())
        return [(int(m.group(1)), m.group(2)) for m in found if m]

    def refusals(self) -> list[str]:
        return [line for line in self.log() if line.startswith("Unauthorized")]

    def wait_for_log(self, predicate: str, timeout: float = 5.0) -> bool:
        """Whether a log line containing `predicate` shows up within `timeout` seconds (the
        log is read from the subprocess, a little behind)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if any(predicate in line for line in self.log()):
                return True
            time.sleep(0.02)
        return False

    def __enter__(self) -> Socks5Server:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
