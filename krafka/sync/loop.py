"""`LoopThread`: one event loop on one background thread, with an anyio blocking portal into it.

Every sync client owns one. Its loop is asyncio, private to the client: the async client is
created, started, used and closed there, and nothing else runs on it, so a caller that runs an
event loop of its own (Jupyter, an async web framework calling a sync library) never waits on
itself. Calls cross with `call` (anyio's `BlockingPortal.call`: the caller blocks, exceptions
come back as they were raised); `call_soon` runs a plain function on the loop without waiting
for it (a wake-up, not a call: `loop.call_soon_threadsafe`).

Why not `anyio.from_thread.start_blocking_portal`: its thread is a `ThreadPoolExecutor`
worker that the interpreter joins at exit without a timeout, so a client nobody closed would
hang the exit of a script. This thread is a daemon, and `stop(timeout)` joins it within the
timeout.

The loop thread holds `parking` (a `ParkingLock`) whenever it runs and lets go of it only
while it waits for I/O (in its selector). A caller that takes it (`parking.pause()`) knows the
loop is parked and stays parked until `parking.resume()`: for that moment the caller may do
what the loop would, on its own thread (the sync producer appends records to the async
producer's open batches this way, with no hand-over per record). What the caller does then
must be short and must never wait for the loop; to wake the loop afterwards, `call_soon`.

The other way round, `on_caller` runs a plain function on the thread blocked in a `call(...,
serve=True)` while that call's coroutine awaits it (a sync consumer's rebalance listener runs
on the application's thread inside `poll`, as Java's does, and may call the consumer).
"""

from __future__ import annotations

import asyncio
import contextlib
import queue
import selectors
import threading
from collections.abc import Awaitable, Callable
from concurrent.futures import Future
from typing import Any, TypeVar

import anyio
from anyio.from_thread import BlockingPortal

from krafka.sync.parking import ParkingLock

T = TypeVar("T")


class _ParkingSelector(selectors.DefaultSelector):
    """The platform's selector, letting go of `parking` while it waits (the loop is parked)."""

    def __init__(self, parking: ParkingLock) -> None:
        super().__init__()
        self._parking = parking

    def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
        self._parking.park()
        try:
            return super().select(timeout)
        finally:
            self._parking.run()


