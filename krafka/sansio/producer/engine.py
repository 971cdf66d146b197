"""The producer as one sans-IO engine: accumulator, sender, idempotence and transactions behind
the `krafka.sansio.actions.Machine` contract.

    engine = ProducerEngine(ProducerConfig(linger=0.005), cluster_metadata)
    op = engine.initialize(now)                         # the producer id (idempotence)
    handle = engine.append("orders", None, None, b"k", b"v", None, now, wall_ms)
    for action in engine.next_actions(now):             # SendRequests and events
        ...                                             # send; engine.on_response(sent, r, now)
    sleep_until(engine.next_deadline())                 # None: until an input arrives

What goes out: Produce requests to `Broker(leader)` (at most one per broker per `next_actions`,
so a driver that starts them in order keeps each broker's requests in order), InitProducerId
to any broker or to the transaction coordinator, AddPartitionsToTxn / AddOffsetsToTxn / EndTxn
to `Coordinator(transactional_id, TRANSACTION)`, TxnOffsetCommit to the group's coordinator,
and the events of `krafka.sansio.producer.events` (deliveries, metadata wanted, outcomes).

What comes in, each with `now` (seconds, the driver's one monotonic clock): answers and
failures of those requests, `metadata_updated(now)` after a `RefreshMetadata` was served, and
the application's calls: `append`, `flush`, the transactional calls, `close`. The cluster's
shape is read from the metadata view given at construction (pure lookups: partition counts and
leaders); wall-clock timestamps are inputs too (`append`'s `now_ms`), so nothing here reads a
clock.

`next_deadline()` is honest: the next linger, retry backoff or delivery timeout, and None while
whatever is sendable waits for an input (no producer id yet, requests in flight up to the caps,
a partition without a leader while a refresh was asked for, a partition not yet in the
transaction). After any input the driver calls `next_actions(now)`; after `append` it only
needs to when `due` is set (the record opened or sealed a batch).

Appending has one path with a clock-free first step: `append_open` puts a record without
headers into its partition's open batch (choosing the partition when none is given); when it
cannot, `append` (the checks, waits as `AppendBlocked`, new batches) takes the partition it
chose. `append` calls it itself, so calling `append` alone is always right; the compiled twin
of `append_open` (`_append.pyx`) is bound in its place when built.
"""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum, IntEnum
from typing import Any, Final, Protocol

from krafka._twins import implementations, selected
from krafka.errors import InvalidStateError, KrafkaError, error_for_code
from krafka.sansio.actions import (
    Broker,
    Completed,
    Failed,
    RefreshMetadata,
    SendRequest,
    next_op,
)
from krafka.sansio.codes import UNUSABLE_TOPIC_CODES
from krafka.sansio.metadata import PartitionInfo
from krafka.sansio.partitioner import DefaultPartitioner, Partitioner, sticky
from krafka.sansio.producer import wire
from krafka.sansio.producer.accumulator import OPENED, SEALED, RecordAccumulator
from krafka.sansio.producer.batch import ProducerBatch
from krafka.sansio.producer.config import ProducerConfig
from krafka.sansio.producer.events import BatchDone, TopicsInUse
from krafka.sansio.producer.idempotence import IdempotenceState
from krafka.sansio.producer.metrics import ProducerMetrics, ProducerMetricsSnapshot
from krafka.sansio.producer.record import (
    Header,
    RecordHandle,
    check_headers,
    check_record,
    estimate_size,
)
from krafka.sansio.producer.sender import ProduceRequestPlan, Sender
from krafka.sansio.producer.transaction import TransactionManager
from krafka.sansio.producer.txn_events import ProducerFatal, TransactionAbortable
from krafka.sansio.producer.txn_state import TxnState
from krafka.sansio.topic_name import check_topic
from krafka.structs import ConsumerGroupMetadata, OffsetAndMetadata, TopicPartition

#: `append_many`'s answer when it stopped after a record that sealed its batch.
SEALED_RUN: Final = -1
#: Topics written to are reported (`TopicsInUse`) at most this often, in seconds.
_NOTE_USE_EVERY: Final = 1.0
#: The compiled `append_open` (an `OpenAppender` class), or None for the Python method.
OPEN_APPENDER: Any = selected(
    implementations(None, "krafka.sansio.producer._append", "OpenAppender")
)


