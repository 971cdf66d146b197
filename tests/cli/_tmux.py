"""A real terminal for interactive commands: a detached tmux session on a private server,
driven with `send-keys` and read with `capture-pane`."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def ensure_tmux() -> str:
    """tmux's path, installing Debian's package when missing (as root); skips the test with
    the reason when it cannot be had."""
    found = shutil.which("tmux")
    if found:
        return found
    apt = shutil.which("apt-get")
    if apt is None or os.geteuid() != 0:
        pytest.skip("tmux is not installed and cannot be installed here (no apt-get or not root)")
    try:
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        subprocess.run([apt, "install", "-y", "-q", "tmux"], check=True, capture_output=True,
                       timeout=300, env=env)  # fmt: skip
    except (subprocess.SubprocessError, OSError) as exc:
        pytest.skip(f"tmux is not installed and apt-get install tmux failed: {exc}")
    found = shutil.which("tmux")
    if found is None:
        pytest.skip("apt-get installed tmux but it is not on PATH")
    return found


class Terminal:
    """One tmux session running one shell command in a 200x50 terminal."""

    def __init__(self, command: str, env: dict[str, str] | None = None) -> None:
        self.tmux = ensure_tmux()
        self.socket = f"krafka-test-{uuid.uuid4().hex[:8]}"
        exports = {"PYTHONPATH": str(ROOT), "TERM": "xterm-256color", **(env or {})}
        prefix = " ".join(f"{k}={shlex.quote(v)}" for k, v in exports.items())
        script = f"cd {shlex.quote(str(ROOT))} && {prefix} {command}; echo EXIT=$?; sleep 600"
        self._tmux("new-session", "-d", "-s", "t", "-x", "200", "-y", "50", script)

    def _tmux(self, *args: str) -> str:
        done = subprocess.run([self.tmux, "-L", self.socket, *args], capture_output=True,
                              text=True, timeout=10, check=True)  # fmt: skip
        return done.stdout

    def screen(self) -> str:
        return self._tmux("capture-pane", "-p", "-t", "t")

    def keys(self, *keys: str) -> None:
        self._tmux("send-keys", "-t", "t", *keys)

    def wait_for(self, check: Callable[[str], bool], timeout: float = 30.0) -> str:
        deadline = time.monotonic() + timeout
        while True:
            screen = self.screen()
            if check(screen):
                return screen
            if time.monotonic() > deadline:
                raise AssertionError(f"the terminal never showed what was expected:\n{screen}")
            time.sleep(0.1)

    def close(self) -> None:
        subprocess.run([self.tmux, "-L", self.socket, "kill-server"], capture_output=True,
                       timeout=10)  # fmt: skip


def krafka_command(*args: str) -> str:
    return " ".join(shlex.quote(a) for a in (sys.executable, "-m", "krafka.cli", *args))
