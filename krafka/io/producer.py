"""The asynchronous producer, on anyio (asyncio and trio alike).

    async with Producer(bootstrap_servers="127.0.0.1:9092", linger=0.005) as producer:
        meta = await producer.send_and_wait("orders", b"value", key=b"k")
        pending = await producer.send("orders", b"value2")   # enqueued; returns at once
        meta2 = await pending                                 # RecordMetadata, or raises

`send` only appends to the accumulator (no I/O, no per-record future); the send loop
(`producer_sender.SenderLoop`) turns batches into Produce requests, and transactions run on
their own machine (`producer_txn.Transactions`). Idempotence is on by default (off
automatically when `acks` is not "all", unless asked for explicitly); `transactional_id`
enables transactions. Background tasks live in the producer's own task (`TaskHost`), so
`start` and `close` may be called from any task.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from types import TracebackType
from typing import Any

import anyio

from krafka.codec import Compression
from krafka.config.keywords import check_arguments
from krafka.errors import InvalidStateError, KafkaTimeoutError, KrafkaError
from krafka.io.client import KafkaClient
from krafka.io.host import TaskHost
from krafka.io.producer_append import Appender
from krafka.io.producer_handle import DeliveryHandle, Hooks, ProducerInterceptor, ProducerRecord
from krafka.io.producer_sender import SenderLoop
from krafka.io.producer_settings import keywords, producer_config
from krafka.io.producer_txn import Transactions
from krafka.sansio.partitioner import Partitioner, PartitionFunction, make_partitioner
from krafka.sansio.producer.core import ProducerCore
from krafka.sansio.producer.metrics import ProducerMetricsSnapshot
from krafka.sansio.producer.record import Header, RecordMetadata
from krafka.structs import ConsumerGroupMetadata

__all__ = ["DeliveryHandle", "Producer", "ProducerRecord", "RecordMetadata"]

log = logging.getLogger(__name__)


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
        #: Partition counts of known topics, kept by the client's metadata (a live dict).
        self._partitions = self._client.metadata.partition_counts
        self._partitioner = make_partitioner(partitioner)
        self._host = TaskHost("krafka producer")
        core = ProducerCore.build(self.config, on_seal=self._on_seal)
        self._metrics = core.metrics
        self._accumulator = core.accumulator
        self._loop = SenderLoop(
            self._client,
            core.sender,
            core.accumulator,
            self.config,
            self._host,
            on_answer=self._wake_transactions,
            on_stop=self._stopped,
        )
        self._hooks = Hooks(interceptors, self._loop.notify_progress)
        self._accumulator.on_done = self._hooks.batch_done
        self._accumulator.handle_type = DeliveryHandle
        self._txns = (
            Transactions(self._client, core.transactions, self._loop, max_block)
            if core.transactions is not None
            else None
        )
        self._appender = Appender(
            self._client, self._loop, self._partitioner, self._hooks, self._txns, max_block
        )
        self._started = self._closed = False
        #: `send` may take `append_open` without the checks of `_send_checked`: started, not
        #: closed, not stopped, no transaction, no interceptors.
        self._fast = False

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
        self._appender.start()
        try:
            await self._host.start()
            if self._own_client:
                await self._client.start()
            await self._host.task_group.start(self._run_loop)
            if self._txns is not None:
                await self._txns.start(self._host)
        except BaseException:
            with anyio.CancelScope(shield=True):
                await self.close(0)
            raise
        self._fast = not self._hooks.interceptors and self.config.transactional_id is None

    async def close(self, timeout: float | None = None) -> None:
        """Refuse new records, deliver those queued (waiting at most `timeout` seconds), then
        disconnect.

        Records still undelivered when the timeout expires fail with `KafkaTimeoutError`. With
        a timeout, `close` returns within about that long even when brokers are gone. Callable
        from any task; a cancelled caller skips the delivery, not the disconnect.
        """
        if self._closed:
            return
        self._closed, self._fast = True, False
        deadline = None if timeout is None else anyio.current_time() + timeout
        try:
            if self._host.running and self._loop.error is None:
                with anyio.move_on_after(timeout):
                    await self.flush()
        except KrafkaError as exc:
            log.warning("producer closing without delivering everything: %s", exc)
        finally:
            error = KafkaTimeoutError("producer closed before delivery")
            self._loop.stop(error)  # a send still waiting for room or metadata fails too
            self._loop.abandon(error)
            await self._host.close(_left(deadline, 1.0))
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
        if not self._fast or headers:
            return await self._send_checked(topic, value, key, headers, partition, timestamp)
        if partition is None:
            count = self._partitions.get(topic)
            if count is None:
                return await self._send_checked(topic, value, key, headers, None, timestamp)
            partition = self._partitioner.partition(topic, key, count)
        handle, sealed = self._accumulator.append_open(topic, partition, key, value, timestamp)
        if handle is None:
            return await self._send_checked(topic, value, key, headers, partition, timestamp)
        if sealed:
            await self._loop.sealed()
        return handle  # type: ignore[return-value]

    def _try_append(
        self,
        topic: str,
        value: bytes | None,
        key: bytes | None,
        partition: int | None,
        timestamp: int | None,
    ) -> tuple[DeliveryHandle | None, int | None, bool]:
        """`send` without headers as a plain call, for a caller holding this producer's loop
        while it is parked (`krafka.sync.producer`, not the public API): `(handle, partition,
        wake)`. A None handle means the record needs `send` (give it the partition chosen, if
        any: partitioners may keep state); `wake` means the sender has news: call
        `_wake_sender()` on the loop."""
        if not self._fast:
            return None, partition, False
        if partition is None:
            count = self._partitions.get(topic)
            if count is None:
                return None, None, False
            partition = self._partitioner.partition(topic, key, count)
        handle, sealed = self._accumulator.append_open(topic, partition, key, value, timestamp)
        if handle is not None:
            return handle, partition, sealed  # type: ignore[return-value]
        return self._appender.append_now(topic, value, key, partition, timestamp)

    def _wake_sender(self) -> None:
        """Have the sender look at the batches (after `_try_append` opened or sealed one)."""
        self._loop.wake()

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
        return await self._appender.append(topic, value, key, headers, partition, timestamp)

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
        await self._loop.flush(timeout)

    async def partitions_for(self, topic: str) -> list[int]:
        """The partition ids of `topic` (fetching metadata if needed)."""
        return list(range(await self._appender.partition_count(topic)))

    def metrics(self) -> ProducerMetricsSnapshot:
        """Records and bytes sent, batch sizes, retries, errors, request latency."""
        return self._metrics.snapshot()

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
        self._txns.check_usable()
        return self._txns

    # -- internals ------------------------------------------------------------------------------

    async def _run_loop(self, *, task_status: anyio.abc.TaskStatus[None]) -> None:
        task_status.started()
        await self._loop.run()

    def _wake_transactions(self) -> None:
        if self._txns is not None:
            self._txns.driver.wake()

    def _stopped(self, error: KrafkaError) -> None:
        self._fast = False

    def _on_seal(self, topic: str, partition: int) -> None:
        self._appender.on_seal(topic, partition)


def _left(deadline: float | None, default: float) -> float:
    """Seconds to `deadline` (none left: 0), or `default` without one."""
    return default if deadline is None else max(0.0, deadline - anyio.current_time())
