"""The blocking `Producer`: `krafka.Producer`'s constructor and methods for code without an
event loop (scripts, notebooks, WSGI apps), shared safely by threads.

    with Producer(bootstrap_servers="127.0.0.1:9092", linger=0.005) as producer:
        future = producer.send("orders", b"v", key=b"k")     # returns at once
        meta = future.result(timeout=10)                      # RecordMetadata, or raises
        producer.send_and_wait("orders", b"v2")
        producer.flush()

`send` returns a `concurrent.futures.Future[RecordMetadata]` (a `DeliveryFuture`): `result()`,
`exception()`, `add_done_callback`, `concurrent.futures.wait` and `as_completed` work as usual,
and callbacks run on the producer's background thread. Errors are the async producer's exception
classes: raised by `send` for a closed producer or a record the API refuses (an illegal topic
name, headers that are not `(str, bytes | None)` pairs), otherwise by the future; `flush`, the
transaction calls and `close` raise theirs directly.

How a record gets to the async producer: while its loop thread is parked waiting for I/O,
`send` holds it there (`LoopThread.parking`) and appends the record right on the calling
thread, exactly as the async `send` would, through the async producer's documented ways in
(while it is `direct`: its `engine`'s `append_open`, then `append` with the loop's clock).
When a batch opened or sealed, or a timer of the loop (a linger) is due, the loop turns right
there too, still held (`LoopThread.run_held`: a sealed batch goes on the wire from this thread,
answers already read are handled), as the async `send` lets the loop turn then; and while
records keep coming, the loop thread keeps off (`ParkingLock.sent`: until 1 ms after the last
of them): no hand-over and no wake-up of the loop thread per batch. A record that needs more
(headers, metadata not yet known, a full buffer, interceptors or a transaction), or that comes
while records are still queued, goes through `krafka.sync.outbox` to the loop. Either way
records reach the async producer in the order `send` was called (per calling thread).
`send_many` hands its columns to the async `send_many` on the loop in one call (after the
queued records) and returns one `concurrent.futures.Future` for all of them.
"""

from __future__ import annotations

import time
import weakref
from collections.abc import Awaitable, Callable, Sequence
from concurrent.futures import Future
from typing import Any

import anyio
import anyio.abc

from krafka._twins import extensions_enabled
from krafka.errors import InvalidStateError, KrafkaError
from krafka.io.producer import DeliveryHandle
from krafka.io.producer import Producer as AsyncProducer
from krafka.io.tracing import Tracing
from krafka.sansio.producer.record import Header, RecordMetadata, check_headers, check_record
from krafka.sansio.topic_name import check_topic
from krafka.sync.client import SyncClient, blocking, driving, on_loop
from krafka.sync.delivery import DeliveryFuture
from krafka.sync.outbox import Outbox
from krafka.sync.untracked import new_untracked

_P = AsyncProducer


def context_send(tracing: Tracing, send: Callable[..., DeliveryFuture]) -> Any:
    """`send` with tracing on (default mode): the record carries the trace context of the
    calling thread's current sampled span, if any (`krafka.io.tracing`)."""
    current, empty, with_context = (
        tracing.current_context,
        tracing.empty_context,
        tracing.with_context,
    )

    def traced(
        topic: str,
        value: bytes | None = None,
        key: bytes | None = None,
        *,
        headers: Sequence[Header] | None = None,
        partition: int | None = None,
        timestamp: int | None = None,
    ) -> DeliveryFuture:
        context = current()
        if context is not empty:
            headers = with_context(headers, context)
        return send(topic, value, key, headers=headers, partition=partition, timestamp=timestamp)

    return traced


def compiled_send(parking: object) -> Any:
    """The compiled `send` (`_send.pyx`), if built and not turned off, and if the loop's lock
    is the compiled one it works with; else None (the Python `send` runs)."""
    if not extensions_enabled():
        return None
    try:
        from krafka.sync._parking import ParkingLock
        from krafka.sync._send import DirectSend
    except ImportError:
        return None
    return DirectSend if isinstance(parking, ParkingLock) else None


