"""The asynchronous producer, on anyio (asyncio and trio alike).

    async with Producer(bootstrap_servers="127.0.0.1:9092", linger=0.005) as producer:
        meta = await producer.send_and_wait("orders", b"value", key=b"k")
        pending = await producer.send("orders", b"value2")   # enqueued; returns at once
        meta2 = await pending                                 # RecordMetadata, or raises

`send` only appends to the accumulator (no I/O, no per-record future); one background task
drains sealed or lingered batches into Produce requests (`krafka.sansio.producer.Sender`
decides what goes where) and one task per request waits for its answer. Idempotence is on by
default (off automatically when `acks` is not "all", unless asked for explicitly);
`transactional_id` enables transactions.
"""

from __future__ import annotations

import inspect
import logging
import time
from collections.abc import Callable, Coroutine, Mapping, Sequence
from types import TracebackType
from typing import Any

import anyio
import anyio.abc
import anyio.lowlevel

from krafka.codec import Compression, Record
from krafka.errors import InvalidStateError, KafkaTimeoutError, KrafkaError
from krafka.io.client import KafkaClient
from krafka.io.driver import MachineDriver
from krafka.io.producer_config import keywords_from_config
from krafka.io.producer_handle import (
    DeliveryHandle,
    ProducerInterceptor,
    ProducerRecord,
    wake_waiters,
)
from krafka.io.producer_txn import group_metadata_of, normalize_offsets
from krafka.sansio.partitioner import Partitioner, PartitionFunction, make_partitioner
from krafka.sansio.producer import wire
from krafka.sansio.producer.accumulator import SEALED
from krafka.sansio.producer.batch import ProducerBatch
from krafka.sansio.producer.config import Acks, ProducerConfig
from krafka.sansio.producer.core import ProducerCore
from krafka.sansio.producer.metrics import ProducerMetricsSnapshot
from krafka.sansio.producer.record import Header, RecordHandle, RecordMetadata, estimate_size
from krafka.sansio.producer.sender import ProduceRequestPlan
from krafka.sansio.producer.transaction import (
    PartitionsAdded,
    ProducerFatal,
    ProducerIdAssigned,
    TransactionAbortable,
    TransactionManager,
)
from krafka.structs import ConsumerGroupMetadata

__all__ = ["DeliveryHandle", "Producer", "ProducerRecord", "RecordMetadata"]

