"""`CompactedTopicConsumer`: scan a compacted topic from the beginning into a `CompactedTable`,
know when it is caught up, then tail it.

    async with CompactedTopicConsumer("user-profiles", bootstrap_servers="b:9092") as ctc:
        await ctc.scan()                   # until every partition reached its high watermark
        profile = ctc.table.get(b"user-123")
        changes = await ctc.poll(1.0)      # live updates as TableChanges

No consumer group: every partition of the topic is assigned and read from the earliest
offset. Caught-up means each partition's position reached the high watermark of its latest
fetch; on a topic written all the time `scan` is a best-effort catch-up, not a bounded
snapshot.
"""

from __future__ import annotations

from types import TracebackType
from typing import Any

import anyio

from krafka.errors import InvalidStateError, UnknownTopicOrPartitionError
from krafka.io.consumer.consumer import Consumer
from krafka.sansio.consumer.compacted_table import CompactedTable, TableChange
from krafka.structs import TopicPartition


class CompactedTopicConsumer:
    """A standalone consumer of one compacted topic and the table it builds."""

    def __init__(
        self,
        topic: str,
        bootstrap_servers: str = "127.0.0.1:9092",
        *,
        consumer: Consumer | None = None,
        **consumer_options: Any,
    ) -> None:
        self.topic = topic
        self.table = CompactedTable()
        self._own = consumer is None
        self.consumer = consumer or Consumer(
            bootstrap_servers,
            auto_offset_reset="earliest",
            enable_auto_commit=False,
            **consumer_options,
        )
        self._caught_up = False

    @classmethod
    def from_consumer(cls, consumer: Consumer, topic: str) -> CompactedTopicConsumer:
        """Wrap a consumer you configured yourself (its assignment is kept if it has one)."""
        return cls(topic, consumer=consumer)

    async def start(self) -> CompactedTopicConsumer:
        """Start the consumer and assign every partition of the topic; raises
        `UnknownTopicOrPartitionError` naming it when the cluster does not have it."""
        if self._own:
            await self.consumer.start()
        try:
            if not self.consumer.assignment():
                partitions = await self.consumer.client.partitions_for(self.topic)
                if not partitions:
                    raise UnknownTopicOrPartitionError(
                        f"topic {self.topic!r} does not exist: create it (cleanup.policy="
                        "compact) before reading it as a table"
                    )
                await self.consumer.assign([TopicPartition(self.topic, p) for p in partitions])
        except BaseException:
            with anyio.CancelScope(shield=True):
                await self.close()
            raise
        return self

    async def __aenter__(self) -> CompactedTopicConsumer:
        return await self.start()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    async def close(self, timeout: float = 30.0) -> None:
        if self._own:
            await self.consumer.close(timeout)

    def is_caught_up(self) -> bool:
        return self._caught_up

    async def scan(self, poll_timeout: float = 1.0, timeout: float | None = None) -> None:
        """Read until every partition reached its high watermark (bulk: no change list)."""
        with anyio.fail_after(timeout):
            while True:
                self.table.ingest(await self.consumer.poll(poll_timeout))
                if self._update_caught_up():
                    return

    async def poll(self, timeout: float = 1.0) -> list[TableChange]:
        """Apply what arrived within `timeout`; the changes it made."""
        changes = self.table.apply(await self.consumer.poll(timeout))
        self._update_caught_up()
        return changes

    def into_parts(self) -> tuple[Consumer, CompactedTable]:
        """The consumer and the table (the caller closes the consumer from now on)."""
        self._own = False
        return self.consumer, self.table

    def _update_caught_up(self) -> bool:
        assigned = self.consumer.assignment()
        if not assigned:
            raise InvalidStateError(f"no partition of {self.topic} is assigned")
        lags = self.consumer.lag()
        self._caught_up = all(lags.get(tp) == 0 for tp in assigned)
        return self._caught_up


__all__ = ["CompactedTopicConsumer"]
