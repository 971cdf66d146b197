"""`LoopClock`: the loop's `anyio.current_time()`, read from another thread."""

from __future__ import annotations

import threading

import anyio
import pytest

from krafka.io.clock import LoopClock

pytestmark = pytest.mark.anyio


async def test_a_thread_reads_the_loop_clock() -> None:
    clock = LoopClock()
    read: list[float] = []
    before = anyio.current_time()
    thread = threading.Thread(target=lambda: read.append(clock()))
    thread.start()
    await anyio.to_thread.run_sync(thread.join)
    after = anyio.current_time()
    assert before - 0.01 <= read[0] <= after + 0.01  # trio's clock is offset by hours