log = logging.getLogger(__name__)
_monotonic = time.monotonic
_TURNS_PER_SEAL = 3
_wall = time.time


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
        client: KafkaClient | None = None,
        **client_options: Any,
    ) -> None:
        parsed_acks = Acks.parse(acks)
        if isinstance(enable_idempotence, str):
            enable_idempotence = enable_idempotence.lower() == "true"
        if enable_idempotence is None:
            enable_idempotence = transactional_id is not None or (
                parsed_acks is Acks.ALL and max_in_flight_requests_per_connection <= 5
            )
        self.config = ProducerConfig(
            acks=parsed_acks,
            compression=Compression.parse(compression),
            compression_level=compression_level,
            batch_size=int(batch_size),
            linger=float(linger),
            buffer_memory=int(buffer_memory),
            max_request_size=int(max_request_size),
            max_in_flight_requests_per_connection=int(max_in_flight_requests_per_connection),
            retries=int(retries),
            retry_backoff=float(retry_backoff),
            retry_backoff_max=float(retry_backoff_max),
            delivery_timeout=float(delivery_timeout),
            request_timeout=float(request_timeout),
            enable_idempotence=bool(enable_idempotence),
            transactional_id=transactional_id,
            transaction_timeout=float(transaction_timeout),
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
        self._partitioner = make_partitioner(partitioner)
        self._interceptors = tuple(interceptors)
        core = ProducerCore.build(self.config, on_seal=self._on_seal)
        self._metrics = core.metrics
        self._accumulator = core.accumulator
        self._accumulator.on_done = self._on_batch_done
        self._accumulator.handle_type = DeliveryHandle
        self._sender = core.sender
        self._txn = core.transactions
        self._txn_driver = (
            MachineDriver(
                self._client, self._txn, on_event=self._on_txn_event, name="krafka transactions"
            )
            if self._txn is not None
            else None
        )
        #: Partition counts of known topics, kept by the client's metadata (a live dict).
        self._partitions = self._client.metadata.partition_counts
        self._stale_topics: set[str] = set()
        self._tg: anyio.abc.TaskGroup | None = None
        self._wakeup: anyio.Event = _NoEvent()
        self._progress: anyio.Event = _NoEvent()
        self._request_chain: dict[int, anyio.Event] = {}
        self._refreshing = False
        self._started = False
        self._closed = False
        self._loop_error: KrafkaError | None = None
        #: The open batches `send`'s fast path may append to: empty (so every send takes the
        #: checked path) unless started, open, healthy, not transactional, no interceptors.
        self._fast_open: dict[str, list[ProducerBatch | None]] = {}

    @classmethod
    def from_config(cls, config: Mapping[str, Any], **overrides: Any) -> Producer:
        """A producer from Java/librdkafka properties (`{"bootstrap.servers": ..., ...}`)."""
        params = inspect.signature(cls.__init__).parameters
        defaults = {
            name: (p.default if p.default is not inspect.Parameter.empty else None)
            for name, p in params.items()
            if name not in ("self", "client_options")
        }
        return cls(**{**keywords_from_config(config, defaults), **overrides})

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
        if self._started:
            return
        self._started = True
        self._wakeup, self._progress = anyio.Event(), anyio.Event()
        if self._own_client:
            await self._client.__aenter__()
        self._tg = anyio.create_task_group()
        await self._tg.__aenter__()
        try:
            if self._txn is not None and self._txn_driver is not None:
                await self._tg.start(self._txn_driver.run)
                op = self._txn.initialize(anyio.current_time())
                await self._txn_driver.outcome(op, self.max_block)
        except BaseException:
            await self.close(0)
            raise
        self._tg.start_soon(self._sender_loop, name="krafka producer sender")
        if not self._interceptors and self.config.transactional_id is None:
            self._fast_open = self._accumulator.open_by_topic

    async def close(self, timeout: float | None = None) -> None:
        """Deliver what is queued (waiting at most `timeout` seconds), then disconnect.

        Records still undelivered when the timeout expires fail with `KafkaTimeoutError`.
        Call it in the task that called `start`, outside cancel scopes opened since (anyio's
        scopes nest), or simply use `async with Producer(...)`.
        """
        if self._closed:
            return
        if self._tg is not None and self._loop_error is None:
            with anyio.move_on_after(timeout):
                try:
                    await self.flush()
                except KrafkaError as exc:
                    log.warning("producer closing without delivering everything: %s", exc)
        self._closed = True
        self._fast_open = {}
        self._sender.abandon(KafkaTimeoutError("producer closed before delivery"))
        tg, self._tg = self._tg, None
        if tg is not None:
            tg.cancel_scope.cancel()
            await tg.__aexit__(None, None, None)
        if self._own_client:
            await self._client.close()

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
        batches = self._fast_open.get(topic)
        if batches is None or headers:
            return await self._send_checked(topic, value, key, headers, partition, timestamp)
        if partition is None:
            count = self._partitions.get(topic)
            if count is None:
                return await self._send_checked(topic, value, key, headers, partition, timestamp)
            partition = self._partitioner.partition(topic, key, count)
        size = 21 + (len(value) if value is not None else 0) + (len(key) if key is not None else 0)
        try:
            batch = batches[partition] if partition >= 0 else None
        except IndexError:
            batch = None
        if batch is None or batch.size + size > batch.limit:
            return await self._send_checked(topic, value, key, headers, partition, timestamp)
        records = batch.records
        handle = DeliveryHandle(batch, len(records))
        records.append(Record(0, timestamp, key, value, ()))
        batch.size += size
        if batch.size >= batch.limit:
            self._accumulator.seal(batch)
            await self._let_sender_run()
        return handle

    async def _send_checked(
        self,
        topic: str,
        value: bytes | None,
        key: bytes | None,
        headers: Sequence[Header] | None,
        partition: int | None,
        timestamp: int | None,
    ) -> DeliveryHandle:
        """`send` with every check: state, transaction, interceptors, metadata, headers."""
        if self._closed or not self._started:
            raise InvalidStateError("producer is closed" if self._closed else "not started")
        if self._interceptors:
            record = self._intercept(
                ProducerRecord(topic, value, key, headers or (), partition, timestamp)
            )
            topic, value, key, headers = record.topic, record.value, record.key, record.headers
            partition, timestamp = record.partition, record.timestamp
        if self._txn is not None:
            self._txn.check_can_send()
        if self._loop_error is not None:
            raise self._loop_error
        count = self._partitions.get(topic)
        if count is None:
            count = await self._partition_count(topic)
        if partition is None:
            partition = self._partitioner.partition(topic, key, count)
        elif not 0 <= partition < count:
            raise ValueError(f"{topic!r} has {count} partitions, not {partition + 1}")
        hdrs = list(headers) if headers else ()
        size = estimate_size(key, value, hdrs)
        return await self._append(topic, partition, Record(0, timestamp, key, value, hdrs), size)

    async def _append(self, topic: str, partition: int, record: Any, size: int) -> DeliveryHandle:
        """The general append: back-pressure when the buffer is full, opening batches."""
        if not self._accumulator.has_room(size):
            await self._wait_for_room(size)
        appended, handle = self._accumulator.append(
            topic, partition, record, size, _monotonic(), int(_wall() * 1000)
        )
        if appended == SEALED:
            await self._let_sender_run()
        elif appended:
            self._wakeup.set()
        assert isinstance(handle, DeliveryHandle)
        return handle

    async def _let_sender_run(self) -> None:
        """A batch was sealed: give the sender task, the request task and the connection's
        writer a turn each, so the batch is on the wire while the caller fills the next one."""
        self._wakeup.set()
        for _ in range(_TURNS_PER_SEAL):
            await anyio.lowlevel.checkpoint()

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
        self._accumulator.flush()
        pending = [*self._accumulator.batches(), *self._sender.in_flight_batches()]
        try:
            with anyio.fail_after(timeout):
                while True:
                    pending = [batch for batch in pending if not batch.settled]
                    if not pending:
                        break
                    if self._loop_error is not None:
                        raise self._loop_error
                    self._wakeup.set()
                    with anyio.move_on_after(0.5):
                        await self._progress.wait()
        except TimeoutError:
            raise KafkaTimeoutError(f"flush did not finish within {timeout}s") from None
        finally:
            self._accumulator.flush_done()

    async def partitions_for(self, topic: str) -> list[int]:
        """The partition ids of `topic` (fetching metadata if needed)."""
        return list(range(await self._partition_count(topic)))

    def metrics(self) -> ProducerMetricsSnapshot:
        """Records and bytes sent, batch sizes, retries, errors, request latency."""
        return self._metrics.snapshot()

    # -- transactions ---------------------------------------------------------------------------

    async def init_transactions(self) -> None:
        """Get the producer id, fencing older producers of the transactional id (done by
        `start`)."""
        txn, driver = self._machine()
        await driver.outcome(txn.initialize(anyio.current_time()), self.max_block)

    def begin_transaction(self) -> _Done:
        """Start a transaction (local; the coordinator hears of it with the first record)."""
        txn, _ = self._machine()
        txn.begin(anyio.current_time())
        return _Done()

    async def send_offsets_to_transaction(
        self, offsets: Mapping[Any, Any], group_metadata: ConsumerGroupMetadata | str
    ) -> None:
        """Commit consumer offsets as part of the transaction (AddOffsetsToTxn, TxnOffsetCommit).

        `offsets`: `{TopicPartition: OffsetAndMetadata or offset}`, the offsets of the *next*
        records to consume; `group_metadata`: the consumer's `group_metadata()` (so the broker
        fences a zombie of an older generation) or a bare group id.
        """
        txn, driver = self._machine()
        op = txn.send_offsets(
            normalize_offsets(offsets), group_metadata_of(group_metadata), anyio.current_time()
        )
        await driver.outcome(op, self.max_block)

    async def commit_transaction(self) -> None:
        """Commit: no `send` is accepted from now on; once the transaction's records are
        delivered, EndTxn(commit). Raises if the transaction can only be aborted."""
        txn, driver = self._machine()
        op = txn.commit(anyio.current_time())
        self._accumulator.flush()
        self._wakeup.set()
        try:
            await driver.outcome(op, self.max_block)
        finally:
            self._accumulator.flush_done()

    async def abort_transaction(self) -> None:
        """Drop unsent records of the transaction, wait for those in flight, abort it (EndTxn)."""
        txn, driver = self._machine()
        op = txn.abort(anyio.current_time())
        self._sender.fail_all(KrafkaError("transaction aborted"))
        self._notify_progress()
        await driver.outcome(op, self.max_block)

    def _machine(self) -> tuple[TransactionManager, MachineDriver]:
        if self.config.transactional_id is None or self._txn is None or self._txn_driver is None:
            raise InvalidStateError("not a transactional producer: set transactional_id")
        if self._txn.fatal and self._txn.error is not None:
            raise self._txn.error
        return self._txn, self._txn_driver

    def _on_txn_event(self, event: Any) -> None:
        """What the transaction machine tells the producer (in the driver's task)."""
        if isinstance(event, ProducerIdAssigned | PartitionsAdded):
            self._wakeup.set()
        elif isinstance(event, TransactionAbortable):
            self._sender.fail_all(event.error)
            self._notify_progress()
        elif isinstance(event, ProducerFatal):
            self._loop_error = event.error
            self._fast_open = {}
            self._sender.fail_all(event.error)
            self._notify_progress()

    def _intercept(self, record: ProducerRecord) -> ProducerRecord:
        for interceptor in self._interceptors:
            hook = getattr(interceptor, "on_send", None)
            if hook is None:
                continue
            try:
                record = hook(record)
            except Exception:
                log.exception("producer interceptor %r failed in on_send", interceptor)
        return record

    def _on_batch_done(self, batch: ProducerBatch) -> None:
        wake_waiters(batch)
        self._notify_progress()
        if self._interceptors and batch.done:
            self._acknowledge(batch)

    def _notify_progress(self) -> None:
        """Wake every task waiting for a batch to finish (flush, buffer back-pressure)."""
        event, self._progress = self._progress, anyio.Event()
        event.set()

    def _acknowledge(self, batch: ProducerBatch) -> None:
        for interceptor in self._interceptors:
            hook = getattr(interceptor, "on_acknowledgement", None)
            if hook is None:
                continue
            for index in range(len(batch.records)):
                meta = RecordHandle(batch, index).result() if batch.error is None else None
                try:
                    hook(meta, batch.error)
                except Exception:
                    log.exception("producer interceptor %r failed in on_acknowledgement", hook)

    def _on_seal(self, topic: str, partition: int) -> None:
        self._partitioner.on_batch_sealed(topic, partition, self._partitions.get(topic, 1))

    async def _partition_count(self, topic: str) -> int:
        try:
            with anyio.fail_after(self.max_block):
                while True:
                    try:
                        ids = await self._client.partitions_for(topic)
                    except KrafkaError as exc:
                        if not exc.retriable:
                            raise
                        ids = []
                    if ids:
                        return len(ids)
                    await anyio.sleep(self.config.retry_backoff)
        except TimeoutError:
            raise KafkaTimeoutError(
                f"no metadata for topic {topic!r} within max_block={self.max_block}s"
            ) from None

    async def _wait_for_room(self, size: int) -> None:
        self._wakeup.set()
        try:
            with anyio.fail_after(self.max_block):
                while not self._accumulator.has_room(size):
                    if self._loop_error is not None:
                        raise self._loop_error
                    await self._progress.wait()
        except TimeoutError:
            raise KafkaTimeoutError(
                f"buffer_memory={self.config.buffer_memory} stayed full for {self.max_block}s"
            ) from None

    # -- the sender task ------------------------------------------------------------------------

    async def _sender_loop(self) -> None:
        try:
            while True:
                await self._sender_step()
        except KrafkaError as exc:
            log.error("producer stopped: %s", exc)
            self._loop_error = exc
            self._fast_open = {}
            self._sender.fail_all(exc)
            self._notify_progress()

    async def _sender_step(self) -> None:
        sender = self._sender
        self._wakeup = wakeup = anyio.Event()
        now = _monotonic()
        sender.expire(now)
        drained = sender.drain(now, self._client.metadata)
        self._stale_topics |= drained.stale_topics
        if self._stale_topics and not self._refreshing:
            topics, self._stale_topics = list(self._stale_topics), set()
            self._spawn(self._refresh, topics)
        for plan in drained.plans:
            self._dispatch(plan)
        if self._txn_driver is not None:
            self._txn_driver.wake()  # partitions may be waiting to join the transaction
        ready_at = self._accumulator.next_ready_at()
        if ready_at is None:
            await wakeup.wait()
            return
        delay = max(ready_at - _monotonic(), 0.0)
        if delay == 0.0:
            delay = 0.005 if sender.in_flight == 0 else 1.0
        with anyio.move_on_after(delay):
            await wakeup.wait()

    def _dispatch(self, plan: ProduceRequestPlan) -> None:
        previous = self._request_chain.get(plan.node_id)
        started = self._request_chain[plan.node_id] = anyio.Event()
        self._spawn(self._produce, plan, previous, started)

    def _spawn(self, func: Callable[..., Coroutine[Any, Any, None]], *args: Any) -> None:
        assert self._tg is not None
        self._tg.start_soon(func, *args)

    async def _produce(
        self, plan: ProduceRequestPlan, previous: anyio.Event | None, started: anyio.Event
    ) -> None:
        """Send one Produce request; requests to a broker are enqueued in drain order."""
        if previous is not None:
            await previous.wait()
        request = wire.produce_request(plan, self.config)
        started.set()
        try:
            response = await self._client.send(
                request, node_id=plan.node_id, timeout=self.config.request_timeout
            )
        except KrafkaError as exc:
            self._sender.on_failure(plan, exc, _monotonic())
        else:
            results = wire.produce_results(response)
            for (topic, _), result in results.items():
                if result.error_code:
                    self._client.report_error(result.error_code, topic)
            self._sender.on_response(plan, results, _monotonic())
        self._wakeup.set()
        self._notify_progress()
        if self._txn_driver is not None:
            self._txn_driver.wake()

    async def _refresh(self, topics: list[str]) -> None:
        self._refreshing = True
        try:
            await self._client.refresh_metadata(topics)
        except KrafkaError as exc:
            log.debug("metadata refresh for %s failed: %s", topics, exc)
            await anyio.sleep(self.config.retry_backoff)
        finally:
            self._refreshing = False
            self._wakeup.set()


class _NoEvent(anyio.Event):
    """Stands in for the producer's events until `start` creates real ones (an anyio.Event
    can only be made inside an event loop)."""

    def __new__(cls) -> _NoEvent:
        return object.__new__(cls)

    def set(self) -> None:
        return None

    def is_set(self) -> bool:
        return False

    async def wait(self) -> None:
        raise InvalidStateError("producer is not started")

    def statistics(self) -> Any:
        raise InvalidStateError("producer is not started")
