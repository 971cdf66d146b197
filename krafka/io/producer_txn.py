"""The producer's transactional calls on anyio: each one an input to the `ProducerEngine` whose
outcome is awaited on the producer's `AttachedMachine` (at most `max_block`), and what
`send_offsets_to_transaction` accepts, normalised for it.

Users pass what their consumer gave them: `{TopicPartition: OffsetAndMetadata}` (or plain
offsets, or `(topic, partition)` keys, kafka-python style) and `consumer.group_metadata()` (or
just a group id).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import anyio

from krafka.errors import KafkaTimeoutError
from krafka.io.attached import AttachedMachine, OutcomeTimeout
from krafka.sansio.producer.engine import ProducerEngine
from krafka.sansio.producer.txn_call import TxnCall
from krafka.structs import ConsumerGroupMetadata, OffsetAndMetadata, TopicPartition


def group_metadata_of(value: ConsumerGroupMetadata | str) -> ConsumerGroupMetadata:
    """A consumer's group metadata, or a bare group id (generation -1: no fencing)."""
    if isinstance(value, ConsumerGroupMetadata):
        return value
    if isinstance(value, str):
        return ConsumerGroupMetadata(value)
    raise TypeError(
        f"group_metadata must be a consumer's group_metadata() or a group id, not {value!r}"
    )


def normalize_offsets(offsets: Mapping[Any, Any]) -> dict[TopicPartition, OffsetAndMetadata]:
    """`{TopicPartition | (topic, partition) | peer's TopicPartition: OffsetAndMetadata | int}`
    -> typed pairs."""
    out: dict[TopicPartition, OffsetAndMetadata] = {}
    for key, value in offsets.items():
        if isinstance(key, tuple):
            topic, partition = key
        else:  # confluent-kafka's and kafka-python's TopicPartition objects
            topic, partition = key.topic, key.partition
        tp = TopicPartition(str(topic), int(partition))
        if isinstance(value, OffsetAndMetadata):
            out[tp] = value
        elif isinstance(value, int):
            out[tp] = OffsetAndMetadata(value)
        else:
            raise TypeError(f"offset for {tp} must be an OffsetAndMetadata or an int: {value!r}")
    return out


class Transactions:
    """The application's transactional calls on `engine`, run by `driver`.

    Each call waits for its outcome at most `max_block` seconds; a call that runs out of time
    stays pending in the engine (the same call again waits for the same outcome).
    """

    def __init__(self, engine: ProducerEngine, driver: AttachedMachine, max_block: float) -> None:
        self.engine = engine
        self.driver = driver
        self.max_block = max_block

    async def start(self) -> None:
        """Get the producer id (initialising transactions); the producer does not start
        without one (so no "call it again" on a timeout here)."""
        op = self.engine.initialize(anyio.current_time())
        try:
            await self.driver.outcome(op, self.max_block)
        except OutcomeTimeout as exc:
            raise KafkaTimeoutError(
                f"no producer id within max_block={self.max_block}s: the producer did not start"
            ) from exc

    async def initialize(self) -> None:
        op = self.engine.initialize(anyio.current_time())
        await self._outcome(op, TxnCall.INITIALIZE)

    def begin(self) -> None:
        self.engine.begin(anyio.current_time())

    async def send_offsets(
        self, offsets: Mapping[Any, Any], group_metadata: ConsumerGroupMetadata | str
    ) -> None:
        op = self.engine.send_offsets(
            normalize_offsets(offsets), group_metadata_of(group_metadata), anyio.current_time()
        )
        try:
            await self.driver.outcome(op, self.max_block)
        except OutcomeTimeout as exc:
            raise KafkaTimeoutError(
                f"send_offsets_to_transaction() did not finish within max_block="
                f"{self.max_block}s; the offsets are still being added to the transaction: "
                "commit_transaction() waits for them (and fails if they fail)"
            ) from exc

    async def commit(self) -> None:
        """COMMITTING at once (no `send` gets in any more), then deliver what is queued
        (ignoring linger) and EndTxn(commit)."""
        op = self.engine.commit(anyio.current_time())
        await self._outcome(op, TxnCall.COMMIT)

    async def abort(self) -> None:
        op = self.engine.abort(anyio.current_time())
        await self._outcome(op, TxnCall.ABORT)

    async def _outcome(self, op: int, call: TxnCall) -> None:
        """Wait for `op`; when `max_block` runs out first, the engine keeps it pending."""
        try:
            await self.driver.outcome(op, self.max_block)
        except OutcomeTimeout as exc:
            self.engine.abandon(op)
            name = call.value
            raise KafkaTimeoutError(
                f"{name}() did not finish within max_block={self.max_block}s and its outcome "
                f"is unknown (the coordinator may still carry it out): call {name}() again to "
                "wait for it; other transactional calls are refused until then"
            ) from exc
