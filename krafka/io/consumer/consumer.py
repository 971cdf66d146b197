"""The asynchronous consumer, on anyio (asyncio and trio alike).

    async with Consumer(bootstrap_servers="127.0.0.1:9092", auto_offset_reset="earliest") as c:
        await c.assign([TopicPartition("orders", 0)])
        records = await c.poll(timeout=1.0)          # list[ConsumerRecord], [] on timeout
        async for record in c: ...

The fetch path is the sans-IO `Fetcher` run by a `MachineDriver`: one Fetch per broker with
its fetch session, the next one in flight while the application works through the last.
Positions come from the group (committed offsets), `initial_offsets`, or the reset policy
(`positions.PositionUpdater`). Background work runs in the consumer's own task (`TaskHost`),
so `start` and `close` may be called from any task.
"""

from __future__ import annotations

import contextlib
import logging
import re
from collections import deque
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from types import TracebackType
from typing import Any

import anyio
import anyio.lowlevel

from krafka.config.keywords import check_arguments
from krafka.errors import IllegalStateError, InvalidStateError, KrafkaError
from krafka.io.admin import AdminClient
from krafka.io.client import KafkaClient
from krafka.io.consumer.group_membership import GroupMembership
from krafka.io.consumer.membership import Membership, NoGroup, PendingCommit, StandaloneGroup
from krafka.io.consumer.offsets_api import OffsetLookups
from krafka.io.consumer.positions import PositionUpdater
from krafka.io.consumer.settings import ConsumerInterceptor, ConsumerSettings
from krafka.io.driver import MachineDriver, Stopped
from krafka.io.host import TaskHost
from krafka.io.iteration import RecordIterator
from krafka.sansio.consumer.fetcher import FetchCompleted, Fetcher, RefreshMetadata, ResetNeeded
from krafka.sansio.consumer.record import ConsumerRecord, FetchedBatch
from krafka.sansio.consumer.subscription import (
    ResetStrategy,
    SubscriptionState,
    SubscriptionType,
)
from krafka.sansio.group import GroupConfig, GroupMember
from krafka.sansio.group.classic.assignors import assignors_for
from krafka.sansio.group.kip848.member import ConsumerMember
from krafka.sansio.topic_name import check_topic
from krafka.structs import ConsumerGroupMetadata, OffsetAndMetadata, TopicPartition

log = logging.getLogger(__name__)


