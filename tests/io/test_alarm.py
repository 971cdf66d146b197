"""`Alarm`: the client loop sleeps until its deadline or until rung, on both backends."""

from __future__ import annotations

import math

import anyio
import pytest

from krafka.io.alarm import Alarm

pytestmark = pytest.mark.anyio


async def test_it_wakes_at_the_deadline() -> None:
    alarm = Alarm()
    start = anyio.current_time()
    await alarm.sleep_until(start + 0.05)
    assert anyio.current_time() >= start + 0.05


async def test_a_ring_ends_the_wait_early() -> None:
    alarm = Alarm()
    woke = anyio.Event()

    async def sleeper() -> None:
        await alarm.sleep_until(math.inf)
        woke.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(sleeper)
        await anyio.wait_all_tasks_blocked()
        alarm.ring()
        with anyio.fail_after(5):
            await woke.wait()


async def test_a_ring_while_nobody_waits_is_dropped() -> None:
    alarm = Alarm()
    alarm.ring()
    start = anyio.current_time()
    await alarm.sleep_until(start + 0.05)
    assert anyio.current_time() >= start + 0.05


async def test_cancellation_reaches_the_wait_and_a_later_ring_is_harmless() -> None:
    alarm = Alarm()
    with anyio.move_on_after(0.05) as scope:
        await alarm.sleep_until(math.inf)
    assert scope.cancelled_caught
    alarm.ring()
    start = anyio.current_time()
    await alarm.sleep_until(start + 0.01)
