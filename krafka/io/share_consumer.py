"""The share consumer (KIP-932), on anyio (asyncio and trio alike).

    async with ShareConsumer(bootstrap_servers="127.0.0.1:9092", group_id="workers",
                             acknowledgement_mode="explicit") as consumer:
        consumer.set_acknowledgement_commit_callback(on_complete)  # (offsets, error)
        await consumer.subscribe(["jobs"])
        for record in await consumer.poll(timeout=1.0):      # list[ShareRecord]
            consumer.acknowledge(record, AcknowledgeType.ACCEPT)
        results = await consumer.commit_sync()               # {TopicPartition: error or None}
        consumer.metrics()["acknowledgements_sent_by_type"]  # {"accept": n, "release": n, ...}

Members of a share group read the same partitions together: the brokers hand each record to
one member at a time (with a delivery count and an acquisition lock), and members settle each
record. Everything is decided by the sans-IO `ShareConsumerMachine`, attached to the client's
core and run by the client's one loop (metadata reaches it from the core); this class is its
application face.

The acknowledgement commit callback (Java's `AcknowledgementCommitCallback.onComplete`) gets
`({partition: offsets}, error or None)` once per partition each time a broker answered
settlements (in a ShareAcknowledge, or carried by a ShareFetch). As in Java it runs in the
application's task, at the start of the next `poll`, `commit_sync` or `commit_async`, and in
`close`; every answer gathered runs it, then the first exception it raised propagates from that
call. It must be a plain function, and may not call the consumer (`IllegalStateError`).
"""

from __future__ import annotations

import inspect
import logging
import uuid
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Any

import anyio

from krafka._codec.compression import DEFAULT_MAX_DECOMPRESSED
from krafka.config.keywords import check_arguments
from krafka.errors import IllegalStateError, InvalidStateError, KrafkaError
from krafka.io.attached import AttachedMachine, Stopped
from krafka.io.client import KafkaClient
from krafka.io.clock import loop_time
from krafka.io.telemetry import ClientTelemetry
from krafka.io.tracing import TraceContext, tracing_for
from krafka.io.wakeup import WakeupTrigger
from krafka.metrics.otel import MessagingMetrics, messaging_metrics
from krafka.metrics.registry import ClientEntry, forget, track
from krafka.sansio.group.events import GroupFailed
from krafka.sansio.share import (
    AcknowledgementMode,
    AcknowledgementsCommitted,
    AcknowledgeType,
    RecordsAvailable,
    ShareConsumerMachine,
    ShareFetchConfig,
    ShareMember,
    ShareRecord,
)
from krafka.sansio.telemetry import ClientKind
from krafka.structs import TopicPartition

log = logging.getLogger(__name__)
#: Called with ({partition: offsets}, error or None) each time a broker answered settlements.
AcknowledgementCommitCallback = Callable[
    [Mapping[TopicPartition, frozenset[int]], KrafkaError | None], Any
]


@dataclass(frozen=True, slots=True)
class ShareConsumerSettings:
    """Every share consumer option; the rest of a constructor's keywords go to `KafkaClient`."""

    group_id: str | None = None
    client_id: str = "krafka-share-consumer"
    acknowledgement_mode: AcknowledgementMode | str = "implicit"
    acknowledgement_commit_callback: AcknowledgementCommitCallback | None = None
    max_poll_records: int = 500
    max_poll_interval: float = 300.0
    fetch_min_bytes: int = 1
    fetch_max_bytes: int = 52_428_800
    fetch_max_wait: float = 0.5
    client_rack: str | None = None
    check_crcs: bool = True
    max_decompressed_size: int = DEFAULT_MAX_DECOMPRESSED
    key_deserializer: Callable[[bytes], Any] | None = None
    value_deserializer: Callable[[bytes], Any] | None = None
    request_timeout: float = 30.0
    default_api_timeout: float = 60.0
    retry_backoff: float = 0.1
    retry_backoff_max: float = 1.0
    metadata_max_age: float = 300.0
    #: OpenTelemetry, as the consumer's (`krafka.io.tracing`).
    tracer_provider: Any = None
    trace_context: TraceContext | str = TraceContext.LINK
    #: An OpenTelemetry MeterProvider for the messaging metrics (None: the global one, if set).
    meter_provider: Any = None

    def __post_init__(self) -> None:
        mode = AcknowledgementMode.parse(self.acknowledgement_mode)
        object.__setattr__(self, "acknowledgement_mode", mode)
        object.__setattr__(self, "trace_context", TraceContext.parse(self.trace_context))
        if not self.group_id:
            raise ValueError("a share consumer needs a group_id")
        if self.max_poll_records <= 0:
            raise ValueError("max_poll_records must be positive")

    @classmethod
    def split(cls, options: Mapping[str, Any]) -> tuple[ShareConsumerSettings, dict[str, Any]]:
        names = set(cls.__dataclass_fields__)
        mine = {k: v for k, v in options.items() if k in names}
        return cls(**mine), {k: v for k, v in options.items() if k not in names}

    def machine_config(self) -> ShareFetchConfig:
        mode = self.acknowledgement_mode
        assert isinstance(mode, AcknowledgementMode)
        return ShareFetchConfig(
            acknowledgement_mode=mode,
            max_poll_records=self.max_poll_records,
            fetch_max_wait=self.fetch_max_wait,
            fetch_min_bytes=self.fetch_min_bytes,
            fetch_max_bytes=self.fetch_max_bytes,
            check_crcs=self.check_crcs,
            max_decompressed_size=self.max_decompressed_size,
            key_deserializer=self.key_deserializer,
            value_deserializer=self.value_deserializer,
            retry_backoff=self.retry_backoff,
            retry_backoff_max=self.retry_backoff_max,
        )


