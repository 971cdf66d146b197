"""The blocking `Consumer`: every method of `krafka.Consumer`, same arguments, results and
exceptions, plus iteration, for scripts and notebooks.

    from krafka.sync import Consumer
    with Consumer(bootstrap_servers="127.0.0.1:9092", group_id="g",
                  auto_offset_reset="earliest") as consumer:
        consumer.subscribe(["orders"])
        for record in consumer:              # until the consumer is closed
            print(record.offset, record.value)
            consumer.commit_async(callback=on_commit)   # concurrent.futures.Future

`commit_async(offsets=None, callback=None)` returns a `concurrent.futures.Future` of the offsets
it commits, completed (from the loop thread) when the coordinator answered. The
`callback(offsets, exception or None)` is Java's `OffsetCommitCallback`: it runs on the
application's thread, inside a later call of that consumer - at the start of `poll` (and
`batch_recv`, `recv`, `poll_batches`, `poll_arrow`, iteration) or `commit_async`, at the end of
`commit` (which first waits for the commits started before it: commits are applied in call
order) and of `close` (which first waits for commits in flight, within its timeout). Every
finished commit runs its callback, then the first exception a callback raised propagates from
that call.
"""

from __future__ import annotations

import concurrent.futures
import re
import sys
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import Future
from typing import Any, Final, Generic, ParamSpec, TypeVar, overload

from krafka.errors import InvalidStateError
from krafka.io.consumer import Consumer as AsyncConsumer
from krafka.io.consumer.pending_commit import PendingCommit
from krafka.sansio.consumer.record import ConsumerRecord
from krafka.sansio.group.events import GroupMembershipOperation
from krafka.structs import OffsetAndMetadata, TopicPartition
from krafka.sync.client import SyncClient, blocking, on_loop, poll_until_closed
from krafka.sync.listener import on_caller

if sys.version_info >= (3, 11):
    from typing import Self
else:  # pragma: no cover
    from typing_extensions import Self

_C = AsyncConsumer
A = TypeVar("A")
R = TypeVar("R")
P = ParamSpec("P")
Offsets = dict[TopicPartition, OffsetAndMetadata]
#: Java's `OffsetCommitCallback.onComplete(offsets, exception)`.
CommitCallback = Callable[[Offsets, BaseException | None], object]
#: How long `commit` waits for the futures of the commits started before it (answered already:
#: commits are applied in call order) and `close()` without a timeout for commits in flight.
SETTLE_TIMEOUT: Final = 30.0


