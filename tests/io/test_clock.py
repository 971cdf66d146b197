"""`loop_time()`: `anyio.current_time()` on the loop, None off it (a metrics exporter's thread
reports as of the last time the client's machines saw, without a second clock)."""

from __future__ import annotations

import anyio
import anyio.to_thread
import pytest
import trio.testing

from krafka.io.clock import loop_clock, loop_time

pytestmark = pytest.mark.anyio


async def test_on_the_loop_it_is_the_loops_clock_and_off_it_none() -> None:
    before = anyio.current_time()
    read = loop_time()
    assert read is not None and before <= read <= anyio.current_time()
    assert await anyio.to_thread.run_sync(loop_time) is None


def test_a_custom_trio_clock_is_the_one_read() -> None:
    """Under a clock unrelated to the system's, the loop's own clock is read."""

    async def main() -> tuple[float | None, float]:
        await anyio.sleep(3600)  # the mock clock jumps
        return loop_time(), anyio.current_time()

    read, current = anyio.run(
        main,
        backend="trio",
        backend_options={"clock": trio.testing.MockClock(autojump_threshold=0)},
    )
    assert read == current >= 3600


async def test_loop_clock_reads_what_anyio_reads() -> None:
    clock = loop_clock()
    before = anyio.current_time()
    read = clock()
    assert before <= read <= anyio.current_time()


def test_loop_clock_under_a_custom_trio_clock() -> None:
    async def main() -> tuple[float, float]:
        await anyio.sleep(3600)
        return loop_clock()(), anyio.current_time()

    read, current = anyio.run(
        main,
        backend="trio",
        backend_options={"clock": trio.testing.MockClock(autojump_threshold=0)},
    )
    assert read == current >= 3600
