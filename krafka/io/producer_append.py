"""The producer's general path into its engine, taken whenever `Producer.send`'s fast path
(`ProducerEngine.append_open`) cannot be: interceptors, headers, a record that opens a batch,
and the waits `ProducerEngine.append` asks for (`AppendBlocked`): the topic's metadata and
buffer room, each at most `max_block`. Everything else (checks, partitioning, transactions) is
the engine's; a record it refuses raises here, before it touches any state."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

import anyio

from krafka.errors import KafkaTimeoutError, KrafkaError
from krafka.io.client import KafkaClient
from krafka.io.producer_handle import DeliveryHandle, Hooks, ProducerRecord
from krafka.sansio.producer.engine import AppendBlocked, AppendWait, ProducerEngine
from krafka.sansio.producer.record import Header

_wall = time.time


class Appender:
    """Appends one record to `engine`, waiting as it asks; `partition_count` waits for
    metadata. `progress()` is an event set when a batch finished (room may be back);
    `stopped()` is the producer's error once it stopped (then waits end with it)."""

    def __init__(
        self,
        client: KafkaClient,
        engine: ProducerEngine,
        hooks: Hooks,
        max_block: float,
        progress: Callable[[], anyio.Event],
        stopped: Callable[[], KrafkaError | None],
    ) -> None:
        self.client = client
        self.engine = engine
        self.hooks = hooks
        self.max_block = max_block
        self._progress = progress
        self._stopped = stopped

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
        engine = self.engine
        while True:
            try:
                return engine.append(  # type: ignore[return-value]
                    topic, partition, timestamp, key, value, headers,
                    anyio.current_time(), int(_wall() * 1000),
                )  # fmt: skip
            except AppendBlocked as blocked:
                if blocked.reason is AppendWait.METADATA:
                    await self._metadata(topic)
                else:
                    await self.wait_for_room(blocked.size)
            self._raise_if_stopped()  # also: closed while waiting

    async def _metadata(self, topic: str) -> None:
        """A record that cannot be sent (its topic refused, unknown) dooms the transaction it
        was meant for, as in Java: committing the rest would make it partial."""
        try:
            await self.partition_count(topic)
        except KrafkaError as exc:
            self.engine.refuse_record(exc)
            raise

    async def wait_for_room(self, size: int) -> None:
        """Wait until `size` bytes fit in `buffer_memory` (at most `max_block` s)."""
        try:
            with anyio.fail_after(self.max_block):
                while not self.engine.has_room(size):
                    self._raise_if_stopped()
                    await self._progress().wait()
        except TimeoutError:
            raise KafkaTimeoutError(
                f"buffer_memory={self.engine.config.buffer_memory} stayed full for "
                f"{self.max_block}s"
            ) from None

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
                    await anyio.sleep(self.engine.config.retry_backoff)
        except TimeoutError:
            raise KafkaTimeoutError(
                f"no metadata for topic {topic!r} within max_block={self.max_block}s"
            ) from None

    def _raise_if_stopped(self) -> None:
        error = self._stopped()
        if error is not None:
            raise error
