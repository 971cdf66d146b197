"""The producer's transactions on anyio: the sans-IO `TransactionManager` run by a
`MachineDriver`, and what `send_offsets_to_transaction` accepts, normalised for it.

Users pass what their consumer gave them: `{TopicPartition: OffsetAndMetadata}` (or plain
offsets, or `(topic, partition)` keys, kafka-python style) and `consumer.group_metadata()` (or
just a group id).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import anyio

from krafka.errors import KafkaTimeoutError, KrafkaError
from krafka.io.client import KafkaClient
from krafka.io.driver import MachineDriver, OutcomeTimeout
from krafka.io.host import TaskHost
from krafka.io.producer_sender import SenderLoop
from krafka.sansio.producer.transaction import TransactionManager
from krafka.sansio.producer.txn_call import TxnCall
from krafka.sansio.producer.txn_events import (
    PartitionsAdded,
    ProducerFatal,
    ProducerIdAssigned,
    TransactionAbortable,
)
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
    """A transactional (or idempotent) producer's `TransactionManager` on a `MachineDriver`.

    The application's calls go to the machine and wait for their outcome (at most `max_block`
    seconds; a call that runs out of time stays pending in the machine: the same call again
    waits for the same outcome); the machine's events reach the send loop: new producer ids and
    partitions that joined the transaction wake it, an abortable transaction fails the queued
    records, a fatal error stops it.
    """

    def __init__(
        self, client: KafkaClient, machine: TransactionManager, loop: SenderLoop, max_block: float
    ) -> None:
        self.machine = machine
        self.loop = loop
        self.max_block = max_block
        self.fatal: KrafkaError | None = None
        self.driver = MachineDriver(
            client, machine, on_event=self._on_event, name="krafka transactions"
        )

    async def start(self, host: TaskHost) -> None:
        """Run the driver in `host` and get the producer id (initialising transactions); the
        producer does not start without one (so no "call it again" on a timeout here)."""
        await host.task_group.start(self.driver.run)
        op = self.machine.initialize(anyio.current_time())
        try:
            await self.driver.outcome(op, self.max_block)
        except OutcomeTimeout as exc:
            raise KafkaTimeoutError(
                f"no producer id within max_block={self.max_block}s: the producer did not start"
            ) from exc

    async def initialize(self) -> None:
        op = self.machine.initialize(anyio.current_time())
        await self._outcome(op, TxnCall.INITIALIZE)

    def begin(self) -> None:
        self.machine.begin(anyio.current_time())

    async def send_offsets(
        self, offsets: Mapping[Any, Any], group_metadata: ConsumerGroupMetadata | str
    ) -> None:
        op = self.machine.send_offsets(
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
        op = self.machine.commit(anyio.current_time())
        accumulator = self.loop.accumulator
        accumulator.flush()
        self.loop.wake()
        try:
            await self._outcome(op, TxnCall.COMMIT)
        finally:
            accumulator.flush_done()

    async def abort(self) -> None:
        op = self.machine.abort(anyio.current_time())
        self.loop.fail_queued(KrafkaError("transaction aborted"))
        await self._outcome(op, TxnCall.ABORT)

    def check_usable(self) -> None:
        """Raise the fatal error (fenced, ...) that ended this producer's transactions."""
        if self.fatal is not None:
            raise self.fatal

    async def _outcome(self, op: int, call: TxnCall) -> None:
        """Wait for `op`; when `max_block` runs out first, the machine keeps it pending."""
        try:
            await self.driver.outcome(op, self.max_block)
        except OutcomeTimeout as exc:
            self.machine.abandon(op)
            name = call.value
            raise KafkaTimeoutError(
                f"{name}() did not finish within max_block={self.max_block}s and its outcome "
                f"is unknown (the coordinator may still carry it out): call {name}() again to "
                "wait for it; other transactional calls are refused until then"
            ) from exc

    def _on_event(self, event: Any) -> None:
        """What the machine tells the producer (in the driver's task)."""
        if isinstance(event, ProducerIdAssigned | PartitionsAdded):
            self.loop.wake()
        elif isinstance(event, TransactionAbortable):
            self.loop.fail_queued(event.error)
        elif isinstance(event, ProducerFatal):
            self.fatal = event.error
            self.loop.stop(event.error)