class Producer(SyncClient[AsyncProducer]):
    """`krafka.Producer` with blocking methods, on a background thread of its own."""

    _async_class = AsyncProducer
    #: Records queued for the background thread before `send` waits (bounds memory).
    queue_limit = 1000
    #: The compiled `send`'s object (`_send.pyx`), told when the producer closes.
    _direct: Any = None

    def _started(self) -> None:
        self._outbox = Outbox(self._client, self._thread, self.queue_limit)
        self._items = self._outbox.items
        self._future_type = self._outbox.future_type
        parking = self._thread.parking
        self._pause, self._resume = parking.pause, parking.resume
        self._try_pause = parking.try_pause
        self._sent = parking.sent
        self._engine = self._client.engine
        self._clock = self._thread.time
        self._wake = self._client.driver.wake
        compiled = compiled_send(parking)
        tracing = self._client.tracing
        if tracing is not None and tracing.trace_records:
            self.send = self._traced_send  # type: ignore[method-assign]
            return
        if compiled is not None:
            self._direct = compiled(
                weakref.ref(self), parking, self._outbox, self._future_type, self._client,
                self._thread.run_held, self._append_new, InvalidStateError,
            )  # fmt: skip
            self.send = self._direct.send  # type: ignore[method-assign]
        if tracing is not None:
            self.send = context_send(tracing, self.send)  # type: ignore[method-assign]

    def send(
        self,
        topic: str,
        value: bytes | None = None,
        key: bytes | None = None,
        *,
        headers: Sequence[Header] | None = None,
        partition: int | None = None,
        timestamp: int | None = None,
    ) -> DeliveryFuture:
        """Send one record; returns its future at once (it waits only for the background
        thread to park, or when `queue_limit` records are still queued for it).

        (With the compiled extensions, `krafka/sync/_send.pyx` does exactly this in C.)"""
        if self._closed:
            raise InvalidStateError("producer is closed")
        future = new_untracked(self._future_type)  # no __init__ (see DeliveryFuture)
        outbox = self._outbox
        client = self._client
        held = False
        if headers is None:
            held = self._try_pause()  # parked now: the checks below are made holding it
            if not held and outbox.idle and client.direct:
                held = self._pause()  # running: wait for it to park only if it may go direct
        if held:
            try:  # the loop is parked: append to the engine right here (module doc)
                if outbox.idle and client.direct:  # still nothing queued before this record
                    engine = self._engine
                    due = engine.due
                    found = engine.append_open(topic, partition, timestamp, key, value)
                    handle: Any = found
                    if found is None or type(found) is int:
                        partition = partition if found is None else found
                        handle = self._append_new(topic, partition, timestamp, key, value)
                    if handle is not None:
                        future._handle = handle
                        if self._sent() or (engine.due and not due):
                            self._thread.run_held(self._wake)
                        return future
            finally:
                self._resume()
        return self._queue(topic, value, key, headers, partition, timestamp, future)

    def _traced_send(
        self,
        topic: str,
        value: bytes | None = None,
        key: bytes | None = None,
        *,
        headers: Sequence[Header] | None = None,
        partition: int | None = None,
        timestamp: int | None = None,
    ) -> DeliveryFuture:
        """`send` with tracing on: its `send {topic}` span starts here, in the caller's context
        (`krafka.io.tracing`), and ends when the future does."""
        tracing = self._client.tracing
        assert tracing is not None
        span, headers = tracing.start_send(topic, partition, key, value, headers)
        try:
            future = Producer.send(self, topic, value, key, headers=headers,
                                   partition=partition, timestamp=timestamp)  # fmt: skip
        except BaseException as exc:
            tracing.end_send(span, topic, partition, None, exc)
            raise

        def done(finished: Future[RecordMetadata]) -> None:
            error = finished.exception()
            meta = None if error is not None else finished.result()
            tracing.end_send(
                span,
                topic,
                partition if meta is None else meta.partition,
                None if meta is None else meta.offset,
                error,
            )

        future.add_done_callback(done)
        return future

    def _append_new(
        self,
        topic: str,
        partition: int | None,
        timestamp: int | None,
        key: bytes | None,
        value: bytes | None,
    ) -> DeliveryHandle | None:
        """The engine's `append` for a record `append_open` could not take (with the loop
        parked): its handle, or None when the record must go through the loop (the async
        `send` waits for metadata or room, or raises what it refuses, through the future)."""
        try:
            return self._engine.append(  # type: ignore[return-value]
                topic, partition, timestamp, key, value, None,
                self._clock(), int(time.time() * 1000),
            )  # fmt: skip
        except (KrafkaError, TypeError, ValueError):  # AppendBlocked is a KrafkaError
            return None

    def _queue(
        self,
        topic: str,
        value: bytes | None,
        key: bytes | None,
        headers: Sequence[Header] | None,
        partition: int | None,
        timestamp: int | None,
        future: DeliveryFuture,
    ) -> DeliveryFuture:
        """Hand a record over to the loop (`krafka.sync.outbox`), checked first: what the
        async `send` would refuse at once is raised here, not through the future."""
        check_topic(topic)
        check_record(key, value, timestamp)
        if headers:
            check_headers(headers)
        items, outbox = self._items, self._outbox
        items.append((topic, value, key, headers, partition, timestamp, future))
        if outbox.idle:
            outbox.idle = False
            self._thread.call_soon(outbox._wake_up)
        if len(items) >= outbox.limit:
            outbox.wait_for_room()
        return future

    def send_and_wait(
        self,
        topic: str,
        value: bytes | None = None,
        key: bytes | None = None,
        *,
        headers: Sequence[Header] | None = None,
        partition: int | None = None,
        timestamp: int | None = None,
    ) -> RecordMetadata:
        """Send one record and wait for its delivery."""
        future = self.send(
            topic, value, key, headers=headers, partition=partition, timestamp=timestamp
        )
        return future.result()

    def send_many(
        self,
        topic: str,
        values: Sequence[bytes | None],
        keys: Sequence[bytes | None] | None = None,
        *,
        partition: int | Sequence[int | None] | None = None,
        headers: Sequence[Sequence[Header] | None] | None = None,
        timestamps: Sequence[int | None] | None = None,
    ) -> Future[int]:
        """Send many records of one topic in one call (`krafka.Producer.send_many`: same
        columns, checks and waits); returns once they are appended, with one
        `concurrent.futures.Future` whose result is their number once all are delivered (or
        that raises the first failure). What `send` would refuse at once raises here, before
        any record is appended. Records sent before the call go first."""
        if self._closed:
            raise InvalidStateError("producer is closed")
        future, _ = self._thread.start_with_outcome(
            self._send_many, topic, values, keys, partition, headers, timestamps
        )
        return future

    async def _send_many(
        self,
        topic: str,
        values: Sequence[bytes | None],
        keys: Sequence[bytes | None] | None,
        partition: int | Sequence[int | None] | None,
        headers: Sequence[Sequence[Header] | None] | None,
        timestamps: Sequence[int | None] | None,
        *,
        task_status: anyio.abc.TaskStatus[None],
    ) -> int:
        """(On the loop) hand over the queued records, append these, then wait for them."""
        await self._outbox.pump()
        bulk = await self._client.send_many(
            topic, values, keys, partition=partition, headers=headers, timestamps=timestamps
        )
        task_status.started()
        return await bulk

    flush = driving(_P.flush)
    partitions_for = blocking(_P.partitions_for)
    metrics = on_loop(_P.metrics)
    client_instance_id = blocking(_P.client_instance_id)
    update_seed_brokers = on_loop(_P.update_seed_brokers)
    init_transactions = blocking(_P.init_transactions)
    send_offsets_to_transaction = blocking(_P.send_offsets_to_transaction)
    commit_transaction = blocking(_P.commit_transaction)
    abort_transaction = blocking(_P.abort_transaction)

    def begin_transaction(self) -> None:
        """Start a transaction (records sent before this call are not part of it)."""
        self._call(self._begin)

    async def _begin(self) -> None:
        await self._outbox.pump()
        self._client.begin_transaction()

    async def _invoke(
        self, method: Callable[..., Awaitable[Any]], args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> Any:
        await self._outbox.pump()  # records sent before a call reach the producer first
        return await method(self._client, *args, **kwargs)

    def close(self, timeout: float | None = None) -> None:
        """Close the producer (as the async `close(timeout)`: records sent before are
        delivered first, within the timeout), then stop its thread; `send` refuses from now."""
        if self._direct is not None:
            self._direct.close()
        super().close(timeout)

    async def _close_on_loop(self, timeout: float | None) -> None:
        """Hand over the queued records (within the timeout: a send may wait for metadata or
        room), then close the async producer with the time left; what remains fails."""
        deadline = None if timeout is None else anyio.current_time() + timeout
        try:
            with anyio.move_on_after(timeout):
                await self._outbox.pump()
        finally:
            left = None if deadline is None else max(0.0, deadline - anyio.current_time())
            await self._client.close(left)
            self._outbox.fail_queued(InvalidStateError("producer is closed"))


__all__ = ["DeliveryFuture", "Producer"]