class _Commits:
    """The `commit_async` calls of one consumer: those in flight, and the finished ones whose
    callbacks wait for the application's next call. Filled from the loop thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._in_flight: set[Future[Offsets]] = set()
        self._finished: deque[tuple[CommitCallback, Offsets, BaseException | None]] = deque()

    def track(
        self, future: Future[Offsets], offsets: Offsets, callback: CommitCallback | None
    ) -> None:
        with self._lock:
            self._in_flight.add(future)
        finished, lock, in_flight = self._finished, self._lock, self._in_flight

        def done(future: Future[Offsets]) -> None:
            with lock:
                in_flight.discard(future)
            if callback is not None:
                finished.append((callback, offsets, _error_of(future)))

        future.add_done_callback(done)

    def in_flight(self) -> list[Future[Offsets]]:
        with self._lock:
            return list(self._in_flight)

    def run_callbacks(self) -> None:
        """Every finished commit's callback, on this thread; then the first one's exception."""
        errors: list[Exception] = []
        while self._finished:
            callback, offsets, error = self._finished.popleft()
            try:
                callback(offsets, error)
            except Exception as exc:
                errors.append(exc)
        if errors:
            raise errors[0]


def _error_of(future: Future[Offsets]) -> BaseException | None:
    if future.cancelled():
        return InvalidStateError(
            "the commit's future was cancelled (or the consumer stopped) before it was "
            "answered: the offsets may or may not be committed"
        )
    return future.exception()


async def _outcome(pending: PendingCommit) -> Offsets:
    await pending
    return pending.offsets


async def _begin(consumer: AsyncConsumer, offsets: Any) -> PendingCommit:
    return consumer.commit_async(offsets)


class _polling(blocking[A, P, R], Generic[A, P, R]):
    """A blocking poll that first runs the callbacks of finished `commit_async` calls."""

    @overload
    def __get__(self, obj: None, owner: type[Any]) -> Self: ...

    @overload
    def __get__(self, obj: SyncClient[Any], owner: type[Any]) -> Callable[P, R]: ...

    def __get__(self, obj: SyncClient[Any] | None, owner: type[Any]) -> Any:
        if obj is None:
            return self
        method = super().__get__(obj, owner)
        commits: _Commits = obj._commits  # type: ignore[attr-defined]

        def sync_method(*args: P.args, **kwargs: P.kwargs) -> R:
            commits.run_callbacks()
            result: R = method(*args, **kwargs)
            return result

        sync_method.__name__ = self._name
        sync_method.__doc__ = self.__doc__
        return sync_method


class Consumer(SyncClient[AsyncConsumer]):
    """`krafka.Consumer` with blocking methods, on a background thread of its own."""

    _async_class = AsyncConsumer
    _serves_callers = True
    _commits: _Commits
    _membership = GroupMembershipOperation.DEFAULT

    def _options(self, options: dict[str, Any]) -> dict[str, Any]:
        """A `rebalance_listener`'s plain callbacks run on the thread calling `poll` (`close`,
        `unsubscribe` ...), as Java's do (`krafka.sync.listener`)."""
        listener = options.get("rebalance_listener")
        if listener is None:
            return options
        return {**options, "rebalance_listener": on_caller(listener, self._run_on_caller)}

    async def _run_on_caller(self, callback: Callable[..., Any], partitions: Any) -> Any:
        return await self._thread.on_caller(callback, partitions)

    def subscribe(
        self, topics: Iterable[str] | str | re.Pattern[str], *, listener: Any = None
    ) -> None:
        """As the async `subscribe`; `listener`'s plain callbacks run on the thread calling
        `poll`, as `rebalance_listener`'s do."""
        self._subscribe(topics, listener=on_caller(listener, self._run_on_caller))

    assign = blocking(_C.assign)
    _subscribe = blocking(_C.subscribe)
    unsubscribe = blocking(_C.unsubscribe)
    _recv = _polling(_C.recv)
    poll_batches = _polling(_C.poll_batches)
    poll_arrow = _polling(_C.poll_arrow)
    seek = blocking(_C.seek)
    seek_many = blocking(_C.seek_many)
    seek_to_beginning = blocking(_C.seek_to_beginning)
    seek_to_end = blocking(_C.seek_to_end)
    position = blocking(_C.position)
    _commit = blocking(_C.commit)
    committed = blocking(_C.committed)
    beginning_offsets = blocking(_C.beginning_offsets)
    end_offsets = blocking(_C.end_offsets)
    offsets_for_times = blocking(_C.offsets_for_times)
    assignment = on_loop(_C.assignment)
    subscription = on_loop(_C.subscription)
    pause = on_loop(_C.pause)
    resume = on_loop(_C.resume)
    paused = on_loop(_C.paused)
    lag = on_loop(_C.lag)
    current_lag = on_loop(_C.current_lag)
    cached_beginning_offset = on_loop(_C.cached_beginning_offset)
    cached_end_offset = on_loop(_C.cached_end_offset)
    metrics = on_loop(_C.metrics)
    client_instance_id = blocking(_C.client_instance_id)
    update_seed_brokers = on_loop(_C.update_seed_brokers)
    group_metadata = on_loop(_C.group_metadata)

    def _started(self) -> None:
        self._commits = _Commits()
        self._parking = self._thread.parking
        self._woken = False

    def poll(
        self, timeout: float | None = 0.0, max_records: int | None = None
    ) -> list[ConsumerRecord]:
        """Records ready within `timeout` seconds (None: wait for some); [] on timeout. Those
        already fetched are taken (decoded) right here, on this thread, while the loop thread
        is parked (`poll_ready`); otherwise this thread runs the loop for the async poll."""
        self._commits.run_callbacks()
        return self._ready(max_records) or self._drive(_C.poll, self._client, timeout, max_records)

    def batch_recv(
        self, max_records: int | None = None, timeout: float | None = None
    ) -> list[ConsumerRecord]:
        """Like `poll`: up to `max_records`, waiting up to `timeout` (None: for some)."""
        return self.poll(timeout, max_records)

    def _ready(self, max_records: int | None) -> list[ConsumerRecord] | None:
        """The async consumer's `poll_ready` on this thread with the loop parked, then its
        `poll_ready_done` here too (`LoopThread.run_held`: the next Fetch goes out before the
        records are handed out). None: poll on the loop."""
        if self._woken:  # the wakeup is on its way to the loop: the poll there raises it
            self._woken = False
            return None
        if self._closed or not self._parking.pause():
            return None
        client = self._client
        records: list[ConsumerRecord] | None = None
        try:
            records = client.poll_ready(self._thread.time(), max_records)
        except BaseException:
            self._thread.call_soon(client.poll_ready_done)
            raise
        else:
            if records is not None:
                self._thread.run_held(client.poll_ready_done)
        finally:
            self._parking.resume()
        return records

    def commit(
        self,
        offsets: Mapping[TopicPartition, OffsetAndMetadata | int] | None = None,
        *,
        timeout: float | None = None,
    ) -> None:
        """Commit `offsets` (default: the positions of everything returned so far) and wait;
        then the callbacks of the `commit_async` calls before it run here."""
        self._commits.run_callbacks()
        earlier = self._commits.in_flight()
        self._commit(offsets, timeout=timeout)
        concurrent.futures.wait(earlier, SETTLE_TIMEOUT if timeout is None else timeout)
        self._commits.run_callbacks()

    def commit_async(
        self,
        offsets: Mapping[TopicPartition, OffsetAndMetadata | int] | None = None,
        callback: CommitCallback | None = None,
    ) -> Future[Offsets]:
        """Start a commit (default: the positions of everything returned so far) and return
        at once: a `concurrent.futures.Future` of the offsets it commits. `callback(offsets,
        exception or None)` runs on this thread during a later call (see the module's doc).
        A commit that cannot start (no group_id, a partition not assigned) raises here."""
        self._commits.run_callbacks()
        pending = self._call(_begin, self._client, offsets)
        future = self._thread.submit(_outcome, pending)
        self._commits.track(future, pending.offsets, callback)
        return future

    def close(
        self,
        timeout: float | None = None,
        *,
        group_membership_operation: GroupMembershipOperation | str = "default",
    ) -> None:
        """Wait for the commits in flight (within `timeout`), close (leaving the group as
        `group_membership_operation` says: see the async `close`), then run the callbacks of
        the finished `commit_async` calls on this thread."""
        if self.closed:
            return
        self._membership = GroupMembershipOperation.parse(group_membership_operation)
        concurrent.futures.wait(
            self._commits.in_flight(), SETTLE_TIMEOUT if timeout is None else timeout
        )
        try:
            super().close(timeout)
        finally:
            self._commits.run_callbacks()

    def wakeup(self) -> None:
        """Make the blocked `poll` (`recv`, `batch_recv`, iteration, ...), `commit` or
        `committed` raise `WakeupError`, or the next such call: callable from any thread, a
        signal handler included (it does not wait). Java's shutdown hook: another thread calls
        `wakeup()`, the poll loop catches `WakeupError` and closes the consumer."""
        if not self.closed:
            self._woken = True
            self._thread.call_soon(self._client.wakeup)

    async def _close_on_loop(self, timeout: float | None) -> None:
        operation = self._membership
        if timeout is None:
            await self._client.close(group_membership_operation=operation)
        else:
            await self._client.close(timeout, group_membership_operation=operation)

    def __iter__(self) -> Iterator[ConsumerRecord]:
        """Records one by one (fetched in polls of `max_poll_records`), until closed."""
        return poll_until_closed(self.poll, lambda: self.closed)

    def __next__(self) -> ConsumerRecord:
        """The next record (`next(consumer)`), as `recv`; `StopIteration` once closed."""
        if self.closed:
            raise StopIteration
        return self.recv()

    def recv(self) -> ConsumerRecord:
        """The next record (waits for one). With tracing on, a traced record's `process`
        span is current on this thread until the next call (`krafka.io.tracing`)."""
        tracing = self._client.tracing
        if tracing is None:
            return self._recv()
        tracing.finish_current()
        record = self._recv()
        tracing.received(record)
        return record


__all__ = ["Consumer"]