class Consumer(OffsetLookups):
    """Reads records from Kafka. Use `async with`, or `await start()` and `await close()`."""

    def __init__(
        self,
        bootstrap_servers: str | Sequence[str] = "127.0.0.1:9092",
        *,
        client: KafkaClient | None = None,
        **options: Any,
    ) -> None:
        check_arguments("Consumer", "consumer", bootstrap_servers, options, ConsumerSettings,
                        KafkaClient)  # fmt: skip
        settings, client_options = ConsumerSettings.split(options)
        self.settings = settings
        self._client = client or KafkaClient(
            bootstrap_servers,
            client_id=settings.client_id,
            request_timeout=settings.request_timeout,
            metadata_max_age=settings.metadata_max_age,
            allow_auto_topic_creation=settings.allow_auto_topic_creation,
            **client_options,
        )
        self._own_client = client is None
        self._subscription = SubscriptionState(settings.auto_offset_reset, settings.initial_offsets)
        self._fetcher = Fetcher(settings.fetch_config(), self._subscription, self._client.metadata)
        self._metrics = self._fetcher.metrics
        self._driver = MachineDriver(
            self._client, self._fetcher, on_event=self._on_event, name="krafka fetcher"
        )
        self._admin = AdminClient(
            client=self._client,
            request_timeout=settings.request_timeout,
            default_api_timeout=settings.default_api_timeout,
        )
        self._membership: Membership = NoGroup()
        self._positions: PositionUpdater | None = None
        self._host = TaskHost("krafka consumer")
        self._data = anyio.Event()
        self._pending: deque[ConsumerRecord] = deque()
        self._state = "new"
        self._interceptors: tuple[ConsumerInterceptor, ...] = tuple(settings.interceptors)
        self._stale: set[str] = set()
        self._refreshing = False

    @classmethod
    def from_config(cls, config: Mapping[str, Any], **overrides: Any) -> Consumer:
        """A consumer from Java/librdkafka properties (`group.id`, `auto.offset.reset`,
        `fetch.max.wait.ms`, `bootstrap.servers`, `security.protocol`, ...)."""
        from krafka.config import keywords_from_config

        return cls(**{**keywords_from_config(config, "consumer"), **overrides})

    # -- lifecycle ------------------------------------------------------------------------------

    async def start(self) -> Consumer:
        if self._state == "closed":
            raise InvalidStateError("the consumer is closed")
        if self._state == "started":
            return self
        self._state = "started"
        if self._own_client:
            await self._client.start()
        await self._admin.start()
        await self._host.start()
        tg = self._host.task_group
        await tg.start(self._driver.run)
        self._membership = self._make_membership()
        await self._membership.start(tg)
        self._positions = PositionUpdater(
            self._subscription,
            self._membership,
            self._admin,
            self.settings.read_committed,
            self._positions_changed,
            self._client.metadata,
            self._client.refresh_metadata,
            self._refresh_soon,
        )
        tg.start_soon(self._positions.run, name="krafka consumer positions")
        return self

    def _make_membership(self) -> Membership:
        """The group this consumer belongs to (the one place group kinds are chosen)."""
        group_id = self.settings.group_id
        if group_id is None:
            return NoGroup()
        return StandaloneGroup(
            self._client,
            group_id,
            self._subscription,
            self.settings.default_api_timeout,
            self.settings.auto_commit_interval if self.settings.enable_auto_commit else None,
        )

    async def __aenter__(self) -> Consumer:
        return await self.start()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    async def close(self, timeout: float = 30.0) -> None:
        """Commit (with auto-commit), close fetch sessions, stop; returns within `timeout`."""
        if self._state != "started":
            self._state = "closed"
            return
        self._state = "closed"
        deadline = anyio.current_time() + timeout
        autocommit = self._consumed() if self.settings.enable_auto_commit else None
        self._data.set()  # a poll waiting in another task returns
        with anyio.CancelScope(shield=True), anyio.move_on_after(timeout * 0.8):
            await self._membership.close(timeout * 0.7, autocommit=autocommit)
            await self._close_sessions()
        remaining = max(0.1, deadline - anyio.current_time())
        await self._host.close(remaining / 2)
        if self._own_client:
            await self._client.close(remaining / 2)

    async def _close_sessions(self) -> None:
        async with anyio.create_task_group() as tg:
            for request in self._fetcher.close_requests():
                tg.start_soon(self._send_quietly, request)

    async def _send_quietly(self, request: Any) -> None:
        with anyio.move_on_after(1.0):
            with contextlib.suppress(KrafkaError):
                await self._client.execute(request)

    def _check_open(self) -> None:
        if self._state != "started":
            raise InvalidStateError("the consumer is not started (use async with) or closed")

    # -- assignment -----------------------------------------------------------------------------

    async def assign(self, partitions: Iterable[TopicPartition | tuple[str, int]]) -> None:
        """Read exactly these partitions (no group membership; a `group_id` still commits)."""
        self._check_open()
        wanted = [TopicPartition(*tp) for tp in partitions]
        for tp in wanted:
            check_topic(tp.topic)
            if not isinstance(tp.partition, int) or tp.partition < 0:
                raise ValueError(f"{tp.topic!r}: a partition is an int >= 0, not {tp.partition!r}")
        self._subscription.assign_from_user(wanted)
        self._client.touch_topics(sorted({tp.topic for tp in wanted}))
        self._drop_pending(set(self._pending_partitions()) - set(wanted))
        self._changed()

    async def subscribe(
        self, topics: Iterable[str] | str | re.Pattern[str], *, listener: Any = None
    ) -> None:
        """Join the consumer group `group_id` for these topics, or every topic matching a
        compiled pattern; replaces the subscription. `listener` (or `rebalance_listener`) gets
        `on_partitions_revoked` / `_assigned` / `_lost` with Java's delta semantics."""
        self._check_open()
        if self._subscription.type is SubscriptionType.USER_ASSIGNED:
            raise IllegalStateError(
                "subscribe() and assign() are mutually exclusive: unsubscribe() first"
            )
        if self.settings.group_id is None:
            raise InvalidStateError("subscribe needs a group_id (or use assign())")
        wanted: Iterable[str] | re.Pattern[str] = [topics] if isinstance(topics, str) else topics
        if not isinstance(wanted, re.Pattern):
            wanted = [check_topic(topic) for topic in wanted]
        group = self._membership
        if not isinstance(group, GroupMembership):
            group = self._group(listener or self.settings.rebalance_listener)
            await group.start(self._host.task_group)
            self._membership = group
        await group.subscribe(wanted)
        self._changed()

    def _group(self, listener: Any) -> GroupMembership:
        """The membership `group_protocol` names: classic, or KIP-848's consumer protocol."""
        settings = self.settings
        assert settings.group_id is not None
        config = GroupConfig(
            group_id=settings.group_id,
            group_instance_id=settings.group_instance_id,
            session_timeout=settings.session_timeout,
            heartbeat_interval=settings.heartbeat_interval,
            max_poll_interval=settings.max_poll_interval,
            retry_backoff=settings.retry_backoff,
            retry_backoff_max=settings.retry_backoff_max,
            request_timeout=settings.request_timeout,
            default_api_timeout=settings.default_api_timeout,
            enable_auto_commit=settings.enable_auto_commit,
            auto_commit_interval=settings.auto_commit_interval,
            client_rack=settings.client_rack,
        )
        member: GroupMember | ConsumerMember
        if settings.group_protocol == "consumer":
            member = ConsumerMember(config, server_assignor=settings.group_remote_assignor)
        else:
            assignors = list(assignors_for(settings.partition_assignment_strategy))
            member = GroupMember(config, assignors)
        return GroupMembership(
            self._client,
            config,
            member,
            self._subscription,
            listener=listener,
            positions=self._consumed,
            on_change=self._changed,
            metadata_max_age=settings.metadata_max_age,
        )

    async def unsubscribe(self) -> None:
        """Leave the group (revoking the partitions) or drop the manual assignment."""
        self._check_open()
        if isinstance(self._membership, GroupMembership):
            await self._membership.unsubscribe(self.settings.default_api_timeout)
        self._subscription.unsubscribe()
        self._pending.clear()
        self._changed()

    def assignment(self) -> set[TopicPartition]:
        return self._subscription.assigned_partitions()

    def subscription(self) -> set[str]:
        return set(self._subscription.subscription())

    # -- reading --------------------------------------------------------------------------------

    async def poll(
        self, timeout: float | None = 0.0, max_records: int | None = None
    ) -> list[ConsumerRecord]:
        """Records ready within `timeout` seconds (None: wait for some); [] on timeout."""
        self._check_open()
        limit = max_records or self.settings.max_poll_records
        await self._membership.on_poll(anyio.current_time())
        if self._pending:
            return self._take_pending(limit)
        records = await self._wait(timeout, lambda: self._fetch(limit))
        return records or []

    async def batch_recv(
        self, max_records: int | None = None, timeout: float | None = None
    ) -> list[ConsumerRecord]:
        """Like `poll`: up to `max_records`, waiting up to `timeout` (None: for some)."""
        return await self.poll(timeout, max_records)

    async def recv(self) -> ConsumerRecord:
        """The next record (waits for one)."""
        pending = self._pending
        if pending:
            return pending.popleft()
        self._check_open()
        await self._membership.on_poll(anyio.current_time())
        chunk = await self._wait(None, lambda: self._fetch(self.settings.max_poll_records))
        assert chunk
        pending.extend(chunk)
        return pending.popleft()

    def __aiter__(self) -> AsyncIterator[ConsumerRecord]:
        """Records one by one until the consumer is closed (buffered ones without a coroutine
        each: `krafka.io.iteration`)."""
        return RecordIterator(self._pending, self._next_record)

    async def __anext__(self) -> ConsumerRecord:
        pending = self._pending
        if pending:
            return pending.popleft()
        return await self._next_record()

    async def _next_record(self) -> ConsumerRecord:
        if self._state != "started":
            raise StopAsyncIteration
        try:
            return await self.recv()
        except InvalidStateError:
            raise StopAsyncIteration from None

    async def poll_batches(self, timeout: float | None = 0.0) -> list[FetchedBatch]:
        """Raw record batches per partition, for bulk decoders (see `FetchedBatch`)."""
        self._check_open()
        await self._membership.on_poll(anyio.current_time())
        batches = await self._wait(timeout, self._fetch_batches)
        return batches or []

    async def poll_arrow(
        self, timeout: float | None = 0.0, max_records: int | None = None
    ) -> list[Any]:
        """Records ready within `timeout` seconds as `pyarrow.RecordBatch`es in Spark's Kafka
        row (`krafka.arrow.kafka_schema()`), decoded with no object per record; positions and
        commits as with `poll` (see `krafka.io.consumer.arrow_poll`). Needs pyarrow."""
        from krafka.io.consumer.arrow_poll import poll_arrow

        return await poll_arrow(self, timeout, max_records)

    def _fetch(self, limit: int) -> list[ConsumerRecord]:
        settings = self.settings
        try:
            records = self._fetcher.fetched_records(
                limit, settings.key_deserializer, settings.value_deserializer
            )
        except KrafkaError:
            self._driver.wake()  # the failed partition is fetched again, once
            raise
        if records:
            self._driver.wake()
            self._metrics.consumed(records)
            if self._interceptors:
                records = self._intercepted(records)
        return records

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

    def _fetch_batches(self) -> list[FetchedBatch]:
        try:
            batches = self._fetcher.fetched_batches()
        except KrafkaError:
            self._driver.wake()
            raise
        if batches:
            self._driver.wake()
            self._metrics.consumed_batches(batches)
        return batches

    async def _wait(self, timeout: float | None, take: Any) -> Any:
        """Call `take()` until it returns something or `timeout` passes.

        Raising, or returning nothing, always lets other tasks run first: a loop that polls
        again at once after an error (or with no timeout) must not starve the fetcher.
        """
        deadline = None if timeout is None else anyio.current_time() + timeout
        while True:
            self._data = event = anyio.Event()
            try:
                self._raise_position_errors()
                if self._driver.error is not None:
                    raise KrafkaError(str(self._driver.error)) from self._driver.error.__cause__
                self._subscription.mark_polled()
                got = take()
            except KrafkaError:
                await anyio.lowlevel.checkpoint()
                raise
            if got:
                return got
            if deadline is None:
                await event.wait()
            else:
                remaining = deadline - anyio.current_time()
                if remaining <= 0:
                    await anyio.lowlevel.checkpoint()
                    return None
                with anyio.move_on_after(remaining):
                    await event.wait()
            if self._state != "started":
                raise InvalidStateError("the consumer was closed")

    def _take_pending(self, limit: int) -> list[ConsumerRecord]:
        pending = self._pending
        count = min(limit, len(pending))
        return [pending.popleft() for _ in range(count)]

    def _on_event(self, event: Any) -> None:
        if isinstance(event, FetchCompleted | Stopped):
            self._data.set()
        elif isinstance(event, ResetNeeded):
            if self._positions is not None:
                self._positions.wake()
        elif isinstance(event, RefreshMetadata) and event.topics is not None:
            self._refresh_soon(event.topics)

    def _refresh_soon(self, topics: Iterable[str]) -> None:
        """Refresh these topics' metadata in the background (joining a refresh under way)."""
        self._stale.update(topics)
        if not self._refreshing:
            self._refreshing = True
            self._host.start_soon(self._refresh, name="krafka consumer metadata")

    async def _refresh(self) -> None:
        """One refresh at a time (the client spaces them by its refresh backoff), for every
        topic the fetcher found stale meanwhile."""
        try:
            while self._stale:
                topics, self._stale = sorted(self._stale), set()
                try:
                    await self._client.refresh_metadata(topics)
                except KrafkaError as exc:
                    log.info("krafka consumer: metadata refresh failed: %s", exc)
                    await anyio.sleep(self.settings.retry_backoff)
                self._driver.wake()
        finally:
            self._refreshing = False

    def _raise_position_errors(self) -> None:
        self._membership.raise_failure()
        positions = self._positions
        if positions is not None and positions.errors:
            positions.wake()  # it waits for the application to see its errors
            raise positions.errors.pop(0)

    def _positions_changed(self) -> None:
        self._driver.wake()
        self._data.set()

    def _changed(self) -> None:
        """Assignment or positions changed: resolve positions, replan fetches, wake pollers."""
        if self._pending:
            self._drop_pending(self._pending_partitions() - self.assignment())
        if self._positions is not None:
            self._positions.wake()
        self._driver.wake()
        self._data.set()

    # -- positions ------------------------------------------------------------------------------

    async def seek(
        self, partition: TopicPartition, offset: int, leader_epoch: int | None = None
    ) -> None:
        """Read `partition` from `offset` on (the next poll returns it first)."""
        self._subscription.seek(TopicPartition(*partition), offset, leader_epoch)
        self._drop_pending({TopicPartition(*partition)})
        self._changed()

    async def seek_many(self, offsets: Mapping[TopicPartition, int | OffsetAndMetadata]) -> None:
        for tp, offset in offsets.items():
            if isinstance(offset, OffsetAndMetadata):
                await self.seek(tp, offset.offset, offset.leader_epoch)
            else:
                await self.seek(tp, int(offset))

    async def seek_to_beginning(self, *partitions: TopicPartition) -> None:
        self._reset(partitions, ResetStrategy.EARLIEST)

    async def seek_to_end(self, *partitions: TopicPartition) -> None:
        self._reset(partitions, ResetStrategy.LATEST)

    def _reset(self, partitions: Sequence[TopicPartition], strategy: ResetStrategy) -> None:
        targets = [TopicPartition(*tp) for tp in partitions] or sorted(self.assignment())
        for tp in targets:
            self._subscription.request_offset_reset(tp, strategy)
        self._drop_pending(set(targets))
        self._changed()

    async def position(self, partition: TopicPartition, timeout: float | None = None) -> int:
        """The offset of the next record to be returned (resolving it first if need be)."""
        tp = TopicPartition(*partition)
        pending = [r.offset for r in self._pending if (r.topic, r.partition) == tp]
        if pending:
            return min(pending)
        with anyio.fail_after(timeout or self.settings.default_api_timeout):
            while (position := self._subscription.position(tp)) is None:
                self._raise_position_errors()
                assert self._positions is not None
                resolved = self._positions.resolved
                self._positions.wake()
                await resolved.wait()
        self._subscription.mark_polled((tp,))
        return position

    def pause(self, *partitions: TopicPartition) -> None:
        for tp in partitions:
            self._subscription.pause(TopicPartition(*tp))

    def resume(self, *partitions: TopicPartition) -> None:
        for tp in partitions:
            self._subscription.resume(TopicPartition(*tp))
        self._changed()

    def paused(self) -> set[TopicPartition]:
        return self._subscription.paused_partitions()

    def _consumed(self) -> dict[TopicPartition, OffsetAndMetadata]:
        """Positions of records handed to the application (not those still in `_pending`)."""
        consumed = self._subscription.all_consumed()
        for record in reversed(self._pending):
            tp = TopicPartition(record.topic, record.partition)
            consumed[tp] = OffsetAndMetadata(record.offset, "", record.leader_epoch)
        return consumed

    def _pending_partitions(self) -> set[TopicPartition]:
        return {TopicPartition(r.topic, r.partition) for r in self._pending}

    def _drop_pending(self, partitions: set[TopicPartition]) -> None:
        if partitions and self._pending:
            kept = [r for r in self._pending if (r.topic, r.partition) not in partitions]
            self._pending.clear()  # in place: iterators hold this deque
            self._pending.extend(kept)

    # -- commits --------------------------------------------------------------------------------

    async def commit(
        self,
        offsets: Mapping[TopicPartition, OffsetAndMetadata | int] | None = None,
        *,
        timeout: float | None = None,
    ) -> None:
        """Commit `offsets` (default: the positions of everything returned so far)."""
        self._check_open()
        wanted = self._commit_offsets(offsets)
        await self._membership.commit(wanted, timeout)
        for interceptor in self._interceptors:
            hook = getattr(interceptor, "on_commit", None)
            if hook is not None:
                try:
                    hook(wanted)
                except Exception:  # the commit succeeded: Java logs an interceptor's failure
                    log.exception("consumer interceptor %r failed in on_commit", interceptor)

    def commit_async(
        self, offsets: Mapping[TopicPartition, OffsetAndMetadata | int] | None = None
    ) -> PendingCommit:
        """Start a commit (default: the positions of everything returned so far); await the
        result to learn how it went. Its `offsets` are what it commits. Commits are applied in
        call order, `commit_async` and `commit` alike."""
        self._check_open()
        return self._membership.commit_async(self._commit_offsets(offsets))

    def _commit_offsets(
        self, offsets: Mapping[TopicPartition, OffsetAndMetadata | int] | None
    ) -> dict[TopicPartition, OffsetAndMetadata]:
        if offsets is None:
            return self._consumed()
        out = {}
        for tp, value in offsets.items():
            key = TopicPartition(*tp)
            if not self._subscription.is_assigned(key):
                raise IllegalStateError(f"cannot commit {key}: it is not assigned")
            out[key] = value if isinstance(value, OffsetAndMetadata) else OffsetAndMetadata(value)
        return out

    async def committed(
        self, partitions: Iterable[TopicPartition], *, timeout: float | None = None
    ) -> dict[TopicPartition, OffsetAndMetadata | None]:
        self._check_open()
        return await self._membership.committed([TopicPartition(*tp) for tp in partitions], timeout)

    def group_metadata(self) -> ConsumerGroupMetadata:
        return self._membership.group_metadata()

    # -- lag and metrics ------------------------------------------------------------------------

    def lag(self) -> dict[TopicPartition, int]:
        """Records behind the end of each partition, from the last fetch (no network call)."""
        out = {}
        for tp in self._subscription.assigned_partitions():
            lag = self.current_lag(tp)
            if lag is not None:
                out[tp] = lag
        return out

    def current_lag(self, partition: TopicPartition) -> int | None:
        tp = TopicPartition(*partition)
        if not self._subscription.is_assigned(tp):
            return None
        state = self._subscription.state_of(tp)
        end = state.last_stable_offset if self.settings.read_committed else state.high_watermark
        position = self._consumed().get(tp)
        if end is None or position is None:
            return None
        return max(0, end - position.offset)

    def metrics(self) -> dict[str, Any]:
        lags = self.lag()
        return self._metrics.snapshot(lags)

    @property
    def client(self) -> KafkaClient:
        return self._client


__all__ = ["Consumer"]
