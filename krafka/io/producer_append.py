"""The producer's general path into the accumulator, taken whenever `Producer.send`'s fast path
(`RecordAccumulator.append_open`) cannot be: interceptors, the transaction's state, the topic's
metadata (waiting for it at most `max_block`), partitioning, headers, buffer back-pressure and
opening batches. A record the API contract or Kafka refuses (a topic name that is not a legal
one, headers that are not `(str, bytes | None)` pairs, more bytes than `max_request_size` or
`buffer_memory`) raises here, before it touches any state."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

import anyio

from krafka.errors import KafkaTimeoutError, KrafkaError
from krafka.io.client import KafkaClient
from krafka.io.clock import loop_clock
from krafka.io.producer_handle import DeliveryHandle, Hooks, ProducerRecord
from krafka.io.producer_sender import SenderLoop
from krafka.io.producer_txn import Transactions
from krafka.sansio.partitioner import Partitioner
from krafka.sansio.producer.accumulator import SEALED
from krafka.sansio.producer.batch import BATCH_OVERHEAD
from krafka.sansio.producer.record import Header, check_headers, estimate_size
from krafka.sansio.topic_name import check_topic

_wall = time.time


class Appender:
    """Checks, partitions and appends one record; `partition_count` waits for metadata."""

    def __init__(
        self,
        client: KafkaClient,
        loop: SenderLoop,
        partitioner: Partitioner,
        hooks: Hooks,
        transactions: Transactions | None,
        max_block: float,
    ) -> None:
        self.client = client
        self.loop = loop
        self.accumulator = loop.accumulator
        self.partitioner = partitioner
        self.hooks = hooks
        self.transactions = transactions
        self.max_block = max_block
        #: Partition counts of known topics, kept by the client's metadata (a live dict).
        self.partitions = client.metadata.partition_counts
        #: The loop's clock, for `append_now` (called off the loop too); set by `start`.
        self.clock: Callable[[], float] = anyio.current_time

    def start(self) -> None:
        """On the loop: fix the clock `append_now` reads from any thread."""
        self.clock = loop_clock()

    async def append(
        self,
        topic: str,
        value: bytes | None,
        key: bytes | None,
        headers: Sequence[Header] | None,
        partition: int | None,
        timestamp: int | None,
    ) -> DeliveryHandle:
        if self.hooks.interceptors:
            record = self.hooks.on_send(
                ProducerRecord(topic, value, key, headers or (), partition, timestamp)
            )
            topic, value, key, headers = record.topic, record.value, record.key, record.headers
            partition, timestamp = record.partition, record.timestamp
        check_topic(topic)
        hdrs = check_headers(headers) if headers else ()
        size = estimate_size(key, value, hdrs)
        self.accumulator.check_record_size(size)
        if self.transactions is not None:
            self.transactions.machine.check_can_send()
        count = self.partitions.get(topic) or await self._partition_count_in_transaction(topic)
        if self.loop.error is not None:  # also: closed while waiting for metadata
            raise self.loop.error
        if partition is None:
            partition = self.partitioner.partition(topic, key, count)
        elif not 0 <= partition < count:
            raise ValueError(f"{topic!r} has {count} partitions, not {partition + 1}")
        if not self.accumulator.has_room(size):
            await self.loop.wait_for_room(size, self.max_block)
        appended, handle = self.accumulator.append(
            topic, partition, timestamp, key, value, hdrs, size, anyio.current_time(),
            int(_wall() * 1000),
        )  # fmt: skip
        if appended == SEALED:
            await self.loop.sealed()
        elif appended:
            self.loop.wake()
        return handle  # type: ignore[return-value]

    async def _partition_count_in_transaction(self, topic: str) -> int:
        """A record that cannot be sent (its topic refused, unknown) dooms the transaction it
        was meant for, as in Java: committing the rest would make it partial."""
        try:
            return await self.partition_count(topic)
        except KrafkaError as exc:
            if self.transactions is not None:
                self.transactions.machine.record_failed(exc)
                self.transactions.driver.wake()
            raise

    def append_now(
        self,
        topic: str,
        value: bytes | None,
        key: bytes | None,
        partition: int | None,
        timestamp: int | None,
    ) -> tuple[DeliveryHandle | None, int | None, bool]:
        """`append` for a record that needs no waiting and no checks beyond the fast path's
        (no headers, interceptors or transaction; known metadata; buffer room), as a plain
        call: `(handle, partition, wake)`, `wake` when a batch opened or sealed. A None handle
        means `append` must be awaited (with the partition chosen, if any)."""
        if self.hooks.interceptors or self.transactions is not None or self.loop.error:
            return None, partition, False
        count = self.partitions.get(topic)
        if count is None:
            return None, partition, False
        if partition is None:
            partition = self.partitioner.partition(topic, key, count)
        elif not 0 <= partition < count:
            return None, partition, False
        size = estimate_size(key, value, ())
        if size + BATCH_OVERHEAD > self.accumulator.config.max_request_size:
            return None, partition, False  # `append` refuses it
        if not self.accumulator.has_room(size):
            return None, partition, False
        appended, handle = self.accumulator.append(
            topic, partition, timestamp, key, value, None, size, self.clock(),
            int(_wall() * 1000),
        )  # fmt: skip
        return handle, partition, bool(appended)  # type: ignore[return-value]

    async def partition_count(self, topic: str) -> int:
        """The number of partitions of `topic`, fetching metadata (at most `max_block` s)."""
        try:
            with anyio.fail_after(self.max_block):
                while True:
                    try:
                        ids = await self.client.partitions_for(topic)
                    except KrafkaError as exc:
                        if not exc.retriable:
                            raise
                        ids = []
                    if ids:
                        return len(ids)
                    await anyio.sleep(self.loop.config.retry_backoff)
        except TimeoutError:
            raise KafkaTimeoutError(
                f"no metadata for topic {topic!r} within max_block={self.max_block}s"
            ) from None

    def on_seal(self, topic: str, partition: int) -> None:
        """Accumulator hook: a batch filled up (the sticky partitioner moves on)."""
        self.partitioner.on_batch_sealed(topic, partition, self.partitions.get(topic, 1))