class ShareConsumer:
    """Reads records of a share group. Use `async with`, or `await start()` and `await close()`."""

    def __init__(
        self,
        bootstrap_servers: str | Sequence[str] = "127.0.0.1:9092",
        *,
        client: KafkaClient | None = None,
        **options: Any,
    ) -> None:
        check_arguments("ShareConsumer", "share_consumer", bootstrap_servers, options,
                        ShareConsumerSettings, KafkaClient)  # fmt: skip
        settings, client_options = ShareConsumerSettings.split(options)
        self.settings = settings
        assert settings.group_id is not None
        self._client = client or KafkaClient(
            bootstrap_servers,
            client_id=settings.client_id,
            request_timeout=settings.request_timeout,
            metadata_max_age=settings.metadata_max_age,
            **client_options,
        )
        self._own_client = client is None
        self._otel: MessagingMetrics | None = None
        #: When the last poll that returned records returned (messaging.process.duration).
        self._returned: float | None = None
        member = ShareMember(
            settings.group_id,
            max_poll_interval=settings.max_poll_interval,
            retry_backoff=settings.retry_backoff,
            retry_backoff_max=settings.retry_backoff_max,
            client_rack=settings.client_rack,
        )
        self._machine = ShareConsumerMachine(
            settings.group_id, settings.machine_config(), member, self._client.metadata
        )
        self._driver = AttachedMachine(
            self._client, self._machine, on_event=self._on_event,
            name=f"krafka share consumer {settings.group_id}",
        )  # fmt: skip
        self._telemetry = ClientTelemetry(
            self._client, ClientKind.SHARE_CONSUMER, self.metrics, settings.client_id
        )
        kind = ClientKind.SHARE_CONSUMER
        track(self, ClientEntry(kind, settings.client_id, settings.group_id, _metrics))
        self._data = anyio.Event()
        self._failure: KrafkaError | None = None
        self._wakeups = WakeupTrigger("share consumer")
        self._callback: AcknowledgementCommitCallback | None = None
        self._callbacks: list[AcknowledgementsCommitted] = []
        self._in_callback = False
        self._state = "new"
        #: OpenTelemetry spans (`krafka.io.tracing`), or None when tracing is off.
        self.tracing = tracing_for(
            settings.tracer_provider,
            settings.client_id,
            self._client,
            group=settings.group_id,
            trace_context=settings.trace_context,
        )
        self.set_acknowledgement_commit_callback(settings.acknowledgement_commit_callback)

    @classmethod
    def from_config(cls, config: Mapping[str, Any], **overrides: Any) -> ShareConsumer:
        """A share consumer from Java properties (`group.id`, `share.acknowledgement.mode`,
        `bootstrap.servers`, `security.protocol`, ...)."""
        from krafka.config import keywords_from_config

        return cls(**{**keywords_from_config(config, "share_consumer"), **overrides})

    # -- lifecycle ------------------------------------------------------------------------------

    async def start(self) -> ShareConsumer:
        if self._state == "closed":
            raise InvalidStateError("the share consumer is closed")
        if self._state == "started":
            return self
        self._state = "started"
        if self._own_client:
            await self._client.start(self.settings.default_api_timeout)
        self._otel = messaging_metrics(self.settings.meter_provider, self.settings.group_id)
        self._driver.start()
        await self._telemetry.start()
        return self

    async def __aenter__(self) -> ShareConsumer:
        return await self.start()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    async def close(self, timeout: float = 30.0) -> None:
        """Explicit mode: send the acknowledgements made; both modes: release every other record
        held, close the share sessions and leave the group, within `timeout`. Then the
        acknowledgement commit callback gets the answers (an exception it raises propagates,
        the consumer closed all the same)."""
        if self._in_callback:
            raise _called_from_callback()
        forget(self)
        if self._state != "started":
            self._state = "closed"
            return
        if self.tracing is not None:
            self.tracing.finish_current()
        deadline = anyio.current_time() + timeout
        op = self._machine.close(anyio.current_time())
        self._state = "closed"
        self._data.set()
        with anyio.CancelScope(shield=True), anyio.move_on_after(timeout * 0.8):
            try:
                await self._driver.outcome(op, timeout * 0.8)
            except KrafkaError as exc:
                log.info("krafka share consumer: closing: %s", exc)
        try:
            self._run_callbacks()
        finally:
            await self._telemetry.close(max(0.1, deadline - anyio.current_time()) / 3)
            remaining = max(0.1, deadline - anyio.current_time())
            self._driver.stop()
            if self._own_client:
                await self._client.close(remaining)

    # -- the group ------------------------------------------------------------------------------

    async def subscribe(self, topics: Iterable[str] | str) -> None:
        """Join the share group for these topics (replaces the subscription)."""
        self._check_open()
        wanted = [topics] if isinstance(topics, str) else list(topics)
        self._machine.subscribe(wanted, anyio.current_time())
        await self._refresh_metadata()
        self._driver.wake()

    async def unsubscribe(self) -> None:
        """Release the records held and leave the group; the consumer may subscribe again."""
        self._check_open()
        op = self._machine.unsubscribe(anyio.current_time())
        with anyio.move_on_after(self.settings.default_api_timeout):
            try:
                await self._driver.outcome(op, self.settings.default_api_timeout)
            except KrafkaError as exc:
                log.info("krafka share consumer: leaving: %s", exc)

    def subscription(self) -> set[str]:
        return set(self._machine.member.subscription())

    def assignment(self) -> set[TopicPartition]:
        return set(self._machine.member.assignment())

    @property
    def acquisition_lock_timeout(self) -> float | None:
        """How long the brokers lock a delivered record for this member (seconds), once known."""
        return self._machine.acquisition_lock_timeout

    # -- records --------------------------------------------------------------------------------

    async def poll(self, timeout: float = 1.0, max_records: int | None = None) -> list[ShareRecord]:
        """Records of the share group, waiting up to `timeout` for some ([] when none came).

        Runs the acknowledgement commit callback first. Implicit mode then accepts every record
        the last poll returned; explicit mode raises `IllegalStateError` while one of them is
        unacknowledged. Polling without a subscription raises `IllegalStateError` (Java's
        "Consumer is not subscribed to any topics.")."""
        self._check_open()
        self._run_callbacks()
        self._wakeups.check()
        if self._otel is None:
            records = await self._poll(timeout, max_records)
        else:
            records = await self._measured_poll(self._otel, timeout, max_records)
        return records if self.tracing is None else self.tracing.handed(records)

    async def _measured_poll(
        self, otel: MessagingMetrics, timeout: float, max_records: int | None
    ) -> list[ShareRecord]:
        """`poll` recording the messaging metrics (as `Consumer`'s)."""
        called = anyio.current_time()
        if self._returned is not None:
            otel.processed(called - self._returned)
            self._returned = None
        records = await self._poll(timeout, max_records)
        if records:
            self._returned = returned = anyio.current_time()
            otel.polled(returned - called)
            otel.consumed(Counter((r.topic, r.partition) for r in records).items())
        return records

    async def _poll(self, timeout: float, max_records: int | None) -> list[ShareRecord]:
        deadline = anyio.current_time() + timeout
        while True:
            if self._driver.error is not None:  # the machine raised: every later poll says so
                raise self._driver.error
            if self._failure is not None:
                failure, self._failure = self._failure, None
                raise failure
            self._data = anyio.Event()
            records = self._machine.poll(anyio.current_time(), max_records)
            self._driver.wake()
            if records or self._state != "started":
                if records and self.tracing is not None:
                    self.tracing.poll(records)
                return records
            remaining = deadline - anyio.current_time()
            if remaining <= 0:
                return []
            with anyio.move_on_after(remaining):
                await self._wakeups.interruptible(self._data.wait)

    def acknowledge(
        self,
        record: ShareRecord | str,
        partition: int | AcknowledgeType | str | None = None,
        offset: int | None = None,
        type: AcknowledgeType | str = AcknowledgeType.ACCEPT,
    ) -> None:
        """Settle one record of the last poll (explicit mode): `acknowledge(record, type)` or
        `acknowledge(topic, partition, offset, type)`. Sent with the next poll or commit."""
        self._check_open()
        if isinstance(record, ShareRecord):
            kind = type if partition is None else partition  # acknowledge(record, type)
            tp, at = TopicPartition(record.topic, record.partition), record.offset
        else:
            if not isinstance(partition, int) or offset is None:
                raise TypeError("acknowledge(topic, partition, offset, type) needs all four")
            kind, tp, at = type, TopicPartition(record, int(partition)), offset
        self._machine.acknowledge(tp, at, AcknowledgeType.parse(kind))

    async def commit_sync(
        self, timeout: float | None = None
    ) -> dict[TopicPartition, KrafkaError | None]:
        """Send the settlements made so far (implicit mode: accept every delivered record first)
        and wait for the brokers: {partition: None, or the error that refused its settlements}.
        The callback runs first, for answers that came before; this commit's answers reach it
        in the next call."""
        self._check_open()
        self._run_callbacks()
        started = anyio.current_time()
        op = self._machine.commit(started)
        wait = self.settings.default_api_timeout if timeout is None else timeout
        outcome = self._wakeups.interruptible(lambda: self._driver.outcome(op, wait))
        result: dict[TopicPartition, KrafkaError | None]
        if self.tracing is None:
            result = await outcome
        else:
            span = self.tracing.settle_span("ack")
            result = await self.tracing.acknowledged(span, outcome)
        if self._otel is not None:
            error = next((e for e in result.values() if e is not None), None)
            self._otel.operation("acknowledge", anyio.current_time() - started, error)
        return result

    def wakeup(self) -> None:
        """Make the blocked `poll` or `commit_sync` raise `WakeupError`, or the next one if
        none is blocked: once per wakeup (Java's `KafkaShareConsumer.wakeup()`; call it from
        another task, or a sync share consumer's from any thread)."""
        self._wakeups.wakeup()

    def commit_async(self) -> None:
        """Send the settlements made so far without waiting (the callback runs first, for
        answers that came before); the answers go to the acknowledgement commit callback."""
        self._check_open()
        self._run_callbacks()
        self._machine.commit(anyio.current_time())
        self._driver.wake()

    def set_acknowledgement_commit_callback(
        self, callback: AcknowledgementCommitCallback | None
    ) -> None:
        """Java's `setAcknowledgementCommitCallback`: `callback(offsets, error)` with
        {partition: acknowledged offsets} and None or the error that refused them, for every
        answer from now on (see the module's docstring for when it runs). None removes it and
        drops the answers not yet reported. The constructor's `acknowledgement_commit_callback`
        sets it too."""
        if self._in_callback:
            raise _called_from_callback()
        if self._state == "closed":
            raise InvalidStateError("the share consumer is closed")
        if callback is not None and inspect.iscoroutinefunction(callback):
            raise TypeError("the acknowledgement commit callback must be a plain function")
        self._callback = callback
        if callback is None:
            self._callbacks.clear()

    def metrics(self) -> dict[str, Any]:
        """Totals since the start (Java's share consumer metrics, seconds here):
        `records_consumed` (returned by polls), `records_fetched` (acquired), `bytes_consumed`
        (record batch bytes fetched), `polls`, `time_between_poll_avg` / `_max`,
        `last_poll_seconds_ago`, `fetches`, `fetch_latency_avg` / `_max`,
        `fetch_throttle_time_avg` / `_max`, `acknowledgements_sent` and
        `acknowledgements_sent_by_type` ({"accept", "release", "reject", "renew", "gap": n};
        gap: acquired offsets without a record), `acknowledgement_errors` (settlements refused),
        `acknowledge_requests`, `acknowledge_latency_avg` / `_max` (ShareAcknowledge),
        `redeliveries` (records acquired again, delivery count > 1), `lock_renewals` (renew
        acknowledgements); and Java's names (`records-consumed-rate`,
        `acknowledgements-send-rate`, ...; see `krafka.sansio.share.metrics`). Callable from
        any thread once started."""
        now = loop_time()
        metrics = self._machine.metrics
        values = metrics.snapshot(metrics.last_poll or 0.0 if now is None else now)
        values.update(self._client.connection_metrics().as_dict())
        return values

    def update_seed_brokers(self, servers: str | Sequence[str]) -> None:
        """Replace the bootstrap servers (`"h1:9092,h2:9092"` or a list): the next
        rebootstrap (KIP-899: every known broker unreachable for `rebootstrap_trigger`, or
        REBOOTSTRAP_REQUIRED) starts from them."""
        self._client.update_seed_brokers(servers)

    async def client_instance_id(self, timeout: float) -> uuid.UUID | None:
        """KIP-714: the id the cluster gave this share consumer's telemetry (Java's
        `clientInstanceId`), waiting up to `timeout` seconds; None when none came.
        Raises `IllegalStateError` when built with `enable_metrics_push=False`."""
        return await self._telemetry.client_instance_id(timeout)

    async def __aiter__(self) -> Any:
        """Records one by one (with tracing on, each traced one in its `process` span: the
        poll's list does it, `krafka.io.tracing.TracedList`)."""
        try:
            while self._state == "started":
                for record in await self.poll(1.0):
                    yield record
        finally:
            if self.tracing is not None:
                self.tracing.finish_current()

    async def __anext__(self) -> ShareRecord:
        """The next record (`anext(consumer)`): a poll of one record, waiting for one, so
        implicit mode accepts it at the next call as it would the last poll's. With tracing
        on, a traced record's `process` span is current until the next call (as the
        consumer's `recv`)."""
        tracing = self.tracing
        if tracing is not None:
            tracing.finish_current()
        while self._state == "started":
            records = await self.poll(1.0, 1)
            if records:
                record = records[0]
                if tracing is not None:
                    tracing.received(record)
                return record
        raise StopAsyncIteration

    # -- the machine's events -------------------------------------------------------------------

    def _on_event(self, event: Any) -> None:
        if isinstance(event, RecordsAvailable):
            self._data.set()
        elif isinstance(event, AcknowledgementsCommitted):
            if self._callback is not None:
                self._callbacks.append(event)
            if event.error is not None:
                log.info("krafka share consumer: acknowledgements refused: %s", event.error)
        elif isinstance(event, GroupFailed):
            self._failure = event.error
            self._data.set()
        elif isinstance(event, Stopped):
            self._data.set()

    def _run_callbacks(self) -> None:
        """The commit callback runs in the application's task (Java: on the polling thread),
        for every answer gathered; then the first exception it raised propagates."""
        callback = self._callback
        pending, self._callbacks = self._callbacks, []
        if callback is None or not pending:
            return
        first: Exception | None = None
        for event in pending:
            self._in_callback = True
            try:
                result = callback(event.offsets, event.error)
                if inspect.isawaitable(result):
                    _discard(result)
                    raise TypeError("the acknowledgement commit callback must not be async")
            except Exception as exc:
                log.debug("krafka share consumer: the acknowledgement commit callback raised")
                first = first or exc
            finally:
                self._in_callback = False
        if first is not None:
            raise first

    async def _refresh_metadata(self) -> None:
        topics = sorted(
            self._machine.member.subscription() | _topics(self._machine.member.assignment())
        )
        if not topics:
            return
        await self._client.refresh_metadata(topics)
        self._machine.metadata_updated(anyio.current_time())
        self._driver.wake()

    def _check_open(self) -> None:
        if self._in_callback:
            raise _called_from_callback()
        if self._state != "started":
            raise InvalidStateError("the share consumer is not started (use async with) or closed")


def _topics(partitions: Iterable[TopicPartition]) -> set[str]:
    return {tp.topic for tp in partitions}


def _called_from_callback() -> IllegalStateError:
    return IllegalStateError(
        "the share consumer's methods are not accessible from the acknowledgement commit callback"
    )


def _discard(awaitable: Any) -> None:
    close = getattr(awaitable, "close", None)
    if close is not None:
        close()


def _metrics(consumer: ShareConsumer) -> Mapping[str, Any]:
    return consumer.metrics()


__all__ = ["AcknowledgementCommitCallback", "ShareConsumer", "ShareConsumerSettings"]
