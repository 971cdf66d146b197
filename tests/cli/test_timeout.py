"""`krafka --timeout S` bounds every command, its bootstrap included: against a port that
accepts connections and never answers, each fails within about S seconds with one line naming
the address (the connect timeout, 10 s, used to decide; before that, minutes)."""

from __future__ import annotations

import re
import socket
import time
from collections.abc import Iterator

import pytest
from _cli import assert_one_error_line, run_cli

pytestmark = [pytest.mark.timeout(60)]

TIMEOUT = 2.0
#: Interpreter start-up and a loaded machine; the 10 s connect timeout must not be reached.
SLACK = 5.0


@pytest.fixture
def silent() -> Iterator[str]:
    with socket.create_server(("127.0.0.1", 0)) as listener:
        yield f"127.0.0.1:{listener.getsockname()[1]}"


@pytest.mark.parametrize(
    "command",
    [["topics", "list"], ["consume", "t"], ["produce", "t"]],
    ids=lambda c: c[0],
)
def test_a_silent_port_fails_within_the_timeout_naming_it(silent: str, command: list[str]) -> None:
    start = time.monotonic()
    done = run_cli("-b", silent, "--timeout", f"{TIMEOUT:g}", *command, input="v\n", timeout=30)
    elapsed = time.monotonic() - start
    assert_one_error_line(done, f"{silent} accepted the connection but the ApiVersions handshake")
    # The timeout, less what the client spent before sending (the server gets the time left).
    within = re.search(r"within ([0-9.]+)s", done.stderr)
    assert within is not None and TIMEOUT * 0.9 <= float(within.group(1)) <= TIMEOUT, done.stderr
    assert elapsed < TIMEOUT + SLACK, f"took {elapsed:.1f}s with --timeout {TIMEOUT:g}"
