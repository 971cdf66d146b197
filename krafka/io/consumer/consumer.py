"""The asynchronous consumer, on anyio (asyncio and trio alike).

    async with Consumer(bootstrap_servers="127.0.0.1:9092", auto_offset_reset="earliest") as c:
        await c.assign([TopicPartition("orders", 0)])
        records = await c.poll(timeout=1.0)          # list[ConsumerRecord], [] on timeout
        async for record in c: ...

Everything is decided by the sans-IO `krafka.sansio.consumer.engine.ConsumerEngine` (fetching,
positions and resets, the group, auto-commit, closing), attached to the client's core and run
by the client's one loop (`krafka.io.attached`; the consumer has no task of its own): this
class is its application face. The application's calls are the engine's inputs; rebalance-
listener callbacks, interceptors and the errors of the background run in the application's own
task, inside `poll()`, `recv()`, `async for`, `position()`, `unsubscribe()` and `close()`, as
Java runs them in `poll()`. `wakeup()` interrupts a blocked poll, `commit` or `committed`
(`krafka.io.wakeup`).
"""

from __future__ import annotations

import inspect
import logging
import re
import uuid
from collections import deque
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from enum import Enum
from types import TracebackType
from typing import Any, TypeVar

import anyio
import anyio.lowlevel

from krafka.config.keywords import check_arguments
from krafka.errors import InvalidStateError, KafkaTimeoutError, KrafkaError
from krafka.io.attached import AttachedMachine, OutcomeTimeout, Stopped
from krafka.io.client import KafkaClient
from krafka.io.clock import loop_time
from krafka.io.consumer.arguments import (
    offset_argument,
    offsets_argument,
    partition_list,
    topic_partition,
)
from krafka.io.consumer.arrow_backlog import ArrowBacklog
from krafka.io.consumer.offsets_api import OffsetLookups
from krafka.io.consumer.pending_commit import PendingCommit
from krafka.io.consumer.settings import ConsumerInterceptor, ConsumerSettings
from krafka.io.iteration import RecordIterator, TracedRecordIterator
from krafka.io.telemetry import ClientTelemetry
from krafka.io.tracing import tracing_for
from krafka.io.wakeup import WakeupTrigger
from krafka.metrics.otel import MessagingMetrics, messaging_metrics
from krafka.metrics.registry import ClientEntry, forget, track
from krafka.sansio.consumer.engine import AfterPoll, ConsumerEngine
from krafka.sansio.consumer.events import (
    AutoCommitFailed,
    OffsetsCommitted,
    PartitionsAssigned,
    PartitionsLost,
    PartitionsRevoked,
    PollReady,
    RebalanceEvent,
)
from krafka.sansio.consumer.record import ConsumerRecord, FetchedBatch
from krafka.sansio.consumer.subscription import ResetStrategy
from krafka.sansio.group.events import GroupMembershipOperation
from krafka.sansio.telemetry import ClientKind
from krafka.structs import ConsumerGroupMetadata, OffsetAndMetadata, TopicPartition

log = logging.getLogger(__name__)
T = TypeVar("T")
Offsets = Mapping[TopicPartition, OffsetAndMetadata | int]

_LISTENER_METHODS: dict[type[Any], str] = {
    PartitionsRevoked: "on_partitions_revoked",
    PartitionsLost: "on_partitions_lost",
    PartitionsAssigned: "on_partitions_assigned",
}
#: How much longer than an operation's own timeout the application waits for its outcome.
_OUTCOME_MARGIN = 5.0
#: `async for` lets the loop's other tasks run once per this many buffered records while a
#: Fetch is under way (a 1 MiB answer of 100 B records is ~9,000 records, read 256 KiB per
#: loop turn): the answer is read while the application works, not when the buffer runs dry.
_IO_EVERY = 1024


class _State(Enum):
    NEW = "new"
    STARTED = "started"
    #: `close` runs the rebalance listener for the partitions given up: it may still commit.
    CLOSING = "closing"
    CLOSED = "closed"


class _Waiters:
    """Tasks waiting inside the consumer (a poll, a position, a close) for the engine to say
    something changed; each registers before it checks, so no wake-up is lost."""

    def __init__(self) -> None:
        self._events: set[anyio.Event] = set()

    def notify(self) -> None:
        for event in self._events:
            event.set()

    @contextmanager
    def waiter(self) -> Iterator[anyio.Event]:
        event = anyio.Event()
        self._events.add(event)
        try:
            yield event
        finally:
            self._events.discard(event)