class LoopThread:
    """A started event loop on a daemon thread named `name`."""

    def __init__(self, name: str) -> None:
        #: Held by the loop thread except while its loop waits for I/O (see the module doc).
        self.parking = ParkingLock()
        self._ready = threading.Event()
        self._portal: BlockingPortal | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._error: BaseException | None = None
        #: The hand-over queues of the callers blocked in a serving `call`, innermost last.
        self._callers: list[tuple[int, queue.SimpleQueue[Callable[[], None] | None]]] = []
        self._thread = threading.Thread(target=self._main, name=name, daemon=True)
        self._thread.start()
        self._ready.wait()
        if self._error is not None:
            raise self._error

    def _main(self) -> None:
        self.parking.run()
        try:
            anyio.run(
                self._serve, backend="asyncio", backend_options={"loop_factory": self._new_loop}
            )
        except BaseException as exc:  # only if the loop could not start
            self._error = exc
            self._ready.set()
        finally:
            self.parking.park()

    def _new_loop(self) -> asyncio.AbstractEventLoop:
        return asyncio.SelectorEventLoop(_ParkingSelector(self.parking))

    async def _serve(self) -> None:
        self._loop = asyncio.get_running_loop()
        async with BlockingPortal() as portal:
            self._portal = portal
            self._ready.set()
            await portal.sleep_until_stopped()

    def time(self) -> float:
        """The loop's clock (what `anyio.current_time()` reads on it), from any thread."""
        loop = self._loop
        if loop is None:
            raise RuntimeError("this client's loop has not started")
        return loop.time()

    @property
    def thread(self) -> threading.Thread:
        return self._thread

    @property
    def running(self) -> bool:
        return self._thread.is_alive() and self._portal is not None

    def call(self, func: Callable[..., Awaitable[T]], *args: Any, serve: bool = False) -> T:
        """Await `func(*args)` on the loop and return its result or raise its exception.
        Refused from the loop's own thread. With `serve`, this thread meanwhile runs what
        the coroutine hands it through `on_caller`."""
        if threading.current_thread() is self._thread:
            raise RuntimeError("a sync client was called from its own loop (from a callback?)")
        portal = self._portal
        if portal is None or not self._thread.is_alive():
            raise RuntimeError("this client's loop has stopped (the client is closed)")
        if not serve:
            return portal.call(func, *args)
        handoffs: queue.SimpleQueue[Callable[[], None] | None] = queue.SimpleQueue()
        caller = (threading.get_ident(), handoffs)
        self._callers.append(caller)  # before the coroutine starts: it may hand over at once
        try:
            future = portal.start_task_soon(func, *args)
            future.add_done_callback(lambda _: handoffs.put(None))
            while (run := handoffs.get()) is not None:
                run()
        finally:
            self._callers.remove(caller)
        return future.result()

    def serving(self) -> bool:
        """Whether this thread is blocked in a serving `call` (and runs a function it handed
        over: a listener may use its client while the client closes)."""
        me = threading.get_ident()
        return any(ident == me for ident, _ in self._callers)

    async def on_caller(self, func: Callable[..., T], *args: Any) -> T:
        """On the loop: `func(*args)` run on the thread blocked in the innermost serving `call`
        (on the loop itself when none is), its result returned or its exception raised here."""
        if not self._callers:
            return func(*args)
        loop = asyncio.get_running_loop()
        outcome: asyncio.Future[T] = loop.create_future()

        def run() -> None:
            try:
                result = func(*args)
            except BaseException as exc:
                loop.call_soon_threadsafe(_settle, outcome, None, exc)
                if not isinstance(exc, Exception):
                    raise
                return
            loop.call_soon_threadsafe(_settle, outcome, result, None)

        self._callers[-1][1].put(run)
        return await outcome

    def start_task(self, func: Callable[..., Awaitable[Any]], *args: Any) -> Any:
        """Start `func(*args, task_status=...)` as a task on the loop and wait until it calls
        `task_status.started(value)`; returns the value. The task runs until it ends or the
        loop stops."""
        portal = self._portal
        if portal is None:
            raise RuntimeError("this client's loop has stopped")
        _, value = portal.start_task(func, *args)
        return value

    def start_with_outcome(
        self, func: Callable[..., Awaitable[T]], *args: Any
    ) -> tuple[Future[T], Any]:
        """`start_task`, also returning the `concurrent.futures.Future` of the task's outcome
        (what it returns or raises after `task_status.started`). An exception raised before
        that is raised here. Refused from the loop's own thread."""
        if threading.current_thread() is self._thread:
            raise RuntimeError("a sync client was called from its own loop (from a callback?)")
        portal = self._portal
        if portal is None or not self._thread.is_alive():
            raise RuntimeError("this client's loop has stopped (the client is closed)")
        return portal.start_task(func, *args)

    def submit(self, func: Callable[..., Awaitable[T]], *args: Any) -> Future[T]:
        """Start `func(*args)` as a task on the loop and return at once: its outcome arrives in
        the `concurrent.futures.Future` (cancelled if the loop stops first)."""
        portal = self._portal
        if portal is None or not self._thread.is_alive():
            raise RuntimeError("this client's loop has stopped (the client is closed)")
        return portal.start_task_soon(func, *args)

    def call_soon(self, func: Callable[..., object], *args: Any) -> None:
        """Schedule `func(*args)` on the loop and return at once (ignored once stopped)."""
        loop = self._loop
        if loop is None or loop.is_closed():
            return
        try:
            loop.call_soon_threadsafe(func, *args)
        except RuntimeError:  # closed meanwhile
            return

    def stop(self, timeout: float | None = None) -> bool:
        """Cancel what still runs on the loop, end it, and join the thread within `timeout`
        seconds; True if the thread ended. From the loop's own thread it only asks."""
        portal = self._portal
        if portal is not None and self._thread.is_alive():
            if threading.current_thread() is self._thread:
                self.call_soon(_cancel_all)
                return False
            with contextlib.suppress(RuntimeError):  # already stopping
                portal.call(portal.stop, True)
        self._thread.join(timeout)
        return not self._thread.is_alive()


def _settle(outcome: asyncio.Future[Any], result: Any, error: BaseException | None) -> None:
    if outcome.done():  # its awaiter was cancelled meanwhile
        return
    if error is None:
        outcome.set_result(result)
    else:
        outcome.set_exception(error)


def _cancel_all() -> None:
    for task in asyncio.all_tasks():
        task.cancel()


__all__ = ["LoopThread"]
