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

A caller may also run the loop itself. `drive` is `call(..., serve=True)` with the calling
thread stepping the loop until the coroutine is done (a sync consumer's `poll` waits this way:
the fetch responses are read on the polling thread), and `run_held` runs a callback and the
loop turns it makes ready on the calling thread while it holds the loop parked (the sync
producer puts a sealed batch on the wire this way). With two threads switching the GIL per
socket read, a blocking facade ran at 0.8x its async API; the one running the loop, at par.
Meanwhile, for `_HOLD` seconds after a drive, and for 1 ms after each burst of records a
sender appends (`ParkingLock.sent`), the loop thread waits off the selector
(`_ParkingSelector`), without the GIL; it takes over when the hold ends, 1 ms after a timer
no caller ran, and at once for anything handed to it (`call`, `call_soon`). Any thread
holding `parking` may run the loop between two selects (`_ParkingSelector.claim`).

The other way round, `on_caller` runs a plain function on the thread blocked in a `call(...,
serve=True)` (or a `drive`) while that call's coroutine awaits it (a sync consumer's rebalance
listener runs on the application's thread inside `poll`, as Java's does, and may call the
consumer).
"""

from __future__ import annotations

import asyncio
import asyncio.events as asyncio_events
import contextlib
import contextvars
import heapq
import math
import queue
import selectors
import threading
import time
from collections.abc import Awaitable, Callable, Coroutine, Iterator
from concurrent.futures import Future
from typing import Any, TypeVar

import anyio
from anyio.from_thread import BlockingPortal

from krafka.sync.parking import TIMER_GRACE, ParkingLock

sniffio: Any
try:
    import sniffio
except ModuleNotFoundError:  # anyio then assumes asyncio
    sniffio = None

T = TypeVar("T")

#: At most this many loop turns in `run_held` (the callback's own, and what it made ready) and
#: at the end of a drive (what finishing its coroutine made ready).
_HELD_TURNS = 4
#: Seconds the loop thread keeps off the selector after a caller ran the loop: a caller that
#: polls in a loop is back within them and runs the loop itself again.
_HOLD = 0.005
#: Seconds a driving caller waits in the selector at most before it looks at its coroutine.
_DRIVER_WAIT = 0.05


class _ParkingSelector(selectors.DefaultSelector):
    """The platform's selector, letting go of `parking` while the loop thread waits.

    While a caller runs the loop itself (`LoopThread.drive`), and for `_HOLD` seconds after
    (it may be back at once: a poll loop), the loop thread waits off the selector (`_hold`),
    without the GIL: waiting on the selector too, it would wake for every event the caller
    handles and take the GIL from it for nothing. It comes back when the hold ends, when
    nudged (`nudge`), and for its timers."""

    def __init__(self, parking: ParkingLock) -> None:
        super().__init__()
        self._parking = parking
        self._owner = threading.get_ident()  # made on the loop thread
        #: The loop this selects for (set once it runs).
        self.loop: asyncio.AbstractEventLoop | None = None
        #: How many times a thread took the loop to run it (`claim`, holding `parking`).
        self.drives = 0
        #: When the loop thread's current wait ends at the latest.
        self.wait_until = math.inf
        self._in_select = False
        self._drivers_waiting = 0
        #: Callers between `take_over` and `release` (holding the loop thread off meanwhile).
        self._taking = 0
        #: Until when finished callers asked the loop thread to keep off (`release`).
        self._promised = 0.0
        self._kicked = False
        self._left = threading.Event()

    def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
        """Whoever runs the loop lets go of `parking` while it waits here and takes it back
        after; events reported while another thread ran the loop are dropped (`_taken`)."""
        if threading.get_ident() != self._owner:
            return self._select_driving(timeout)
        now = time.monotonic()
        held = self._parking.hold_until - now
        if held > 0:
            return self._hold(math.inf if timeout is None else timeout, now)
        self.wait_until = math.inf if timeout is None else now + timeout
        self._parking.next_timer = self.wait_until
        drives = self.drives
        self._in_select = True
        self._parking.park()
        try:
            ready = super().select(timeout)
        finally:
            self._in_select = False
            if self._kicked:
                self._left.set()
            self._parking.run()
        return self._taken(ready, drives)

    def _select_driving(self, timeout: float | None) -> list[tuple[selectors.SelectorKey, int]]:
        """A caller running the loop (`LoopThread.drive`): while it waits, other callers may
        hold the loop (a sender appending, another caller's drive)."""
        if timeout == 0:
            return super().select(0)
        drives = self.drives
        self._drivers_waiting += 1
        self._parking.resume()
        try:
            # Bounded: what it waits for may be finished by another thread running the loop
            # meanwhile, whose wake-up may go to another waiter.
            ready = super().select(_DRIVER_WAIT if timeout is None else min(timeout, _DRIVER_WAIT))
        finally:
            self._parking.pause()
            self._drivers_waiting -= 1
        return self._taken(ready, drives)

    def _taken(
        self, ready: list[tuple[selectors.SelectorKey, int]], drives: int
    ) -> list[tuple[selectors.SelectorKey, int]]:
        """This thread runs the loop again (`drives` was the count when it let go). Another
        that ran it meanwhile handled what was ready then and may have replaced the handlers
        these events name (asyncio drops a reader whose stale handle was cancelled): they
        are dropped, and what is still ready, level-triggered, is reported next time."""
        stale = self.drives != drives
        self.claim()
        return [] if stale else ready

    def claim(self) -> None:
        """This thread runs the loop from now (holding `parking`): another waiting in the
        selector drops what it was woken with, and asyncio's thread checks (debug mode) see
        this thread."""
        self.drives += 1
        loop: Any = self.loop
        if loop is not None and loop._thread_id is not None:  # (None: it stopped)
            loop._thread_id = threading.get_ident()

    def _hold(self, timeout: float, now: float) -> list[tuple[selectors.SelectorKey, int]]:
        """Off the selector while a caller holds the loop, until the loop's next timer at most
        (`timeout` from now) if no caller ran it; none of its events are handled here."""
        self._parking.next_timer = now + timeout
        self._parking.hold()
        self.claim()
        return []

    def take_over(self, loop: asyncio.AbstractEventLoop, kick: bool) -> None:
        """(A caller holding `parking`) keep the loop thread off the selector until `release`.
        With `kick`, for a caller about to wait on the selector itself: if the loop thread
        waits on it now, wake it and wait until it has left."""
        self._taking += 1
        self._parking.hold_until = math.inf
        self.claim()
        if kick:
            self._left.clear()
            self._kicked = True
            try:
                if self._in_select:
                    loop.call_soon_threadsafe(_nothing)
                    self._left.wait()
            except BaseException:  # interrupted: as if it had not taken the loop
                self._taking -= 1
                if not self._taking:
                    self._parking.hold_until = self._promised
                raise
            finally:
                self._kicked = False

    def release(self, loop: asyncio.AbstractEventLoop, hold: float) -> None:
        """(A caller done with the loop) once no other caller runs it, the loop thread may use
        the selector again `hold` seconds from now (or later, as an earlier caller asked);
        woken if the loop has something to do before the loop thread would look (the caller
        may have scheduled a timer, or left callbacks)."""
        self._taking -= 1
        self._promised = until = max(self._promised, time.monotonic() + hold)
        parking = self._parking
        due = self._next_due(loop)
        before, parking.next_timer = parking.next_timer, due
        if self._drivers_waiting and due == -math.inf:  # a driving caller runs them
            loop.call_soon_threadsafe(_nothing)
        if self._taking:
            return
        parking.hold_until = until
        if self._in_select:
            if due < self.wait_until:
                loop.call_soon_threadsafe(_nothing)
        elif due < min(before, until - TIMER_GRACE):  # it would wait past `due` + the grace
            self.nudge()

    def nudge(self) -> None:
        """Have the loop thread look again now (its wait off the selector ends)."""
        self._parking.nudge()

    def serve_now(self) -> None:
        """(Any thread) the loop thread back on its selector at once, unless a caller runs
        the loop (it serves what is handed over, then)."""
        self._promised = 0.0
        if not self._taking:
            self._parking.hold_until = 0.0
        self.nudge()

    @staticmethod
    def _next_due(loop: Any) -> float:
        """When the loop has work next: now (-inf) with a callback ready, else its earliest
        live timer (the cancelled ones at the head of its heap are dropped first, as its own
        turn does), else never."""
        if loop._ready:
            return -math.inf
        scheduled = loop._scheduled
        while scheduled and scheduled[0]._cancelled:
            loop._timer_cancelled_count -= 1
            heapq.heappop(scheduled)._scheduled = False
        return scheduled[0].when() if scheduled else math.inf


class LoopThread:
    """A started event loop on a daemon thread named `name`."""

    def __init__(self, name: str) -> None:
        #: Held by the loop thread except while its loop waits for I/O (see the module doc).
        self.parking = ParkingLock()
        self._ready = threading.Event()
        self._portal: BlockingPortal | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._selector: _ParkingSelector | None = None
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
        self._selector = _ParkingSelector(self.parking)
        return asyncio.SelectorEventLoop(self._selector)

    async def _serve(self) -> None:
        self._loop = asyncio.get_running_loop()
        assert self._selector is not None
        self._selector.loop = self._loop
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
        if self._on_loop():
            raise RuntimeError("a sync client was called from its own loop (from a callback?)")
        portal = self._portal
        if portal is None or not self._thread.is_alive():
            raise RuntimeError("this client's loop has stopped (the client is closed)")
        self._serve_now()
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

    def drive(self, func: Callable[..., Coroutine[Any, Any, T]], *args: Any) -> T:
        """`call(func, *args, serve=True)` with this thread running the loop meanwhile: it
        holds `parking` (letting go while it waits in the selector, for other callers) and
        steps the loop itself until `func` is done, so what the coroutine waits for (socket
        reads, the engine's turns) happens here, with no hand-over between threads. A function
        handed over with `on_caller` runs with the loop let go (the loop thread serves the
        calls it makes)."""
        if self._on_loop():
            raise RuntimeError("a sync client was called from its own loop (from a callback?)")
        loop = self._loop
        if loop is None or loop.is_closed() or not self._thread.is_alive():
            raise RuntimeError("this client's loop has stopped (the client is closed)")
        handoffs: queue.SimpleQueue[Callable[[], None] | None] = queue.SimpleQueue()
        caller = (threading.get_ident(), handoffs)
        self._callers.append(caller)
        try:
            with self._driving(loop):
                task = contextvars.Context().run(loop.create_task, func(*args))
                task.add_done_callback(_Waker(threading.get_ident()))
                try:
                    while not task.done():
                        self._drive_once(loop, handoffs)
                    _settle_turns(loop)
                finally:
                    if not task.done():
                        task.cancel()
        finally:
            self._callers.remove(caller)
        return task.result()

    def _drive_once(
        self,
        loop: asyncio.AbstractEventLoop,
        handoffs: queue.SimpleQueue[Callable[[], None] | None],
    ) -> None:
        """One turn of the loop on this thread, or a handed-over function run with it let go."""
        try:
            run = handoffs.get_nowait()
        except queue.Empty:
            loop._run_once()  # type: ignore[attr-defined]
            return
        if run is not None:
            with self._let_go(loop):
                run()

    def run_held(self, func: Callable[..., object], *args: Any) -> None:
        """With the loop held (`parking.pause()`): `func(*args)` run on this thread as a loop
        callback, then what it made ready to run at once (a task step, a write)."""
        loop = self._loop
        selector = self._selector
        assert loop is not None and selector is not None
        with self._as_loop(loop, selector, kick=False, hold=0.0):
            loop.call_soon(func, *args, context=contextvars.Context())
            _settle_turns(loop)

    @contextlib.contextmanager
    def _driving(self, loop: asyncio.AbstractEventLoop) -> Iterator[None]:
        """Hold the loop parked and run it on this thread meanwhile."""
        selector = self._selector
        assert selector is not None
        self.parking.pause()
        try:
            with self._as_loop(loop, selector, kick=True, hold=_HOLD):
                yield
        finally:
            self.parking.resume()

    @contextlib.contextmanager
    def _as_loop(
        self, loop: asyncio.AbstractEventLoop, selector: _ParkingSelector, kick: bool, hold: float
    ) -> Iterator[None]:
        """With the loop held: this thread is the loop's for a while (the loop thread kept
        off its selector, this thread's running loop, the thread asyncio checks against)."""
        selector.take_over(loop, kick)
        before = asyncio_events._get_running_loop()
        library = _library("asyncio")
        asyncio_events._set_running_loop(loop)
        try:
            yield
        finally:
            if loop._thread_id is not None:  # type: ignore[attr-defined]
                loop._thread_id = self._thread.ident  # type: ignore[attr-defined]
            asyncio_events._set_running_loop(before)
            _library(library)
            selector.release(loop, hold)

    @contextlib.contextmanager
    def _let_go(self, loop: asyncio.AbstractEventLoop) -> Iterator[None]:
        """The loop back on its thread for a while, inside `_driving`."""
        selector = self._selector
        assert selector is not None
        if loop._thread_id is not None:  # type: ignore[attr-defined]
            loop._thread_id = self._thread.ident  # type: ignore[attr-defined]
        before = asyncio_events._get_running_loop()
        asyncio_events._set_running_loop(None)
        library = _library(None)
        selector.release(loop, 0.0)
        selector.serve_now()  # the loop thread serves the calls the function makes
        self.parking.resume()
        try:
            yield
        finally:
            self.parking.pause()
            selector.take_over(loop, kick=True)
            _library(library)
            asyncio_events._set_running_loop(before)

    def _serve_now(self) -> None:
        """The loop thread back on its selector at once (a call it must serve)."""
        selector = self._selector
        if selector is not None:
            selector.serve_now()

    def _on_loop(self) -> bool:
        """Whether this thread runs the loop now: the loop thread, or a caller inside a drive
        or `run_held` (a callback it runs), which a blocking call would wait on forever."""
        return (
            threading.current_thread() is self._thread
            or asyncio_events._get_running_loop() is self._loop
        )

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
        loop.call_soon_threadsafe(_nothing)  # a driving caller may wait in the selector
        return await outcome

    def start_task(self, func: Callable[..., Awaitable[Any]], *args: Any) -> Any:
        """Start `func(*args, task_status=...)` as a task on the loop and wait until it calls
        `task_status.started(value)`; returns the value. The task runs until it ends or the
        loop stops."""
        portal = self._portal
        if portal is None:
            raise RuntimeError("this client's loop has stopped")
        self._serve_now()
        _, value = portal.start_task(func, *args)
        return value

    def start_with_outcome(
        self, func: Callable[..., Awaitable[T]], *args: Any
    ) -> tuple[Future[T], Any]:
        """`start_task`, also returning the `concurrent.futures.Future` of the task's outcome
        (what it returns or raises after `task_status.started`). An exception raised before
        that is raised here. Refused from the loop's own thread."""
        if self._on_loop():
            raise RuntimeError("a sync client was called from its own loop (from a callback?)")
        portal = self._portal
        if portal is None or not self._thread.is_alive():
            raise RuntimeError("this client's loop has stopped (the client is closed)")
        self._serve_now()
        return portal.start_task(func, *args)

    def submit(self, func: Callable[..., Awaitable[T]], *args: Any) -> Future[T]:
        """Start `func(*args)` as a task on the loop and return at once: its outcome arrives in
        the `concurrent.futures.Future` (cancelled if the loop stops first)."""
        portal = self._portal
        if portal is None or not self._thread.is_alive():
            raise RuntimeError("this client's loop has stopped (the client is closed)")
        self._serve_now()
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
        self._serve_now()  # (a caller may wait for what it does)

    def stop(self, timeout: float | None = None) -> bool:
        """Cancel what still runs on the loop, end it, and join the thread within `timeout`
        seconds; True if the thread ended. From the loop's own thread it only asks."""
        portal = self._portal
        self._serve_now()
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


def _library(name: str | None) -> str | None:
    """Set the async library sniffio names for this thread (what anyio asks); returns the one
    set before. A thread running the loop of a sync client may be inside trio's."""
    if sniffio is None:
        return None
    before: str | None = sniffio.thread_local.name
    sniffio.thread_local.name = name
    return before


def _nothing() -> None:
    """Scheduled only to wake the thread waiting in the loop's selector."""


def _settle_turns(loop: asyncio.AbstractEventLoop) -> None:
    """Run the loop's turns on this thread while callbacks are ready (`_HELD_TURNS` at most):
    what a caller's work left behind (a task's done callbacks, a write) runs here rather than
    waking the loop thread for it."""
    for _ in range(_HELD_TURNS):
        if not loop._ready:  # type: ignore[attr-defined]
            return
        loop._run_once()  # type: ignore[attr-defined]


class _Waker:
    """A drive's done callback: a task finished by another thread running the loop wakes the
    driving thread waiting in the selector; finished on the driving thread, it does nothing."""

    __slots__ = ("_driver",)

    def __init__(self, driver: int) -> None:
        self._driver = driver

    def __call__(self, task: asyncio.Task[Any]) -> None:
        if threading.get_ident() != self._driver:
            task.get_loop().call_soon_threadsafe(_nothing)


def _cancel_all() -> None:
    for task in asyncio.all_tasks():
        task.cancel()


__all__ = ["LoopThread"]