class Consumer(OffsetLookups):
    """Reads records from Kafka. Use `async with`, or `await start()` and `await close()`."""

    def __init__(
        self,
        bootstrap_servers: str | Iterable[str] = "127.0.0.1:9092",
        *,
        client: KafkaClient | None = None,
        **options: Any,
    ) -> None:
        check_arguments("Consumer", "consumer", bootstrap_servers, options, ConsumerSettings,
                        KafkaClient)  # fmt: skip
        settings, client_options = ConsumerSettings.split(options)
        self.settings = settings
        self._client = client or KafkaClient(
            bootstrap_servers if isinstance(bootstrap_servers, str) else list(bootstrap_servers),
            client_id=settings.client_id,
            request_timeout=settings.request_timeout,
            metadata_max_age=settings.metadata_max_age,
            allow_auto_topic_creation=settings.allow_auto_topic_creation,
            **client_options,
        )
        self._own_client = client is None
        self._engine = ConsumerEngine(settings.engine_config(), self._client.metadata)
        self._buffer = self._engine.buffer
        self._arrow_backlog = ArrowBacklog()
        self._metrics = self._engine.metrics
        self._otel: MessagingMetrics | None = None
        #: When the last poll that returned records returned (messaging.process.duration).
        self._returned: float | None = None
        self._driver = AttachedMachine(
            self._client, self._engine, on_event=self._on_event, name="krafka consumer"
        )
        self._admin = None
        self._telemetry = ClientTelemetry(
            self._client, ClientKind.CONSUMER, self.metrics, settings.client_id
        )
        entry = ClientEntry(ClientKind.CONSUMER, settings.client_id, settings.group_id, _metrics)
        track(self, entry)
        self._waiters = _Waiters()
        self._wakeups = WakeupTrigger("consumer")
        self._steps: deque[RebalanceEvent] = deque()
        self._auto_committed: list[OffsetsCommitted] = []
        self._listener: Any = settings.rebalance_listener
        self._interceptors: tuple[ConsumerInterceptor, ...] = tuple(settings.interceptors)
        self._state = _State.NEW
        #: OpenTelemetry spans (`krafka.io.tracing`), or None when tracing is off.
        self.tracing = tracing_for(
            settings.tracer_provider,
            settings.client_id,
            self._client,
            group=settings.group_id,
            trace_context=settings.trace_context,
        )
        if self.tracing is not None:
            self.recv = self._traced_recv  # type: ignore[method-assign]

    @classmethod
    def from_config(cls, config: Mapping[str, Any], **overrides: Any) -> Consumer:
        """A consumer from Java/librdkafka properties (`group.id`, `auto.offset.reset`,
        `fetch.max.wait.ms`, `bootstrap.servers`, `security.protocol`, ...)."""
        from krafka.config import keywords_from_config

        return cls(**{**keywords_from_config(config, "consumer"), **overrides})

    # -- lifecycle ------------------------------------------------------------------------------

    async def start(self) -> Consumer:
        if self._state is _State.CLOSED:
            raise InvalidStateError("the consumer is closed")
        if self._state is _State.STARTED:
            return self
        self._state = _State.STARTED
        if self._own_client:
            await self._client.start(self.settings.default_api_timeout)
        self._otel = messaging_metrics(self.settings.meter_provider, self.settings.group_id)
        self._driver.start()
        await self._telemetry.start()
        return self

    async def __aenter__(self) -> Consumer:
        return await self.start()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    async def close(
        self,
        timeout: float = 30.0,
        *,
        group_membership_operation: GroupMembershipOperation | str = "default",
    ) -> None:
        """Auto-commit (when on), leave the group, close the fetch sessions, stop; returns
        within `timeout`. The rebalance listener runs for the partitions given up (in this
        task); what it raised is raised once the consumer is closed.

        `group_membership_operation` is Java's `CloseOptions` (KIP-1092): "default" (a dynamic
        member leaves, a static one stays until its session expires), "leave_group" (a static
        member leaves too: its partitions are reassigned at once) or "remain_in_group" (no
        leave: the session timeout decides; a dynamic KIP-848 member leaves anyway, as Java's).
        See `krafka.GroupMembershipOperation`."""
        operation = GroupMembershipOperation.parse(group_membership_operation)
        forget(self)
        if self._state is not _State.STARTED:
            self._state = _State.CLOSED
            return
        self._state = _State.CLOSING
        if self.tracing is not None:
            self.tracing.finish_current()
        deadline = anyio.current_time() + timeout
        self._waiters.notify()  # a poll waiting in another task returns
        raised: BaseException | None = None
        if self._driver.error is None:
            op = self._engine.close(anyio.current_time(), timeout * 0.8, operation)
            self._driver.wake()
            with anyio.CancelScope(shield=True), anyio.move_on_after(timeout * 0.9):
                try:
                    await self._settle(op, timeout * 0.8)
                except KrafkaError as exc:
                    log.info("krafka consumer: closing: %s", exc)
                except Exception as exc:  # a rebalance listener's
                    raised = exc
            self._run_commit_interceptors()
        self._state = _State.CLOSED
        await self._telemetry.close(max(0.1, deadline - anyio.current_time()) / 3)
        remaining = max(0.1, deadline - anyio.current_time())
        self._driver.stop()
        if self._own_client:
            await self._client.close(remaining)
        if raised is not None:
            raise raised

    def wakeup(self) -> None:
        """Make the blocked `poll` (`recv`, `batch_recv`, `async for`, `poll_batches`,
        `poll_arrow`), `commit` or `committed` raise `WakeupError`, or the next such call if
        none is blocked: once per wakeup (Java's `wakeup()`; call it from another task, or a
        sync consumer's from any thread). `async for` hands out the records a poll already
        buffered before it raises."""
        self._wakeups.wakeup()

    def _check_open(self) -> None:
        if self._state is not _State.STARTED:
            raise InvalidStateError("the consumer is not started (use async with) or closed")

    def _check_committable(self) -> None:
        """Commits are open while started, and while `close` runs the rebalance listener (Java's
        `onPartitionsRevoked` commits there)."""
        if self._state is not _State.STARTED and self._state is not _State.CLOSING:
            self._check_open()

    # -- assignment -----------------------------------------------------------------------------

    async def assign(self, partitions: Iterable[TopicPartition | tuple[str, int]]) -> None:
        """Read exactly these partitions (no group membership; a `group_id` still commits)."""
        self._check_open()
        self._engine.assign(partition_list("assign", partitions), anyio.current_time())
        self._changed()

    async def subscribe(
        self, topics: Iterable[str] | str | re.Pattern[str], *, listener: Any = None
    ) -> None:
        """Join the consumer group `group_id` for these topics, or every topic matching a
        compiled pattern; replaces the subscription. `listener` (or `rebalance_listener`) gets
        `on_partitions_revoked` / `_assigned` / `_lost` with Java's delta semantics, run inside
        this consumer's `poll()` (and `recv()`, `async for`, `close()` ...)."""
        self._check_open()
        wanted: Iterable[str] | re.Pattern[str] = [topics] if isinstance(topics, str) else topics
        self._engine.subscribe(wanted, anyio.current_time())
        if listener is not None:
            self._listener = listener
        self._changed()

    async def unsubscribe(self) -> None:
        """Leave the group (revoking the partitions) or drop the manual assignment."""
        self._check_open()
        op = self._engine.unsubscribe(anyio.current_time())
        self._changed()
        await self._settle(op, self.settings.default_api_timeout)

    def assignment(self) -> set[TopicPartition]:
        return self._engine.assignment()

    def subscription(self) -> set[str]:
        return self._engine.subscribed_topics()

    # -- reading --------------------------------------------------------------------------------

    async def poll(
        self, timeout: float | None = 0.0, max_records: int | None = None
    ) -> list[ConsumerRecord]:
        """Records ready within `timeout` seconds (None: wait for some); [] on timeout."""
        self._check_open()
        if self._otel is not None:
            records = await self._measured_poll(self._otel, timeout, max_records)
            return records if self.tracing is None else self.tracing.handed(records)
        records = await self._wait(timeout, lambda: self._records(max_records)) or []
        return records if self.tracing is None else self.tracing.handed(records)

    async def _measured_poll(
        self, otel: MessagingMetrics, timeout: float | None, max_records: int | None
    ) -> list[ConsumerRecord]:
        """`poll` recording the messaging metrics: the processing since the last poll's
        records, this poll's duration and its records."""
        called = anyio.current_time()
        if self._returned is not None:
            otel.processed(called - self._returned)
            self._returned = None
        records = await self._wait(timeout, lambda: self._records(max_records)) or []
        if records:
            self._returned = returned = anyio.current_time()
            otel.polled(returned - called)
        return records

    async def batch_recv(
        self, max_records: int | None = None, timeout: float | None = None
    ) -> list[ConsumerRecord]:
        """Like `poll`: up to `max_records`, waiting up to `timeout` (None: for some)."""
        return await self.poll(timeout, max_records)

    async def recv(self) -> ConsumerRecord:
        """The next record (waits for one)."""
        self._wakeups.check()
        buffer = self._buffer
        if buffer:
            return buffer.popleft()
        self._check_open()
        chunk = await self._wait(None, lambda: self._records(None))
        assert chunk
        self._engine.keep(chunk)
        return buffer.popleft()

    async def _traced_recv(self) -> ConsumerRecord:
        """`recv` with tracing on: a traced record's `process` span is current until the next
        call (`krafka.io.tracing`)."""
        tracing = self.tracing
        assert tracing is not None
        tracing.finish_current()
        record = await Consumer.recv(self)
        tracing.received(record)
        return record

    def __aiter__(self) -> AsyncIterator[ConsumerRecord]:
        """Records one by one until the consumer is closed (buffered ones without a coroutine
        each: `krafka.io.iteration`; with tracing on, each in its `process` span). While a
        Fetch is under way the loop's other tasks run once per `_IO_EVERY` records handed
        out, so its answer is read while the application works through this batch."""
        if self.tracing is not None:
            self.tracing.finish_current()
            return TracedRecordIterator(
                self._buffer, self._next_record, self.tracing, self._let_io_run, _IO_EVERY
            )
        return RecordIterator(self._buffer, self._next_record, self._let_io_run, _IO_EVERY)

    async def _let_io_run(self, record: ConsumerRecord) -> ConsumerRecord:
        """`record`, handed out after the loop's other tasks ran once if a Fetch is under way
        (shielded: a cancellation never drops a record already taken off the buffer)."""
        if self._engine.fetcher.in_flight:
            await anyio.lowlevel.cancel_shielded_checkpoint()
        return record

    async def __anext__(self) -> ConsumerRecord:
        """The next record (`anext(consumer)`); with tracing on, a traced record's `process`
        span is current until the next call, as with `recv`."""
        tracing = self.tracing
        buffer = self._buffer
        if tracing is None:
            return buffer.popleft() if buffer else await self._next_record()
        tracing.finish_current()
        record = buffer.popleft() if buffer else await self._next_record()
        tracing.received(record)
        return record

    async def _next_record(self) -> ConsumerRecord:
        if self._state is not _State.STARTED:
            raise StopAsyncIteration
        try:
            return await Consumer.recv(self)
        except InvalidStateError:
            if self._state is _State.STARTED:
                raise
            raise StopAsyncIteration from None

    async def poll_batches(self, timeout: float | None = 0.0) -> list[FetchedBatch]:
        """Raw record batches per partition, for bulk decoders (see `FetchedBatch`); with
        tracing on, in a `poll {topic}` span (`krafka.io.tracing`)."""
        batches = await self._fetch_batches(timeout)
        if batches and self.tracing is not None:
            self.tracing.polled_batches(batches)
        return batches

    async def _fetch_batches(self, timeout: float | None = 0.0) -> list[FetchedBatch]:
        """`poll_batches` without its span (for decoders making their own, as `poll_arrow`)."""
        self._check_open()
        batches = await self._wait(timeout, self._batches)
        return batches or []

    async def poll_arrow(
        self, timeout: float | None = 0.0, max_records: int | None = None
    ) -> list[Any]:
        """Records ready within `timeout` seconds as `pyarrow.RecordBatch`es in Spark's Kafka
        row (`krafka.arrow.kafka_schema()`), decoded with no object per record; positions and
        commits as with `poll` (see `krafka.io.consumer.arrow_poll`). Needs pyarrow."""
        from krafka.io.consumer.arrow_poll import poll_arrow

        return await poll_arrow(self, timeout, max_records)

    def _has_ready(self) -> bool:
        return bool(self._buffer) or self._engine.fetcher.has_data()

    def poll_ready(
        self, now: float, max_records: int | None = None, started: float | None = None
    ) -> list[ConsumerRecord] | None:
        """The sync facade's hook (`krafka.sync.Consumer.poll`): the records `poll` would
        return right now without waiting, taken on the calling thread while this consumer's
        loop is parked (`krafka.sync.loop`); None, untouched, when the poll must go the normal
        way (nothing ready, listener steps or commit interceptors due, a crash, a pending
        wakeup, tracing on, not started); [] when it took none after all (the poll goes the
        normal way too). `now` is the loop's clock, `started` when that poll began (default
        `now`). Positions, auto-commit, metrics and
        interceptors as `poll`; it never awaits nor touches anyio: once it returned a list or
        raised, run `poll_ready_done()` as a callback of the loop (`LoopThread.run_held`)."""
        if (
            self._state is not _State.STARTED
            or self.tracing is not None
            or self._steps
            or self._auto_committed
            or self._driver.error is not None
            or self._wakeups.pending
            or not self._has_ready()
        ):
            return None
        started = now if started is None else started
        otel = self._otel
        if otel is not None and self._returned is not None:
            otel.processed(started - self._returned)
            self._returned = None
        self._metrics.poll_started(started)
        try:
            records = self._take(now, max_records)
        finally:
            self._metrics.poll_ended(now)
        if records and otel is not None:
            self._returned = now
            otel.polled(now - started)
        return records

    def poll_ready_done(self) -> None:
        """The sync facade's hook, as a loop callback after `poll_ready`: the engine steps now
        when the take used the fetched data up (the next Fetch goes out, as `poll` has it),
        else the client's loop does soon (a plain callback: nothing here awaits)."""
        self._step(True)

    def _records(self, max_records: int | None) -> list[ConsumerRecord]:
        """Records for the application now ([] when none): buffered ones first, else the
        fetcher's, through the interceptors."""
        buffered = bool(self._buffer)
        try:
            return self._take(anyio.current_time(), max_records)
        finally:
            self._step(not buffered)

    def _take(self, now: float, max_records: int | None) -> list[ConsumerRecord]:
        """`_records` without stepping the engine after the take."""
        buffered = bool(self._buffer)
        records = self._engine.poll(now, max_records)
        if records and not buffered:
            if self._interceptors:
                records = self._intercepted(records)
            if self._otel is not None:
                self._otel.consumed(self._engine.fetcher.taken.items())
        if records and self.tracing is not None:
            self.tracing.poll(records)
        return records

    def _batches(self) -> list[FetchedBatch]:
        try:
            return self._engine.poll_batches(anyio.current_time())
        finally:
            self._step(True)

    def _step(self, fetched: bool) -> None:
        """After a take: a poll may start a rebalance, and frees fetch buffer space. A take
        from the fetcher (`fetched`) that used a buffered fetch up steps the engine now, so
        the next Fetch is planned before this task hands the records out (`_wait_for` lets
        it go on the wire); others leave it to the client's loop, unless the poll gave the
        engine nothing to do (`AfterPoll.NOTHING`: an empty poll while a Fetch is under way)."""
        after = self._engine.after_poll()
        if fetched and after is AfterPoll.STEP and self._driver.step():
            return
        if after is not AfterPoll.NOTHING:
            self._driver.wake()

    def _intercepted(self, records: list[ConsumerRecord]) -> list[ConsumerRecord]:
        """`records` through each interceptor's `on_consume`. One that raises, or returns
        something other than a list, is logged and skipped, the records kept as they were
        (Java's rule): the positions already moved past them, so raising would lose them."""
        for interceptor in self._interceptors:
            hook = getattr(interceptor, "on_consume", None)
            if hook is None:
                continue
            try:
                changed = hook(records)
            except Exception:
                log.exception("consumer interceptor %r failed in on_consume", interceptor)
                continue
            if isinstance(changed, list):
                records = changed
            else:
                log.error(
                    "consumer interceptor %r returned %r from on_consume, not a list: "
                    "the records are returned as they were",
                    interceptor,
                    type(changed).__name__,
                )
        return records

    async def _wait(self, timeout: float | None, take: Callable[[], T]) -> T | None:
        """`_wait_for`, timed for the poll metrics (time between polls, poll idle ratio)."""
        self._metrics.poll_started(anyio.current_time())
        try:
            return await self._wait_for(timeout, take)
        finally:
            self._metrics.poll_ended(anyio.current_time())

    async def _wait_for(self, timeout: float | None, take: Callable[[], T]) -> T | None:
        """Call `take()` until it returns something or `timeout` passes, running what waits
        for the application (listener steps, interceptors) first each time.

        Raising, or returning nothing, always lets other tasks run first: a loop that polls
        again at once after an error (or with no timeout) must not starve the driver.
        """
        deadline = None if timeout is None else anyio.current_time() + timeout
        while True:
            with self._waiters.waiter() as woken:
                try:
                    await self._serve()
                    self._wakeups.check()
                    await self._client.send_pending()
                    got = take()
                except Exception:
                    await anyio.lowlevel.checkpoint()
                    raise
                if got:
                    await self._client.send_pending()
                    return got
                if deadline is None:
                    await self._wakeups.interruptible(woken.wait)
                else:
                    remaining = deadline - anyio.current_time()
                    if remaining <= 0:
                        await anyio.lowlevel.checkpoint()
                        return None
                    with anyio.move_on_after(remaining):
                        await self._wakeups.interruptible(woken.wait)
            if self._state is not _State.STARTED:
                raise InvalidStateError("the consumer was closed")

    async def _serve(self) -> None:
        """What runs in the application's task: the driver's crash is raised, listener steps
        run (what one raised is raised), auto-commits reach the interceptors."""
        error = self._driver.error
        if error is not None:
            raise KrafkaError(str(error)) from error.__cause__
        self._run_commit_interceptors()
        while self._steps:
            event = self._steps.popleft()
            raised = await self._run_listener(event)
            self._engine.rebalance_done(event, anyio.current_time(), raised)
            self._driver.wake()
            if raised is not None:
                raise raised

    async def _run_listener(self, event: RebalanceEvent) -> Exception | None:
        hook = getattr(self._listener, _LISTENER_METHODS[type(event)], None)
        if hook is None:
            return None
        try:
            result = hook(set(event.partitions))
            if inspect.isawaitable(result):
                await result
        except Exception as exc:
            log.info("krafka consumer: the rebalance listener raised %r", exc)
            return exc
        return None

    async def _settle(self, op: int, timeout: float) -> Any:
        """Wait for engine operation `op`, serving the application's side meanwhile (a leave
        revokes partitions: the listener runs here)."""
        done = anyio.Event()
        box: dict[str, Any] = {}

        async def wait() -> None:
            try:
                box["value"] = await self._driver.outcome(op, timeout + _OUTCOME_MARGIN)
            except Exception as exc:
                box["error"] = exc
            finally:
                done.set()
                self._waiters.notify()

        async with anyio.create_task_group() as tg:
            tg.start_soon(wait)
            while not done.is_set():
                with self._waiters.waiter() as woken:
                    try:
                        await self._serve()
                    except BaseException:
                        tg.cancel_scope.cancel()
                        raise
                    if not done.is_set():
                        await woken.wait()
        if "error" in box:
            raise box["error"]
        return box.get("value")

    # -- the engine's events --------------------------------------------------------------------

    def _on_event(self, event: Any) -> None:
        if isinstance(event, PollReady | Stopped):
            self._waiters.notify()
        elif isinstance(event, PartitionsRevoked | PartitionsLost | PartitionsAssigned):
            self._steps.append(event)
            self._waiters.notify()
        elif isinstance(event, OffsetsCommitted):
            if self._interceptors:
                self._auto_committed.append(event)
            if self.tracing is not None:
                self.tracing.auto_committed(anyio.current_time() - event.sent)
        elif isinstance(event, AutoCommitFailed) and self.tracing is not None:
            self.tracing.auto_committed(anyio.current_time() - event.sent, event.error)

    def _run_commit_interceptors(self) -> None:
        pending, self._auto_committed = self._auto_committed, []
        for event in pending:
            self._on_commit(event.offsets)

    def _on_commit(self, offsets: Mapping[TopicPartition, OffsetAndMetadata]) -> None:
        for interceptor in self._interceptors:
            hook = getattr(interceptor, "on_commit", None)
            if hook is not None:
                try:
                    hook(offsets)
                except Exception:  # the commit succeeded: Java logs an interceptor's failure
                    log.exception("consumer interceptor %r failed in on_commit", interceptor)

    def _changed(self) -> None:
        """An application call changed the engine: it runs now; waiting polls look again."""
        self._driver.wake()
        self._waiters.notify()

    # -- positions ------------------------------------------------------------------------------

    async def seek(
        self, partition: TopicPartition, offset: int, leader_epoch: int | None = None
    ) -> None:
        """Read `partition` from `offset` on (the next poll returns it first)."""
        tp = topic_partition("seek", partition, "partition")
        self._engine.seek(tp, offset_argument("seek", offset), leader_epoch)
        self._changed()

    async def seek_many(self, offsets: Mapping[TopicPartition, int | OffsetAndMetadata]) -> None:
        for tp, offset in offsets.items():
            if isinstance(offset, OffsetAndMetadata):
                await self.seek(tp, offset.offset, offset.leader_epoch)
            else:
                await self.seek(tp, int(offset))

    async def seek_to_beginning(self, *partitions: TopicPartition) -> None:
        self._engine.seek_to(
            partition_list("seek_to_beginning", partitions), ResetStrategy.EARLIEST
        )
        self._changed()

    async def seek_to_end(self, *partitions: TopicPartition) -> None:
        self._engine.seek_to(partition_list("seek_to_end", partitions), ResetStrategy.LATEST)
        self._changed()

    async def position(self, partition: TopicPartition, timeout: float | None = None) -> int:
        """The offset of the next record to be returned (resolving it first if need be)."""
        tp = topic_partition("position", partition, "partition")
        with anyio.fail_after(timeout or self.settings.default_api_timeout):
            while True:
                with self._waiters.waiter() as woken:
                    await self._serve()
                    position = self._engine.position(tp)
                    if position is not None:
                        return position
                    self._engine.raise_failure()
                    self._driver.wake()
                    await woken.wait()

    def pause(self, *partitions: TopicPartition) -> None:
        self._engine.pause(partition_list("pause", partitions))

    def resume(self, *partitions: TopicPartition) -> None:
        self._engine.resume(partition_list("resume", partitions))
        self._changed()

    def paused(self) -> set[TopicPartition]:
        return self._engine.paused()

    # -- commits --------------------------------------------------------------------------------

    async def commit(self, offsets: Offsets | None = None, *, timeout: float | None = None) -> None:
        """Commit `offsets` (default: the positions of everything returned so far)."""
        self._check_committable()
        if offsets is not None:
            offsets = offsets_argument("commit", offsets)
        started = anyio.current_time()
        op = self._engine.commit(offsets, started, timeout)
        self._driver.wake()
        outcome = self._outcome(op, timeout, "commit", interruptible=True)
        if self.tracing is not None:
            span = self.tracing.settle_span("commit")
            outcome = self.tracing.committed(span, outcome)
        try:
            committed = await outcome
        except KrafkaError as exc:
            if self._otel is not None:
                self._otel.operation("commit", anyio.current_time() - started, exc)
            raise
        if self._otel is not None:
            self._otel.operation("commit", anyio.current_time() - started)
        self._on_commit(committed)

    def commit_async(self, offsets: Offsets | None = None) -> PendingCommit:
        """Start a commit (default: the positions of everything returned so far); await the
        result to learn how it went. Its `offsets` are what it commits. Commits are applied in
        call order, `commit_async` and `commit` alike."""
        self._check_committable()
        wanted = (
            self._engine.consumed()
            if offsets is None
            else offsets_argument("commit_async", offsets)
        )
        op = self._engine.commit(wanted, anyio.current_time())
        self._driver.wake()
        pending = PendingCommit(wanted)
        span = None if self.tracing is None else self.tracing.settle_span("commit")
        self._client.start_soon(
            pending.run, lambda _: self._finish_commit(op, span), name="krafka commit"
        )
        return pending

    async def _finish_commit(self, op: int, span: Any = None) -> None:
        outcome = self._outcome(op, None, "commit")
        if self.tracing is not None and span is not None:
            outcome = self.tracing.committed(span, outcome)
        self._on_commit(await outcome)

    async def committed(
        self, partitions: Iterable[TopicPartition], *, timeout: float | None = None
    ) -> dict[TopicPartition, OffsetAndMetadata | None]:
        self._check_committable()
        wanted = partition_list("committed", partitions)
        if not wanted:
            return {}
        op = self._engine.committed(wanted, anyio.current_time(), timeout)
        self._driver.wake()
        found: Mapping[TopicPartition, OffsetAndMetadata | None] = await self._outcome(
            op, timeout, "committed", interruptible=True
        )
        return {tp: found.get(tp) for tp in wanted}

    async def _outcome(
        self, op: int, timeout: float | None, what: str, *, interruptible: bool = False
    ) -> Any:
        """The outcome of engine operation `op`; `interruptible`: `wakeup()` stops the wait
        (the operation itself goes on)."""
        error = self._driver.error
        if error is not None:
            raise KrafkaError(str(error)) from error.__cause__
        wait = (self.settings.default_api_timeout if timeout is None else timeout) + _OUTCOME_MARGIN
        try:
            if interruptible:
                return await self._wakeups.interruptible(lambda: self._driver.outcome(op, wait))
            return await self._driver.outcome(op, wait)
        except OutcomeTimeout as exc:
            raise KafkaTimeoutError(
                f"{what}(timeout={timeout}) got no outcome in time: it is still pending (sent "
                "and unanswered, or queued behind an earlier commit), so the offsets may yet be "
                "committed; it is safe to commit them again (commits are applied in call order)"
            ) from exc

    def group_metadata(self) -> ConsumerGroupMetadata:
        return self._engine.group_metadata()

    # -- lag and metrics ------------------------------------------------------------------------

    def lag(self) -> dict[TopicPartition, int]:
        """Records behind the end of each partition, from the last fetch (no network call)."""
        return self._engine.lag()

    def current_lag(self, partition: TopicPartition) -> int | None:
        return self._engine.lag().get(topic_partition("current_lag", partition, "partition"))

    def cached_beginning_offset(self, partition: TopicPartition) -> int | None:
        """The log start offset of assigned `partition` from the last fetch response (no
        network call; None until one came)."""
        return self._engine.cached_beginning_offset(partition)

    def cached_end_offset(self, partition: TopicPartition) -> int | None:
        """The high watermark (the last stable offset under read_committed) of assigned
        `partition` from the last fetch response (no network call; None until one came)."""
        return self._engine.cached_end_offset(partition)

    def update_seed_brokers(self, servers: str | Sequence[str]) -> None:
        """Replace the bootstrap servers (`"h1:9092,h2:9092"` or a list): the next
        rebootstrap (KIP-899: every known broker unreachable for `rebootstrap_trigger`, or
        REBOOTSTRAP_REQUIRED) starts from them."""
        self._client.update_seed_brokers(servers)

    def metrics(self) -> dict[str, Any]:
        """Totals since the start (`records_consumed`, `bytes_consumed`, `fetches`, fetch
        latency and throttle avg/max, ...) and the lag now: `lag` (total over the assigned
        partitions), `lag_max`, `lag_by_partition`; and Java's names (`records-consumed-rate`,
        `records-lag-max`, `records-lag` {partition: lag}, `commit-latency-avg`,
        `rebalance-total`, `last-rebalance-seconds-ago`, `assigned-partitions`, ...; see
        `krafka.sansio.consumer.metrics`). Callable from any thread once started."""
        engine = self._engine
        metrics = self._metrics.snapshot(engine.lag(), loop_time(), engine.assignment())
        metrics.update(self._client.connection_metrics().as_dict())
        return metrics

    async def client_instance_id(self, timeout: float) -> uuid.UUID | None:
        """KIP-714: the id the cluster gave this consumer's telemetry (Java's
        `clientInstanceId`), waiting up to `timeout` seconds; None when none came.
        Raises `IllegalStateError` when built with `enable_metrics_push=False`."""
        return await self._telemetry.client_instance_id(timeout)

    @property
    def client(self) -> KafkaClient:
        return self._client


def _metrics(consumer: Consumer) -> Mapping[str, Any]:
    return consumer.metrics()


__all__ = ["Consumer"]
