"""Background tasks owned by a client object, not by the task that happened to start it.

An anyio task group must be exited by the task that entered it, inside the cancel scopes that
were current then. A client entered in one task and closed in another (`start()` in a setup
task, `close()` in a shutdown hook), or closed from inside a cancel scope opened after
`start()`, cannot own a task group that way. `TaskHost` runs the task group in a task of its
own instead - an asyncio task, or a trio system task (trio allows tasks only in nurseries; the
system nursery is the one that outlives every user task) - so `start` and `close` may be
called from any task. The runner never lets an exception escape (a trio system task must not):
a crash is logged and ends the host, and the owner's own loops report errors as values.
"""

from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

import anyio
import anyio.abc

from krafka.errors import InvalidStateError

log = logging.getLogger(__name__)

#: Strong references to running asyncio runners (the loop keeps only weak ones).
_RUNNERS: set[asyncio.Task[None]] = set()


class TaskHost:
    """A task group living in its own task: `start_soon` from any task until `close`."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._tg: anyio.abc.TaskGroup | None = None
        self._ready: anyio.Event | None = None
        self._stop: anyio.Event | None = None
        self._done: anyio.Event | None = None
        self._closed = False

    @property
    def running(self) -> bool:
        return self._tg is not None

    @property
    def task_group(self) -> anyio.abc.TaskGroup:
        """The live task group (for APIs that take one); only while running."""
        if self._tg is None:
            raise InvalidStateError(f"{self.name} is not running")
        return self._tg

    async def start(self) -> None:
        """Start the runner task and wait until its task group is open."""
        if self._ready is not None or self._closed:
            raise InvalidStateError(f"{self.name} was already started")
        self._ready, self._stop, self._done = anyio.Event(), anyio.Event(), anyio.Event()
        _spawn_detached(self._run, f"{self.name} runner")
        await self._ready.wait()
        if self._tg is None:
            raise InvalidStateError(f"{self.name} ended while starting")

    def start_soon(
        self, func: Callable[..., Coroutine[Any, Any, Any]], *args: Any, name: str = ""
    ) -> None:
        """Run `func(*args)` in the host's task group."""
        self.task_group.start_soon(func, *args, name=name or None)

    async def close(self, timeout: float | None = 5.0) -> None:
        """Cancel every task and wait (at most `timeout` s, even if the caller is being
        cancelled) until they ended. Callable from any task, more than once."""
        self._closed = True
        if self._stop is None or self._done is None:
            return
        self._stop.set()
        with anyio.CancelScope(shield=True), anyio.move_on_after(timeout):
            await self._done.wait()

    async def _run(self) -> None:
        assert self._ready is not None and self._stop is not None and self._done is not None
        try:
            async with anyio.create_task_group() as tg:
                self._tg = tg
                self._ready.set()
                await self._stop.wait()
                tg.cancel_scope.cancel()
        except Exception:
            log.exception("%s: a background task crashed", self.name)
        finally:
            self._tg = None
            self._ready.set()
            self._done.set()


def _spawn_detached(func: Callable[[], Awaitable[None]], name: str) -> None:
    """Start `func()` as a task no user task group owns, on the running event loop."""
    trio = sys.modules.get("trio")
    if trio is not None and _in_trio(trio):
        trio.lowlevel.spawn_system_task(func, name=name)
        return
    task = asyncio.get_running_loop().create_task(_as_coroutine(func), name=name)
    _RUNNERS.add(task)
    task.add_done_callback(_RUNNERS.discard)


async def _as_coroutine(func: Callable[[], Awaitable[None]]) -> None:
    await func()


def _in_trio(trio: Any) -> bool:
    try:
        trio.lowlevel.current_task()
    except RuntimeError:
        return False
    return True