class MetadataView(Protocol):
    """What the engine reads of the cluster: pure lookups, no side effects
    (`krafka.sansio.metadata.ClusterMetadata` is one)."""

    @property
    def partition_counts(self) -> Mapping[str, int]:
        """Partitions per known topic (one live mapping: the compiled append keeps it)."""
        ...

    def partition(self, topic: str, partition: int) -> PartitionInfo | None:
        """A partition's leader (and replicas), None while unknown."""
        ...

    @property
    def topic_errors(self) -> Mapping[str, int]:
        """The topic-level error of the last answer about a topic that left it unusable."""
        ...


class Due(IntEnum):
    """What an `append` left for `next_actions` to do (`ProducerEngine.due`)."""

    NOTHING = 0
    #: A batch opened (its linger starts) or the application asked for something.
    WAKE = OPENED
    #: A batch is full: it may go now (let it reach the wire before filling the next one).
    SEALED = SEALED


class AppendWait(Enum):
    """Why `append` refused a record for now."""

    #: The topic's partitions are not known: a `RefreshMetadata` asks for them.
    METADATA = "metadata"
    #: `buffer_memory` is full: room comes back as batches finish (`BatchDone`).
    BUFFER = "buffer"


class AppendBlocked(KrafkaError):
    """`append` cannot take the record until an input arrives (`reason`); nothing changed, the
    same call may be made again then. A driver waits for it at most its `max_block`."""

    retriable = True

    def __init__(self, reason: AppendWait, topic: str, size: int) -> None:
        super().__init__(f"{topic!r}: waiting for {reason.value} ({size} bytes)")
        self.reason = reason
        self.topic = topic
        self.size = size


@dataclass(slots=True, eq=False)
class _Flush:
    """A `flush` operation: done once every batch it waits for is settled."""

    op: int
    pending: deque[ProducerBatch] = field(default_factory=deque)


