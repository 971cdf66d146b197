"""The asynchronous producer, on anyio (asyncio and trio alike).

    async with Producer(bootstrap_servers="127.0.0.1:9092", linger=0.005) as producer:
        meta = await producer.send_and_wait("orders", b"value", key=b"k")
        pending = await producer.send("orders", b"value2")   # enqueued; returns at once
        meta2 = await pending                                 # RecordMetadata, or raises

A thin facade over the sans-IO `ProducerEngine` (accumulator, sender, idempotence,
transactions), attached to the client's core and run by the client's one loop
(`krafka.io.attached`): `send` appends to the engine (no I/O, no per-record future), the client
sends what the engine asks for (refreshing metadata when it asks) and sleeps until the core's
deadline, and the engine's events come back here: finished batches wake whoever awaits their
records (`producer_handle`), a fatal error is raised from the application's next call. One
clock, `anyio.current_time()`; record timestamps come from the wall clock, read here.
Idempotence is on by default (off automatically when `acks` is not "all", unless asked for
explicitly); `transactional_id` enables transactions. The producer has no task of its own, so
`start` and `close` may be called from any task.

`engine`, `direct` and `driver` are the documented ways in for code that holds this producer's
event loop parked: while `direct`, it may append to `engine` as `send` does (with the loop's
clock), then call `driver.wake()` on the loop if `engine.due` turned on. `krafka.sync.Producer`
appends records from its callers' threads that way.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import asdict, replace
from types import TracebackType
from typing import Any, Final

import anyio
import anyio.lowlevel

from krafka._twins import implementations, selected
from krafka.codec import Compression
from krafka.config.keywords import check_arguments
from krafka.errors import InvalidStateError, KafkaTimeoutError, KrafkaError
from krafka.io.attached import AttachedMachine, OutcomeTimeout, Stopped
from krafka.io.client import KafkaClient
from krafka.io.clock import loop_time
from krafka.io.producer_append import Appender
from krafka.io.producer_bulk import BulkDelivery
from krafka.io.producer_handle import (
    DeliveryHandle,
    Hooks,
    ProducerInterceptor,
    ProducerRecord,
    wake_waiters,
)
from krafka.io.producer_settings import keywords, producer_config
from krafka.io.producer_txn import Transactions
from krafka.io.telemetry import ClientTelemetry
from krafka.io.tracing import Tracing, tracing_for
from krafka.io.tracing_send import context_send
from krafka.metrics.otel import MessagingMetrics, messaging_metrics
from krafka.metrics.registry import ClientEntry, forget, track
from krafka.sansio.actions import SendRequest
from krafka.sansio.partitioner import Partitioner, PartitionFunction, make_partitioner
from krafka.sansio.producer.batch import ProducerBatch
from krafka.sansio.producer.engine import SEALED_RUN, Due, ProducerEngine
from krafka.sansio.producer.events import BatchDone, ProducerFatal, TopicsInUse
from krafka.sansio.producer.metrics import ProducerMetricsSnapshot
from krafka.sansio.producer.record import (
    Header,
    RecordMetadata,
    check_record,
    check_timestamp,
    locate,
    metadata_of,
)
from krafka.sansio.telemetry import ClientKind
from krafka.sansio.topic_name import check_topic
from krafka.structs import ConsumerGroupMetadata


def _telemetry_metrics(snapshot: ProducerMetricsSnapshot) -> Mapping[str, Any]:
    return {**asdict(snapshot), **snapshot.connections.as_dict()}


def _java_metrics(producer: Producer) -> Mapping[str, Any]:
    snapshot = producer.metrics()
    return {**snapshot.java(), **snapshot.connections.as_dict()}


__all__ = ["BulkDelivery", "DeliveryHandle", "Producer", "ProducerRecord", "RecordMetadata"]

log = logging.getLogger(__name__)
#: After sealing a batch, give the client's loop, the connection's writer and its reader a turn
#: each, so the batch is on the wire while the caller fills the next one.
_TURNS_PER_SEAL: Final = 3
#: `Due.SEALED` as a plain int: `send` compares with it per due record (looking an enum member
#: up on its class costs about 0.1 µs on CPython 3.11, as much as the rest of an append).
_SEALED: Final = int(Due.SEALED)
#: The compiled `send` (`_send.pyx`: `Producer.send` as a Cython coroutine), or None.
_DIRECT_SEND: Any = selected(implementations(None, "krafka.io._send", "direct_send"))


class _Done:
    """An already-finished awaitable: lets `begin_transaction()` be awaited or not."""

    __slots__ = ()

    def __await__(self) -> Any:
        return iter(())


class Producer:
    """Sends records to Kafka. Use `async with`, or `await start()` and `await close()`."""

    def __init__(
        self,
        bootstrap_servers: str | Sequence[str] = "127.0.0.1:9092",
        *,
        client_id: str = "krafka-producer",
        acks: int | str = "all",
        compression: str | Compression | None = "none",
        compression_level: int | None = None,
        linger: float = 0.005,
        batch_size: int = 1_000_000,
        buffer_memory: int = 32 * 1024 * 1024,
        max_request_size: int = 1_048_576,
        max_in_flight_requests_per_connection: int = 5,
        retries: int = 2_147_483_647,
        retry_backoff: float = 0.1,
        retry_backoff_max: float = 1.0,
        delivery_timeout: float = 120.0,
        request_timeout: float = 30.0,
        max_block: float = 60.0,
        enable_idempotence: bool | None = None,
        transactional_id: str | None = None,
        transaction_timeout: float = 60.0,
        partitioner: str | Partitioner | PartitionFunction | None = None,
        interceptors: Sequence[ProducerInterceptor] = (),
        metadata_max_age: float = 300.0,
        connections_per_broker: int = 1,
        tracer_provider: Any = None,
        trace_records: bool = False,
        meter_provider: Any = None,
        client: KafkaClient | None = None,
        **client_options: Any,
    ) -> None:
        check_arguments(
            "Producer", "producer", bootstrap_servers, client_options, Producer, KafkaClient
        )
        self.config = producer_config(
            acks=acks,
            compression=compression,
            compression_level=compression_level,
            linger=linger,
            batch_size=batch_size,
            buffer_memory=buffer_memory,
            max_request_size=max_request_size,
            max_in_flight_requests_per_connection=max_in_flight_requests_per_connection,
            retries=retries,
            retry_backoff=retry_backoff,
            retry_backoff_max=retry_backoff_max,
            delivery_timeout=delivery_timeout,
            request_timeout=request_timeout,
            enable_idempotence=enable_idempotence,
            transactional_id=transactional_id,
            transaction_timeout=transaction_timeout,
        )
        self.max_block = max_block
        self._client = client or KafkaClient(
            bootstrap_servers,
            client_id=client_id,
            max_in_flight=self.config.max_in_flight_requests_per_connection,
            request_timeout=self.config.request_timeout,
            metadata_max_age=metadata_max_age,
            connections_per_broker=connections_per_broker,
            **client_options,
        )
        self._own_client = client is None
        self._telemetry = ClientTelemetry(
            self._client, ClientKind.PRODUCER, lambda: _telemetry_metrics(self.metrics()), client_id
        )
        self._meter_provider = meter_provider
        self._otel: MessagingMetrics | None = None
        self._hooks = Hooks(interceptors)
        self._engine = ProducerEngine(
            self.config,
            self._client.metadata,
            partitioner=make_partitioner(partitioner),
            handle_type=DeliveryHandle,
        )
        self._append_open = self._engine.append_open
        self._driver = AttachedMachine(
            self._client, self._engine, on_event=self._on_event, name="krafka producer"
        )
        self._wake = self._client.wake
        track(self, ClientEntry(ClientKind.PRODUCER, client_id, None, _java_metrics))
        self._txns = (
            Transactions(self._engine, self._driver, max_block)
            if self._engine.transactions is not None
            else None
        )
        self._progress = anyio.Event()
        #: Why the producer stopped (fenced, its driver crashed, closed): raised by later calls.
        self._error: KrafkaError | None = None
        self._appender = Appender(
            self._client,
            self._engine,
            self._hooks,
            max_block,
            lambda: self._progress,
            lambda: self._error,
        )
        self._started = self._closed = False
        #: OpenTelemetry spans (`krafka.io.tracing`), or None when tracing is off.
        self.tracing = tracing_for(
            tracer_provider, client_id, self._client, trace_records=trace_records
        )
        self._traced: dict[ProducerBatch, list[tuple[Any, Any]]] = {}
        if self.tracing is not None:
            self._trace_sends(self.tracing)
        elif _DIRECT_SEND is not None:
            self.send = _DIRECT_SEND(self)  # type: ignore[method-assign]
        #: True while records may be appended straight to `engine` (`send`'s fast path, and
        #: `krafka.sync`'s): started, not closed or stopped, no interceptors, no transaction.
        self.direct = False

    @classmethod
    def from_config(cls, config: Mapping[str, Any], **overrides: Any) -> Producer:
        """A producer from Java/librdkafka properties (`{"bootstrap.servers": ..., ...}`):
        producer and client options (`security.protocol`, `ssl.*`, `sasl.*`, ...); `.ms`
        values become seconds. Keyword `overrides` win. See `krafka.config`."""
        return cls(**keywords(config, overrides))

    # -- lifecycle ------------------------------------------------------------------------------

    async def __aenter__(self) -> Producer:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    async def start(self) -> None:
        """Connect, fetch metadata, get a producer id (and initialise transactions)."""
        if self._closed:
            raise InvalidStateError("producer is closed")
        if self._started:
            return
        self._started = True
        self._otel = messaging_metrics(self._meter_provider)
        try:
            if self._own_client:
                await self._client.start(self.max_block or None)  # 0: sends never block
            self._driver.start()
            await self._telemetry.start()
            if self._txns is not None:
                await self._txns.start()
        except BaseException:
            with anyio.CancelScope(shield=True):
                await self.close(0)
            raise
        self.direct = (
            not self._hooks.interceptors
            and self.config.transactional_id is None
            and self._error is None
        )

    async def close(self, timeout: float | None = None) -> None:
        """Refuse new records, deliver those queued (waiting at most `timeout` seconds), then
        disconnect.

        Records still undelivered when the timeout expires fail with `KafkaTimeoutError`. With
        a timeout, `close` returns within about that long even when brokers are gone. Callable
        from any task; a cancelled caller skips the delivery, not the disconnect.
        """
        if self._closed:
            return
        self._closed, self.direct = True, False
        forget(self)
        deadline = None if timeout is None else anyio.current_time() + timeout
        try:
            if self._driver.running and self._error is None:
                with anyio.move_on_after(timeout):
                    await self.flush()
        except KrafkaError as exc:
            log.warning("producer closing without delivering everything: %s", exc)
        finally:
            self._stop(KafkaTimeoutError("producer closed before delivery"))
            await self._telemetry.close(_left(deadline, 1.0))
            if self._own_client:
                await self._client.close(_left(deadline, 5.0))

    # -- sending --------------------------------------------------------------------------------

    async def send(
        self,
        topic: str,
        value: bytes | None = None,
        key: bytes | None = None,
        *,
        headers: Sequence[Header] | None = None,
        partition: int | None = None,
        timestamp: int | None = None,
    ) -> DeliveryHandle:
        """Enqueue one record; returns its handle (`await` it for the `RecordMetadata`).

        Waits only when the buffer is full (`buffer_memory`) or the topic's metadata is not
        known yet, at most `max_block` seconds.
        """
        if not self.direct or headers:
            return await self._send_checked(topic, value, key, headers, partition, timestamp)
        if timestamp is not None:
            check_timestamp(timestamp)
        try:
            handle = self._append_open(topic, partition, timestamp, key, value)
        except (TypeError, ValueError):
            check_record(key, value, timestamp)
            raise
        if handle is None or type(handle) is int:
            chosen = partition if handle is None else handle
            if chosen is not None and self._engine.seal_open(topic, chosen):
                await self._attend()  # the full batch goes before the record opens the next
            return await self._send_checked(topic, value, key, None, chosen, timestamp)
        due = self._engine.due
        if due:  # most records: nothing due (an int's truth, no enum member looked up)
            if due == _SEALED:
                await self._attend()
            else:  # a batch opened: the loop takes its linger (once due, a comparison)
                self._wake()
        return handle  # type: ignore[return-value]

    async def send_many(
        self,
        topic: str,
        values: Sequence[bytes | None],
        keys: Sequence[bytes | None] | None = None,
        *,
        partition: int | Sequence[int | None] | None = None,
        headers: Sequence[Sequence[Header] | None] | None = None,
        timestamps: Sequence[int | None] | None = None,
    ) -> BulkDelivery:
        """Enqueue many records of one topic, in order: `values[i]` with `keys[i]`,
        `headers[i]`, `timestamps[i]` (each column optional), to `partition` (one for all, one
        per record, or None: the partitioner's choice, as `send`). Returns one `BulkDelivery`:
        `await` it for the number of records once all are delivered; it raises the first
        failure.

        Each record is appended as `send` would (same partitioner, idempotence, batching,
        waits for metadata and buffer room, at most `max_block` each), with no handle per
        record. What `send` refuses at once (a closed producer, a bad topic, key, value or
        timestamp, a record over `max_request_size` or `buffer_memory`, a partition out of
        range) raises here before any record is appended; a `max_block` timeout raises with
        the records before it appended. With tracing on, every record carries the caller's
        trace context, as with `send` (then they go one by one).
        """
        if self._closed or not self._started:
            raise InvalidStateError("producer is closed" if self._closed else "not started")
        check_topic(topic)
        columns = _columns(values, keys, partition, headers, timestamps)
        values, keys, parts, headers, timestamps = columns
        if self.tracing is not None:
            headers = self._carried(headers, len(values))
        self._engine.check_many(keys, values, timestamps)
        if parts is not None:
            await self._check_partitions(topic, parts)
        batches: dict[ProducerBatch, None] = {}
        engine, start, count = self._engine, 0, len(values)
        while start < count:
            chosen = parts if parts is None or isinstance(parts, int) else parts[start]
            if self.direct and headers is None:
                start, found = engine.append_many(
                    topic, parts, keys, values, timestamps, start, batches
                )
                if engine.due:
                    await self._attend()
                if start >= count or found == SEALED_RUN:
                    continue
                chosen = found
                if chosen is not None and engine.seal_open(topic, chosen):
                    await self._attend()  # as `send`: the full batch goes first
            handle = await self._send_checked(
                topic,
                values[start],
                None if keys is None else keys[start],
                None if headers is None else headers[start],
                chosen,
                None if timestamps is None else timestamps[start],
            )
            batches[handle.batch] = None
            start += 1
        return BulkDelivery(list(batches), count)

    def _carried(
        self, headers: list[Sequence[Header] | None] | None, count: int
    ) -> list[Sequence[Header] | None] | None:
        """`send_many`'s headers with the caller's trace context, if it has one."""
        tracing = self.tracing
        assert tracing is not None
        context = tracing.current_context()
        if context is tracing.empty_context:
            return headers
        return [tracing.with_context(h, context) for h in headers or [None] * count]

    async def _check_partitions(self, topic: str, parts: int | list[int | None]) -> None:
        """Every partition given exists (waiting for the topic's metadata, as `send` does)."""
        count = await self._appender.partition_count(topic)
        for wanted in [parts] if isinstance(parts, int) else parts:
            if wanted is not None and not 0 <= wanted < count:
                raise ValueError(
                    f"partition {wanted} of topic {topic!r} does not exist: it has {count} "
                    f"partitions (0-{count - 1})"
                )

    #: `send` without a span of its own, for a caller that made one (`krafka.sync.Producer`).
    _untraced_send = send

    def _trace_sends(self, tracing: Tracing) -> None:
        """Tracing on: `send` carries the caller's trace context (default) or makes a span per
        record (`trace_records=True`); see `krafka.io.tracing`."""
        if tracing.trace_records:
            self.send = self._traced_send  # type: ignore[method-assign]
            return
        self.send = context_send(self, tracing)  # type: ignore[method-assign,assignment]
        self._untraced_send = self._noting_send  # type: ignore[method-assign]

    async def _carrying_send(
        self,
        context: Any,
        topic: str,
        value: bytes | None,
        key: bytes | None,
        headers: Sequence[Header] | None,
        partition: int | None,
        timestamp: int | None,
    ) -> DeliveryHandle:
        """`send` of a record sent in `context` or with `headers` (tracing on, default mode):
        it carries the trace context of the sampled span current there, if any, and its
        batch's `send` span links to it."""
        tracing = self.tracing
        assert tracing is not None
        carried = tracing.with_context(headers, context)
        found = tracing.last_span_context
        sent = await self._send_checked(topic, value, key, carried, partition, timestamp)
        if carried is not headers:
            tracing.link(sent.batch, found)
        elif headers:
            tracing.created(sent.batch, headers)
        return sent

    async def _noting_send(
        self,
        topic: str,
        value: bytes | None = None,
        key: bytes | None = None,
        *,
        headers: Sequence[Header] | None = None,
        partition: int | None = None,
        timestamp: int | None = None,
    ) -> DeliveryHandle:
        """`send` of a record with headers: their trace context links its batch's span."""
        handle = await self._send_checked(topic, value, key, headers, partition, timestamp)
        if headers and self.tracing is not None:
            self.tracing.created(handle.batch, headers)
        return handle

    async def _traced_send(
        self,
        topic: str,
        value: bytes | None = None,
        key: bytes | None = None,
        *,
        headers: Sequence[Header] | None = None,
        partition: int | None = None,
        timestamp: int | None = None,
    ) -> DeliveryHandle:
        """`send` with tracing on: in a `send {topic}` span whose context the record's headers
        carry, ended when the record is acknowledged."""
        assert self.tracing is not None
        span, headers = self.tracing.start_send(topic, partition, key, value, headers)
        try:
            handle = await self._send_checked(topic, value, key, headers, partition, timestamp)
        except BaseException as exc:
            self.tracing.end_send(span, topic, partition, None, exc)
            raise
        self._traced.setdefault(handle.batch, []).append((handle, span))
        return handle

    def _end_spans(self, batch: ProducerBatch) -> None:
        """End `batch`'s `send` span, or (`trace_records`) its records' (or move them to its
        halves)."""
        tracing = self.tracing
        assert tracing is not None
        if not tracing.trace_records:
            tracing.batch_done(batch)
            return
        for handle, span in self._traced.pop(batch, ()):
            found, index = locate(handle.batch, handle.index)
            if not found.done:
                self._traced.setdefault(found, []).append((handle, span))
            elif found.error is not None:
                tracing.end_send(span, found.topic, found.partition, None, found.error)
            else:
                meta = metadata_of(found, index)
                tracing.end_send(span, found.topic, meta.partition, meta.offset, None)

    async def _send_checked(
        self,
        topic: str,
        value: bytes | None,
        key: bytes | None,
        headers: Sequence[Header] | None,
        partition: int | None,
        timestamp: int | None,
    ) -> DeliveryHandle:
        if self._closed or not self._started:
            raise InvalidStateError("producer is closed" if self._closed else "not started")
        if self._error is not None:
            raise self._error
        try:
            handle = await self._appender.append(topic, value, key, headers, partition, timestamp)
        finally:
            if self._engine.due:  # also when refused: the engine may want metadata
                self._driver.wake()
        if self._engine.due:
            await self._attend()
        return handle

    async def _attend(self) -> None:
        """The engine has news (a batch opened or sealed): have the driver look; a sealed
        batch gets to the wire before the caller fills the next one, and an opened one has
        its linger taken by the loop first (so `send` does not wake it again per record)."""
        turns = _TURNS_PER_SEAL if self._engine.due == _SEALED else 1
        self._driver.wake()
        for _ in range(turns):
            await anyio.lowlevel.checkpoint()

    @property
    def engine(self) -> ProducerEngine:
        """The sans-IO engine underneath (see the module doc: for code holding the loop)."""
        return self._engine

    @property
    def driver(self) -> AttachedMachine:
        """`engine` as run by the client's loop (`driver.wake()` after appending to it
        directly)."""
        return self._driver

    async def send_and_wait(
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
        handle = await self.send(
            topic, value, key, headers=headers, partition=partition, timestamp=timestamp
        )
        return await handle

    async def flush(self, timeout: float | None = None) -> None:
        """Send everything queued now (ignoring linger) and wait until it is acknowledged.

        Waits for the records sent before the call, not for those other tasks send meanwhile.
        """
        if not self._started or not self._driver.running:
            return
        op = self._engine.flush(anyio.current_time())
        try:
            await self._driver.outcome(op, timeout)
        except OutcomeTimeout:
            self._engine.abandon(op)
            raise KafkaTimeoutError(f"flush did not finish within {timeout}s") from None

    async def partitions_for(self, topic: str) -> list[int]:
        """The partition ids of `topic` (fetching metadata if needed)."""
        return list(range(await self._appender.partition_count(topic)))

    async def client_instance_id(self, timeout: float) -> uuid.UUID | None:
        """KIP-714: the id the cluster gave this producer's telemetry (Java's
        `clientInstanceId`), waiting up to `timeout` seconds; None when none came.
        Raises `IllegalStateError` when built with `enable_metrics_push=False`."""
        return await self._telemetry.client_instance_id(timeout)

    def update_seed_brokers(self, servers: str | Sequence[str]) -> None:
        """Replace the bootstrap servers (`"h1:9092,h2:9092"` or a list): the next
        rebootstrap (KIP-899: every known broker unreachable for `rebootstrap_trigger`, or
        REBOOTSTRAP_REQUIRED) starts from them."""
        self._client.update_seed_brokers(servers)

    def metrics(self) -> ProducerMetricsSnapshot:
        """Records and bytes sent, batch sizes, retries, errors, request latency, rates and the
        buffer; `metrics()["record-send-rate"]` answers Java's names (`.java()`: all). Callable
        from any thread."""
        snapshot = self._engine.metrics_snapshot(loop_time())
        return replace(snapshot, connections=self._client.connection_metrics())

    # -- transactions ---------------------------------------------------------------------------

    async def init_transactions(self) -> None:
        """Get the producer id, fencing older producers of the transactional id (`start` does
        this)."""
        await self._transactions().initialize()

    def begin_transaction(self) -> _Done:
        """Start a transaction (local; the coordinator hears of it with the first record)."""
        self._transactions().begin()
        return _Done()

    async def send_offsets_to_transaction(
        self, offsets: Mapping[Any, Any], group_metadata: ConsumerGroupMetadata | str
    ) -> None:
        """Commit consumer offsets as part of the transaction (AddOffsetsToTxn, TxnOffsetCommit).

        `offsets`: `{TopicPartition: OffsetAndMetadata or offset}`, the offsets of the *next*
        records to consume; `group_metadata`: the consumer's `group_metadata()` (so the broker
        fences a zombie of an older generation) or a bare group id.
        """
        await self._transactions().send_offsets(offsets, group_metadata)

    async def commit_transaction(self) -> None:
        """Commit: no `send` is accepted from now on; once the transaction's records are
        delivered, EndTxn(commit). Raises if the transaction can only be aborted.

        Waits at most `max_block`; KafkaTimeoutError then means the outcome is unknown (the
        coordinator may still commit): call `commit_transaction()` again to wait for it. Until
        its outcome is known, every other transactional call raises InvalidStateError (as in
        Java: an abort could not undo a commit already made). The same holds for
        `abort_transaction()` and `init_transactions()`."""
        await self._transactions().commit()

    async def abort_transaction(self) -> None:
        """Drop unsent records of the transaction, wait for those in flight, abort it (EndTxn)."""
        await self._transactions().abort()

    def _transactions(self) -> Transactions:
        if self.config.transactional_id is None or self._txns is None:
            raise InvalidStateError("not a transactional producer: set transactional_id")
        if self._closed or not self._started:
            raise InvalidStateError("producer is closed" if self._closed else "not started")
        if self._error is not None:
            raise self._error  # fenced: transactions ended for good
        return self._txns

    # -- the engine's events --------------------------------------------------------------------

    def _on_event(self, event: Any) -> None:
        """What the engine tells the producer (or `Stopped`), in the client's loop task."""
        if type(event) is BatchDone:
            batch = event.batch
            wake_waiters(batch)
            if self.tracing is not None:
                self._end_spans(batch)
            if batch.done and self._hooks.interceptors:
                self._hooks.acknowledge(batch)
            if self._otel is not None and batch.done:
                self._batch_metrics(self._otel, batch)
            self._notify_progress()
        elif isinstance(event, TopicsInUse):
            self._client.touch_topics(sorted(event.topics))
        elif isinstance(event, ProducerFatal):
            log.error("producer stopped: %s", event.error)
            self._failed(event.error)
        elif isinstance(event, Stopped):
            self._failed(event.error)
            self._stop(event.error, driver_alive=False)

    def _batch_metrics(self, otel: MessagingMetrics, batch: Any) -> None:
        seconds = anyio.current_time() - batch.created
        otel.batch_done(batch.topic, batch.partition, batch.count, seconds, batch.error)

    def _notify_progress(self) -> None:
        """Wake every task waiting for a batch to finish (buffer back-pressure)."""
        event, self._progress = self._progress, anyio.Event()
        event.set()

    def _failed(self, error: KrafkaError) -> None:
        """The producer can no longer send: later calls raise `error`."""
        if self._error is None:
            self._error = error
        self.direct = False
        self._notify_progress()

    def _stop(self, error: KrafkaError, *, driver_alive: bool = True) -> None:
        """Stop the engine: everything queued or in flight fails with `error`, and its
        waiters learn it now (the client's loop delivers the engine's last events)."""
        self._failed(error)
        try:
            self._engine.close(error)
            if not (driver_alive and self._driver.running and self._driver.step()):
                for action in self._engine.next_actions(anyio.current_time()):
                    if not isinstance(action, SendRequest):
                        self._on_event(action)
        except Exception:  # a broken engine (the core dropped it): nothing more to save
            log.exception("producer engine failed while closing")
        finally:
            self._driver.stop()


Columns = tuple[
    list[bytes | None],
    list[bytes | None] | None,
    int | list[int | None] | None,
    list[Sequence[Header] | None] | None,
    list[int | None] | None,
]


def _columns(
    values: Sequence[bytes | None],
    keys: Sequence[bytes | None] | None,
    partition: int | Sequence[int | None] | None,
    headers: Sequence[Sequence[Header] | None] | None,
    timestamps: Sequence[int | None] | None,
) -> Columns:
    """`send_many`'s columns as lists of one length (`headers` None when no record has any)."""
    out = list(values)
    count = len(out)

    def column(name: str, given: Sequence[Any] | None) -> list[Any] | None:
        if given is None:
            return None
        found = list(given)  # a copy: the caller may change theirs while records wait
        if len(found) != count:
            raise ValueError(f"send_many: {count} values but {len(found)} {name}")
        return found

    parts = (
        partition
        if partition is None or isinstance(partition, int)
        else column("partitions", partition)
    )
    if isinstance(parts, bool):
        raise TypeError("send_many(partition=...): an int, a sequence of them, or None")
    listed = column("headers", headers)
    if listed is not None and not any(listed):
        listed = None
    return out, column("keys", keys), parts, listed, column("timestamps", timestamps)


def _left(deadline: float | None, default: float) -> float:
    """Seconds to `deadline` (none left: 0), or `default` without one."""
    return default if deadline is None else max(0.0, deadline - anyio.current_time())
