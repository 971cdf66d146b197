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
`send` holds it there (`LoopThread.parking`) and appends the record to its batch right on the
calling thread, exactly as the async `send` would (`Producer._try_append`): no hand-over, no
wake-up per record. A record that needs more (headers, metadata not yet known, a full buffer,
interceptors or a transaction), or that comes while records are still queued, goes through
`krafka.sync.outbox` to the loop. Either way records reach the async producer in the order
`send` was called (per calling thread).
"""

from __future__ import annotations

import weakref
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import anyio

from krafka._twins import extensions_enabled
from krafka.errors import InvalidStateError
from krafka.io.producer import Producer as AsyncProducer
from krafka.sansio.producer.record import Header, RecordMetadata, check_headers
from krafka.sansio.topic_name import check_topic
from krafka.sync.client import SyncClient, blocking, on_loop
from krafka.sync.delivery import DeliveryFuture
from krafka.sync.outbox import Outbox
from krafka.sync.untracked import new_untracked

_P = AsyncProducer


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

    def _started(self) -> None:
        self._outbox = Outbox(self._client, self._thread, self.queue_limit)
        self._items = self._outbox.items
        self._future_type = self._outbox.future_type
        parking = self._thread.parking
        self._pause, self._resume = parking.pause, parking.resume
        self._try_append = self._client._try_append
        compiled = compiled_send(parking)
        if compiled is not None:
            self.send = compiled(  # type: ignore[method-assign]
                weakref.ref(self), parking, self._outbox, self._future_type, self._try_append,
                self._thread.call_soon, self._client._wake_sender, InvalidStateError,
                self._client, self._client._accumulator.open_appender,
            ).send  # fmt: skip

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
        if headers is None and outbox.idle and self._pause():
            try:  # the loop is parked: append to its open batch right here (module doc)
                if outbox.idle:  # still nothing queued before this record
                    handle, partition, wake = self._try_append(
                        topic, value, key, partition, timestamp
                    )
                    if handle is not None:
                        future._handle = handle
                        if wake:
                            self._thread.call_soon(self._client._wake_sender)
                        return future
            finally:
                self._resume()
        return self._queue(topic, value, key, headers, partition, timestamp, future)

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

    flush = blocking(_P.flush)
    partitions_for = blocking(_P.partitions_for)
    metrics = on_loop(_P.metrics)
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