class ProducerEngine:
    """One producer's sans-IO core (see the module doc). `handle_type(batch, index)` makes the
    handle `append` returns (drivers pass an awaitable one); `rand` is the jitter source of
    every backoff (tests pass a constant)."""

    def __init__(
        self,
        config: ProducerConfig,
        metadata: MetadataView,
        *,
        partitioner: Partitioner | None = None,
        handle_type: Callable[[ProducerBatch, int], RecordHandle] = RecordHandle,
        rand: Callable[[], float] = random.random,
    ) -> None:
        self.config = config
        self.metadata = metadata
        self.partitioner: Partitioner = partitioner or DefaultPartitioner()
        self.metrics = ProducerMetrics()
        self.accumulator = RecordAccumulator(config, on_seal=self._sealed)
        self.accumulator.handle_type = handle_type
        idempotence = IdempotenceState() if config.idempotent else None
        self.sender = Sender(config, self.accumulator, self.metrics, idempotence, rand=rand)
        #: The producer-id and transaction machine (None without idempotence).
        self.transactions: TransactionManager | None = None
        if idempotence is not None:
            self.transactions = TransactionManager(config, idempotence, self.sender, rand=rand)
            if config.transactional_id is not None:
                self.sender.transaction = self.transactions
        #: Set by `append` (and by a batch sealing): `next_actions` has work; it resets it.
        self.due = Due.NOTHING
        #: Why the engine stopped (fenced, closed): raised by `append`, failed flushes.
        self.error: KrafkaError | None = None
        self.closed = False
        self._counts = metadata.partition_counts
        self._plans: dict[SendRequest[Any], ProduceRequestPlan] = {}
        self._events: list[Any] = []
        self._flushes: list[_Flush] = []
        self._stale: set[str] = set()
        self._refreshing = False
        self._used: set[str] = set()
        self._noted_at = float("-inf")
        self._now = float("-inf")
        #: `append_open` may append (no transaction, not stopped); the compiled one keeps a copy.
        self.open_appends = config.transactional_id is None
        self._appender: Any = None
        if OPEN_APPENDER is not None:
            self._appender = OPEN_APPENDER(self)
            self.append_open = self._appender.append_open  # type: ignore[method-assign]
            self.append_many = self._appender.append_many  # type: ignore[method-assign]
            self.check_many = self._appender.check_many  # type: ignore[method-assign]

    # -- appending ------------------------------------------------------------------------------

    def append_open(
        self,
        topic: str,
        partition: int | None,
        timestamp: int | None,
        key: bytes | None,
        value: bytes | None,
    ) -> RecordHandle | int | None:
        """`append`'s clock-free first step for a record without headers: its handle if it
        joined its partition's open batch; otherwise the partition to give `append` (the one
        chosen here, or `partition`), or None when no partition could be chosen (the topic's
        partitions are unknown). Sets `due` when the record sealed the batch. A sticky
        partitioner's choice whose open batch has no room is sealed and the partitioner asked
        again (KIP-480: the record opens the next sticky partition's batch)."""
        if not self.open_appends:
            return partition
        accumulator = self.accumulator
        if partition is not None:
            handle, _ = accumulator.append_open(topic, partition, key, value, timestamp)
            return partition if handle is None else handle
        count = self._counts.get(topic)
        if count is None:
            return None
        partition = self.partitioner.partition(topic, key, count)
        handle, _ = accumulator.append_open(topic, partition, key, value, timestamp)
        if handle is None and sticky(self.partitioner) and self.seal_open(topic, partition):
            partition = self.partitioner.partition(topic, key, count)  # where it moved on to
            handle, _ = accumulator.append_open(topic, partition, key, value, timestamp)
        return partition if handle is None else handle

    def append_many(
        self,
        topic: str,
        partition: int | list[int | None] | None,
        keys: list[bytes | None] | None,
        values: list[bytes | None],
        timestamps: list[int | None] | None,
        start: int,
        batches: dict[ProducerBatch, None],
    ) -> tuple[int, int | None]:
        """`append_open` over columns (lists) of records without headers, from record `start`
        on, with no handle per record: each batch a record joined is noted in `batches`.
        `partition` is one for all, one per record, or None (chosen per record).

        Returns the index of the first record not appended and the partition chosen for it
        (None: none could be) for `append` to take, or `SEALED_RUN` when it stopped after a
        record that sealed its batch, or sealed a sticky partition's full batch before the
        record that did not fit (`due` is SEALED: the batch can go before the next one fills;
        call again from the index returned). Records are assumed checked (`check_many`)."""
        accumulator, last = self.accumulator, None
        each = partition is not None and not isinstance(partition, int)
        for i in range(start, len(values)):
            key = None if keys is None else keys[i]
            wanted = partition[i] if each else partition  # type: ignore[index]
            if not self.open_appends:
                return i, wanted  # type: ignore[return-value]
            chosen = wanted is None
            if wanted is None:
                count = self._counts.get(topic)
                if count is None:
                    return i, None
                wanted = self.partitioner.partition(topic, key, count)
            stamp = None if timestamps is None else timestamps[i]
            batch, sealed = accumulator.add_open(topic, wanted, key, values[i], stamp)  # type: ignore[arg-type]
            if batch is None:
                if chosen and sticky(self.partitioner) and self.seal_open(topic, wanted):  # type: ignore[arg-type]
                    return i, SEALED_RUN  # as `append_open`: asked again once it went
                return i, wanted  # type: ignore[return-value]
            if batch is not last:
                batches[batch] = None
                last = batch
            if sealed:
                return i + 1, SEALED_RUN
        return len(values), None

    def check_many(
        self,
        keys: list[bytes | None] | None,
        values: list[bytes | None],
        timestamps: list[int | None] | None,
    ) -> None:
        """`append`'s checks of each record (types, timestamp, size against
        `max_request_size` and `buffer_memory`), made for all of them before any is appended;
        the error notes the record's index."""
        for i, value in enumerate(values):
            key = None if keys is None else keys[i]
            try:
                check_record(key, value, None if timestamps is None else timestamps[i])
                self.accumulator.check_record_size(estimate_size(key, value, ()))
            except Exception as exc:
                exc.add_note(f"send_many: record {i}")
                raise

    def append(
        self,
        topic: str,
        partition: int | None,
        timestamp: int | None,
        key: bytes | None,
        value: bytes | None,
        headers: Sequence[Header] | None,
        now: float,
        now_ms: int,
    ) -> RecordHandle:
        """Append one record; returns its handle (`done` once delivered or failed).

        `partition` None: chosen by the partitioner (murmur2 of the key, sticky for null keys).
        `now_ms` is the wall clock in ms: a batch opened now stamps records without a
        `timestamp` with it. Refuses what the API or Kafka would (an illegal topic name, bad
        headers, too large a record, a send outside a transaction, a partition out of range)
        by raising, before anything changes; raises `AppendBlocked` while the topic's
        partitions are unknown or the buffer is full, and `error` once the engine stopped.
        """
        if self.error is not None:
            raise self.error
        check_topic(topic)
        check_record(key, value, timestamp)
        hdrs = check_headers(headers) if headers else ()
        size = estimate_size(key, value, hdrs)
        self.accumulator.check_record_size(size)
        if self.transactions is not None:
            self.transactions.check_can_send()
        count = self._counts.get(topic)
        if count is None:
            self._refuse_unusable(topic)
            self._stale.add(topic)
            self.due = max(self.due, Due.WAKE)
            raise AppendBlocked(AppendWait.METADATA, topic, size)
        if partition is not None and not 0 <= partition < count:
            raise ValueError(
                f"partition {partition} of topic {topic!r} does not exist: it has {count} "
                f"partitions (0-{count - 1})"
            )
        if not hdrs:
            found = self.append_open(topic, partition, timestamp, key, value)
            if found is not None and not isinstance(found, int):
                return found
            partition = found
        if not self.accumulator.has_room(size):
            raise AppendBlocked(AppendWait.BUFFER, topic, size)
        if partition is None:
            partition = self.partitioner.partition(topic, key, count)
        result, handle = self.accumulator.append(
            topic, partition, timestamp, key, value, hdrs, size, now, now_ms
        )
        if result > self.due:
            self.due = Due(result)
        return handle

    def seal_open(self, topic: str, partition: int) -> bool:
        """Close the open batch of `topic`/`partition`, if any (a record did not fit in it):
        it may go now (`due` is SEALED). A driver whose application shares the loop seals,
        lets the batch reach the wire, then appends the record, so the next batch's linger
        starts when the application is back to filling it, not before it yields."""
        batch = self.accumulator.open_batches.get((topic, partition))
        if batch is None or not self.open_appends:
            return False
        self.accumulator.seal(batch)
        return True

    def _refuse_unusable(self, topic: str) -> None:
        """The last answer about `topic` said it cannot be used (invalid, not authorized): the
        record fails now (Java's `maybeThrowExceptionForTopic`), dooming the transaction it was
        meant for, and a refresh is asked for, so a topic that became usable is seen by a later
        record."""
        code = self.metadata.topic_errors.get(topic)
        if code is not None and code in UNUSABLE_TOPIC_CODES:
            error = error_for_code(code, f"topic {topic!r}")
            self._stale.add(topic)
            self.refuse_record(error)
            raise error

    def metrics_snapshot(self, now: float | None) -> ProducerMetricsSnapshot:
        """The metrics at `now` (None: the last time the sender saw), with the buffer's total
        and available bytes."""
        accumulator = self.accumulator
        return self.metrics.snapshot(now, accumulator.buffer_memory, accumulator.used())

    def has_room(self, size: int) -> bool:
        """Would `size` more bytes fit in `buffer_memory` now (see `AppendBlocked`)?"""
        return self.accumulator.has_room(size)

    def partition_count(self, topic: str) -> int | None:
        """The number of partitions of `topic` (None: not known yet)."""
        return self._counts.get(topic)

    def refuse_record(self, error: KrafkaError) -> None:
        """A record never reached `append` (its topic's metadata failed with `error`): the
        transaction it was meant for can no longer commit (as in Java: it would be partial)."""
        if self.transactions is not None:
            self.transactions.record_failed(error)
        self.due = max(self.due, Due.WAKE)

    def flush(self, now: float) -> int:
        """Send every record appended so far at once (linger or not); `Completed(op)` once they
        are all delivered or failed (`Failed(op, error)` if the engine stops first)."""
        op = next_op()
        if self.error is not None:
            self._events.append(Failed(op, self.error))
        else:
            pending = deque([*self.accumulator.batches(), *self.sender.in_flight_batches()])
            self._flushes.append(_Flush(op, pending))
            self.accumulator.flushing = True
        self.due = max(self.due, Due.WAKE)
        return op

    def abandon(self, op: int) -> None:
        """The application stopped waiting for `op` (a flush, a transactional call)."""
        flushes = [f for f in self._flushes if f.op != op]
        if len(flushes) != len(self._flushes):
            self._flushes = flushes
        elif self.transactions is not None:
            self.transactions.abandon(op)

    def metadata_updated(self, now: float) -> None:
        """The refresh asked for by `RefreshMetadata` finished (or failed): look again."""
        self._refreshing = False
        self.due = max(self.due, Due.WAKE)

    def close(self, error: KrafkaError) -> None:
        """Stop for good: every record queued or in flight fails with `error` (reported as
        `BatchDone` by the next `next_actions`), pending operations fail, nothing more is sent
        and `append` raises `error`."""
        if self.closed:
            return
        self.closed = True
        self._stop(error)
        self.sender.abandon(error)
        self._plans.clear()
        if self.transactions is not None:
            self.transactions.close(error)

    # -- transactions ---------------------------------------------------------------------------

    def initialize(self, now: float) -> int:
        """Get a producer id (and register the transactional id, fencing older producers)."""
        op = self._machine().initialize(now)
        self.due = max(self.due, Due.WAKE)
        return op

    def begin(self, now: float) -> None:
        """Start a transaction (the coordinator hears of it with its first partition)."""
        self._machine().begin(now)

    def send_offsets(
        self,
        offsets: Mapping[TopicPartition, OffsetAndMetadata],
        group: ConsumerGroupMetadata,
        now: float,
    ) -> int:
        """Commit consumer offsets within the transaction (AddOffsetsToTxn, TxnOffsetCommit)."""
        op = self._machine().send_offsets(offsets, group, now)
        self.due = max(self.due, Due.WAKE)
        return op

    def commit(self, now: float) -> int:
        """Commit: no `append` from now on; the queued records go at once, then EndTxn."""
        op = self._machine().commit(now)
        self.accumulator.flushing = True
        self.due = max(self.due, Due.WAKE)
        return op

    def abort(self, now: float) -> int:
        """Abort: records not sent yet fail; EndTxn(abort) once those in flight are settled."""
        op = self._machine().abort(now)
        self.sender.fail_all(KrafkaError("transaction aborted"))
        self.due = max(self.due, Due.WAKE)
        return op

    def _machine(self) -> TransactionManager:
        if self.transactions is None:
            raise InvalidStateError("not an idempotent or transactional producer")
        return self.transactions

    # -- the contract ---------------------------------------------------------------------------

    def next_actions(self, now: float) -> list[Any]:
        """Events (deliveries, outcomes, metadata wanted) then requests, in order."""
        self._now = now
        requests: list[Any] = []
        if not self.closed:
            self.sender.expire(now)
            self.accumulator.flushing = bool(self._flushes) or self._committing()
            self._drain(now, requests)
            if self.transactions is not None:
                self._ensure_producer_id(now)
                self._transaction_actions(now, requests)
            self._ask_metadata()
            self._note_use(now)
        self._report_deliveries()
        self._check_flushes()
        self.accumulator.flushing = bool(self._flushes) or self._committing()
        self.due = Due.NOTHING
        actions, self._events = self._events, []
        actions += requests
        return actions

    def next_deadline(self) -> float | None:
        """The next linger, backoff or delivery timeout; None while only an input can help."""
        if self.closed:
            return None
        deadline = self.accumulator.next_change(self._now)
        if self.transactions is not None:
            txn = self.transactions.next_deadline()
            if txn is not None and (deadline is None or txn < deadline):
                deadline = txn
        return deadline

    def on_response(self, sent: SendRequest[Any], response: Any, now: float) -> None:
        plan = self._plans.pop(sent, None)
        if plan is None:
            if self.transactions is not None and not self.closed:
                self.transactions.on_response(sent, response, now)
            return
        results = wire.produce_results(response)
        throttle = (response.throttle_time_ms or 0) / 1000 if response is not None else 0.0
        self.sender.on_response(plan, results, now, throttle)

    def on_failure(self, sent: SendRequest[Any], error: KrafkaError, now: float) -> None:
        plan = self._plans.pop(sent, None)
        if plan is None:
            if self.transactions is not None and not self.closed:
                self.transactions.on_failure(sent, error, now)
            return
        self.sender.on_failure(plan, error, now)

    # -- inspection -----------------------------------------------------------------------------

    @property
    def in_flight(self) -> int:
        """Produce requests sent and not yet answered."""
        return self.sender.in_flight

    def pending(self) -> list[ProducerBatch]:
        """Every batch not yet delivered or failed (queued, then in flight)."""
        return [*self.accumulator.batches(), *self.sender.in_flight_batches()]

    # -- internals ------------------------------------------------------------------------------

    def _drain(self, now: float, requests: list[Any]) -> None:
        drained = self.sender.drain(now, self._leader)
        config = self.config
        for plan in drained.plans:
            sent = SendRequest(
                Broker(plan.node_id),
                wire.produce_request(plan, config),
                timeout=config.request_timeout,
            )
            self._plans[sent] = plan
            requests.append(sent)
            for topic, _ in plan.batches:
                self._used.add(topic)
        self._stale |= drained.stale_topics

    def _leader(self, topic: str, partition: int) -> int | None:
        info = self.metadata.partition(topic, partition)
        return None if info is None or info.leader < 0 else info.leader

    def _transaction_actions(self, now: float, requests: list[Any]) -> None:
        assert self.transactions is not None
        for action in self.transactions.next_actions(now):
            if isinstance(action, SendRequest):
                requests.append(action)
            else:
                if isinstance(action, TransactionAbortable):
                    self.sender.fail_all(action.error)
                elif isinstance(action, ProducerFatal):
                    self._stop(action.error)
                self._events.append(action)

    def _ensure_producer_id(self, now: float) -> None:
        """An idempotent producer that has records asks for its producer id by itself (Java's
        sender does); a transactional one waits for `initialize` (`initTransactions`)."""
        txn = self.transactions
        assert txn is not None
        if (
            txn.state is TxnState.UNINITIALIZED
            and self.config.transactional_id is None
            and next(self.accumulator.batches(), None) is not None
        ):
            txn.initialize(now)

    def _committing(self) -> bool:
        txn = self.transactions
        return txn is not None and txn.state is TxnState.COMMITTING

    def _ask_metadata(self) -> None:
        if self._stale and not self._refreshing:
            self._refreshing = True
            self._events.append(RefreshMetadata(frozenset(self._stale)))
            self._stale = set()

    def _note_use(self, now: float) -> None:
        if self._used and now >= self._noted_at + _NOTE_USE_EVERY:
            self._events.append(TopicsInUse(frozenset(self._used)))
            self._used = set()
            self._noted_at = now

    def _report_deliveries(self) -> None:
        finished = self.sender.finished
        if finished:
            self.sender.finished = []
            self._events += [BatchDone(batch) for batch in finished]

    def _check_flushes(self) -> None:
        if not self._flushes:
            return
        waiting: list[_Flush] = []
        for flush in self._flushes:
            pending = flush.pending
            while pending and pending[0].settled:
                pending.popleft()
            if self.error is not None:
                self._events.append(Failed(flush.op, self.error))
            elif pending:
                waiting.append(flush)
            else:
                self._events.append(Completed(flush.op))
        self._flushes = waiting

    def _stop(self, error: KrafkaError) -> None:
        """No more appends (fenced, closed): queued records fail with `error`."""
        if self.error is None:
            self.error = error
        self.open_appends = False
        if self._appender is not None:
            self._appender.enabled = False
        self.sender.fail_all(error)

    def _sealed(self, topic: str, partition: int) -> None:
        """The accumulator sealed a batch: it may go now; a sticky partitioner moves on."""
        self.due = Due.SEALED
        self.partitioner.on_batch_sealed(topic, partition, self._counts.get(topic, 1))


__all__ = [
    "SEALED_RUN",
    "AppendBlocked",
    "AppendWait",
    "Due",
    "MetadataView",
    "ProducerEngine",
]
