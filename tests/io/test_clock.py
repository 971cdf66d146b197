"""`loop_clock()`: the loop's own clock, the one `anyio.current_time()` reads, callable from
another thread (the sync facade appends there)."""

from __future__ import annotations

import threading

import anyio
import pytest
import trio.testing

from krafka.io.clock import loop_clock

pytestmark = pytest.mark.anyio


async def test_a_thread_reads_the_loop_clock() -> None:
    clock = loop_clock()
    read: list[float] = []
    before = anyio.current_time()
    thread = threading.Thread(target=lambda: read.append(clock()))
    thread.start()
    await anyio.to_thread.run_sync(thread.join)
    after = anyio.current_time()
    assert before <= read[0] <= after  # trio's clock is offset by hours: the same clock


def test_a_custom_trio_clock_is_the_one_read() -> None:
    """Under a clock unrelated to the system's, only the loop's own clock agrees."""

    async def main() -> tuple[float, float]:
        clock = loop_clock()
        await anyio.sleep(3600)  # the mock clock jumps
        return clock(), anyio.current_time()

    read, current = anyio.run(
        main,
        backend="trio",
        backend_options={"clock": trio.testing.MockClock(autojump_threshold=0)},
    )
    assert read == current >= 3600
