"""TaskHost: a task group in its own task, started and closed from different tasks."""

from __future__ import annotations

import anyio
import pytest

from krafka.errors import InvalidStateError
from krafka.io.host import TaskHost

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(10)]


async def test_tasks_run_until_closed_from_another_task() -> None:
    host = TaskHost("test host")
    ticks: list[int] = []
    cancelled = anyio.Event()

    async def ticker() -> None:
        try:
            while True:
                ticks.append(1)
                await anyio.sleep(0.01)
        finally:
            cancelled.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(host.start)  # that task ends; the host's tasks keep running
    host.start_soon(ticker)
    await anyio.sleep(0.05)
    assert ticks and host.running
    with anyio.CancelScope():
        async with anyio.create_task_group() as tg:
            tg.start_soon(host.close)
    assert cancelled.is_set() and not host.running
    with pytest.raises(InvalidStateError):
        host.start_soon(ticker)
    await host.close()  # again: nothing to do


async def test_a_crashing_task_is_logged_and_ends_the_host(
    caplog: pytest.LogCaptureFixture,
) -> None:
    host = TaskHost("crashy")
    await host.start()

    async def crash() -> None:
        raise RuntimeError("boom")

    host.start_soon(crash)
    with anyio.fail_after(2):
        while host.running:
            await anyio.sleep(0.01)
    await host.close()
    assert "crashy: a background task crashed" in caplog.text and "boom" in caplog.text


async def test_close_is_bounded_even_when_a_task_will_not_stop() -> None:
    host = TaskHost("stubborn")
    await host.start()

    async def stubborn() -> None:
        with anyio.CancelScope(shield=True):
            await anyio.sleep(1.0)

    host.start_soon(stubborn)
    await anyio.sleep(0.01)
    started = anyio.current_time()
    await host.close(timeout=0.1)
    assert anyio.current_time() - started < 0.5
    with anyio.fail_after(3):
        while host.running:
            await anyio.sleep(0.05)
