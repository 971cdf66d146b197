"""The client loop's wait: until a deadline on the io clock, or until rung, whichever first.

The loop waits once or twice per request; on asyncio an anyio `Event` and `move_on_after` per
wait cost it dozens of calls (backend lookups, a cancel scope), so there it waits on a bare
future with a timer handle. Cancellation reaches either wait as usual.
"""

from __future__ import annotations

import asyncio
import math

import anyio


class Alarm:
    """`await sleep_until(t)` returns at `t` (`math.inf`: never) or at the first `ring()`
    during the wait; a ring while nobody waits is dropped (the loop turns before it waits)."""

    def __init__(self) -> None:
        try:
            self._loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:  # trio
            self._loop = None
        self._future: asyncio.Future[None] | None = None
        self._event: anyio.Event | None = None

    def ring(self) -> None:
        future = self._future
        if future is not None:
            if not future.done():
                future.set_result(None)
        elif self._event is not None:
            self._event.set()

    async def sleep_until(self, deadline: float) -> None:
        if self._loop is None:
            await self._sleep_anyio(deadline)
            return
        loop = self._loop
        self._future = future = loop.create_future()
        timer = None if deadline == math.inf else loop.call_at(deadline, _settle, future)
        try:
            await future
        finally:
            self._future = None
            if timer is not None:
                timer.cancel()

    async def _sleep_anyio(self, deadline: float) -> None:
        self._event = event = anyio.Event()
        try:
            with anyio.move_on_after(deadline - anyio.current_time()):
                await event.wait()
        finally:
            self._event = None


def _settle(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)
