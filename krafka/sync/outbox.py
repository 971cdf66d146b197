"""`Outbox`: how records that need the loop cross from the threads calling the sync producer's
`send` to the async producer on the loop thread (records with headers, for a topic without
metadata yet, while the buffer is full, and everything after them until the queue is empty;
the others are appended on the caller's thread while the loop is parked: `krafka.sync.producer`).
It also completes the futures someone waits on.

Callers append `(topic, value, key, headers, partition, timestamp, future)` to a deque (one
atomic append, no lock) and wake the loop only when it went idle; the loop's pump hands the
records to the async producer in order and gives each future its delivery handle. Nothing
else is done per record: futures complete lazily (`krafka.sync.delivery`), and only watched
ones are completed by the loop, per partition in delivery order. At `limit` queued records a
caller waits until the pump has emptied the queue, which bounds memory when brokers are slow.

Ordering: one pump at a time (a lock on the loop), records in append order, `idle` false
while anything is queued or being pumped (the caller's thread appends directly only when it
is true), and every other call (flush, transactions, close) pumps first, so a record sent
before a call reaches the async producer before that call does.
"""

from __future__ import annotations

import contextlib
import threading
from collections import deque
from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

import anyio
import anyio.abc

from krafka.errors import InvalidStateError
from krafka.sansio.producer.record import Header
from krafka.sync.delivery import RUNNING, DeliveryFuture, future_class
from krafka.sync.loop import LoopThread

if TYPE_CHECKING:
    from krafka.io.producer import Producer

#: Seconds a waiting caller sleeps between checks (also notices a stopped loop).
_ROOM_POLL: Final = 0.1

Item = tuple[
    str, bytes | None, bytes | None, Sequence[Header] | None, int | None, int | None,
    DeliveryFuture,
]  # fmt: skip


class Outbox:
    """The queue between caller threads and one async producer on `thread`'s loop."""

    def __init__(self, producer: Producer, thread: LoopThread, limit: int) -> None:
        self._producer = producer
        self._thread = thread
        self.limit = limit
        self.items: deque[Item] = deque()
        #: True when no pump will look at `items` again without a wake-up.
        self.idle = True
        self._room = threading.Event()
        self._waiting = False
        self._closed = False
        self._watch_requests: deque[DeliveryFuture] = deque()
        self._confirming: dict[tuple[str, int], deque[DeliveryFuture]] = {}
        self.future_type = future_class(self)
        self._tg: anyio.abc.TaskGroup | None = None
        self._wake: anyio.Event | None = None
        self._watch_wake: anyio.Event | None = None
        self._lock: anyio.Lock | None = None
        thread.start_task(self._run)

    # -- caller threads -------------------------------------------------------------------------

    def put(self, item: Item) -> None:
        """Queue one record (after the caller appended it to `items` itself, the fast path):
        wake the pump if idle, wait for room past the limit."""
        items = self.items
        items.append(item)
        if self.idle:
            self.idle = False
            self._thread.call_soon(self._wake_up)
        if len(items) >= self.limit:
            self.wait_for_room()

    def wait_for_room(self) -> None:
        items, room = self.items, self._room
        while len(items) >= self.limit:
            room.clear()
            self._waiting = True
            if len(items) < self.limit:
                break
            if self.idle:
                self.idle = False
                self._thread.call_soon(self._wake_up)
            room.wait(_ROOM_POLL)
            if self._closed or not self._thread.running:
                raise InvalidStateError("producer is closed")
        self._waiting = False

    def watch(self, future: DeliveryFuture) -> None:
        """Someone waits on `future`: have the loop complete it (any thread)."""
        self._watch_requests.append(future)
        self._thread.call_soon(self._wake_watcher)

    # -- the loop thread ------------------------------------------------------------------------

    async def _run(self, *, task_status: anyio.abc.TaskStatus[None]) -> None:
        self._wake = anyio.Event()
        self._watch_wake = anyio.Event()
        self._lock = anyio.Lock()
        async with anyio.create_task_group() as tg:
            self._tg = tg
            tg.start_soon(self._serve_watches)
            task_status.started()
            while True:
                await self._wake.wait()
                self._wake = anyio.Event()
                await self.pump()

    def _wake_up(self) -> None:
        """(Loop thread, from `call_soon`: no anyio call may be made here but `Event.set`.)"""
        if self._wake is not None:
            self._wake.set()

    def _wake_watcher(self) -> None:
        if self._watch_wake is not None:
            self._watch_wake.set()

    async def pump(self) -> None:
        """Hand every queued record to the async producer, in order."""
        assert self._lock is not None
        async with self._lock:
            while True:
                await self._send_queued()
                self.idle = True
                if self._waiting:
                    self._room.set()
                if not self.items:
                    return
                self.idle = False

    async def _send_queued(self) -> None:
        items = self.items
        popleft = items.popleft
        send = self._producer._untraced_send
        while items:
            topic, value, key, headers, partition, timestamp, future = popleft()
            try:
                if headers is None and partition is None and timestamp is None:
                    handle = await send(topic, value, key)
                else:
                    handle = await send(topic, value, key, headers=headers,
                                        partition=partition, timestamp=timestamp)  # fmt: skip
            except Exception as exc:
                future.fail(exc)
                continue
            except BaseException:  # cancelled (a bounded close): this record never went
                future.fail(InvalidStateError("producer closed before the record was sent"))
                raise
            future._handle = handle
            if future._watched:
                self._confirm(future)

    async def _serve_watches(self) -> None:
        requests = self._watch_requests
        while True:
            assert self._watch_wake is not None
            await self._watch_wake.wait()
            self._watch_wake = anyio.Event()
            while requests:
                future = requests.popleft()
                if future.handle is not None:  # else the pump confirms it when it is sent
                    self._confirm(future)

    def _confirm(self, future: DeliveryFuture) -> None:
        handle = future.handle
        if handle is None or future._state != RUNNING:
            return
        if handle.done:
            future.complete()
            return
        batch, _ = handle.locate()
        key = (batch.topic, batch.partition)
        queue = self._confirming.get(key)
        if queue is None:
            queue = self._confirming[key] = deque()
            assert self._tg is not None
            self._tg.start_soon(self._confirm_partition, key, queue)
        queue.append(future)

    async def _confirm_partition(self, key: tuple[str, int], queue: deque[DeliveryFuture]) -> None:
        """Complete one partition's watched futures as their records are delivered (in order:
        a partition's records are delivered in order, so its head is the one to wait on)."""
        try:
            while queue:
                future = queue[0]
                handle = future.handle
                if handle is not None:
                    with contextlib.suppress(Exception):  # complete() gives it the error
                        await handle
                    future.complete()
                queue.popleft()
        finally:
            del self._confirming[key]

    def fail_queued(self, error: Exception) -> None:
        """The producer closed: records still queued fail (loop thread, after the last pump)."""
        self._closed = True
        while self.items:
            self.items.popleft()[-1].fail(error)
        self._room.set()


__all__ = ["Item", "Outbox"]
