"""The producer's sending decisions: which batches go to which broker now, and what a response
means. A part of `krafka.sansio.producer.engine.ProducerEngine`, which alone drives it (a
driver speaks to the engine, through the `krafka.sansio.actions` contract).

`drain(now, leader)` takes sendable batches from the accumulator and groups them into one
Produce request per leader (one batch per partition, at most `max_request_size` bytes, at most
`max_in_flight_requests_per_connection` requests per broker, at most 5 batches in flight per
partition when idempotent); it returns those plans and the topics whose metadata should be
refreshed (no leader known, stale-leader errors since the last drain). The engine sends each
plan and reports `on_response` or `on_failure`; the sender then completes batches,
re-enqueues retriable ones in order after an exponential backoff bounded by `delivery_timeout`,
splits batches the broker found too large, and asks for a new producer epoch when sequences
broke or a sent batch failed (the transaction machine sends InitProducerId; queued batches are
re-stamped with the new identity when they are drained). Every batch that finished (delivered,
failed, or split into halves) is added to `finished`, which the engine turns into delivery events.

A partition's batches are written in send order whatever fails, idempotent or not (Java keeps
this with idempotence, `shouldStopDrainBatchesForPartition`): a retried batch goes back ahead
of later ones and is resent alone, once nothing else of its partition is in flight; batches
after it wait until it is acknowledged; and a partition whose leader moved sends nothing to the
new leader while batches are still out at the old one (an earlier batch refused there would
otherwise be retried behind later ones that got through). An idempotent producer also sends a
partition's first batch under a producer id and epoch alone: a broker that holds no state for
the producer there accepts any first sequence, so batches pipelined behind a refused first one
would be written ahead of it (and its retry refused as out of order).
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Final

from krafka.errors import (
    DuplicateSequenceNumberError,
    InvalidProducerEpochError,
    KafkaStorageError,
    KafkaTimeoutError,
    KrafkaError,
    MessageTooLargeError,
    OutOfOrderSequenceNumberError,
    ProducerFencedError,
    RecordListTooLargeError,
    UnknownProducerIdError,
    error_for_code,
)
from krafka.protocol.error_codes import ErrorCode
from krafka.sansio.backoff import BackoffPolicy
from krafka.sansio.codes import STALE_METADATA_CODES
from krafka.sansio.producer.accumulator import RecordAccumulator, TopicPartition
from krafka.sansio.producer.batch import BatchState, ProducerBatch
from krafka.sansio.producer.config import Acks, ProducerConfig
from krafka.sansio.producer.idempotence import IdempotenceState
from krafka.sansio.producer.metrics import ProducerMetrics
from krafka.sansio.producer.transaction import TransactionManager

#: The leader's node id of a partition (None: unknown), a pure lookup.
LeaderLookup = Callable[[str, int], "int | None"]

_MAX_IN_FLIGHT_PER_PARTITION: Final = 5
_STALE_METADATA: Final = STALE_METADATA_CODES | {KafkaStorageError.code}
_TOO_LARGE: Final = frozenset({MessageTooLargeError.code, RecordListTooLargeError.code})
_FENCED: Final = frozenset({ProducerFencedError.code, InvalidProducerEpochError.code})
_DUPLICATE: Final = DuplicateSequenceNumberError.code
_OUT_OF_ORDER: Final = OutOfOrderSequenceNumberError.code
_UNKNOWN_PRODUCER: Final = UnknownProducerIdError.code
_JITTER: Final = 0.2


@dataclass(frozen=True, slots=True)
class PartitionResult:
    """One partition's part of a Produce response."""

    error_code: int = 0
    base_offset: int = -1
    log_append_time: int = -1
    error_message: str | None = None


@dataclass(slots=True, eq=False)
class ProduceRequestPlan:
    """One Produce request to send to broker `node_id`: one encoded batch per partition."""

    request_id: int
    node_id: int
    batches: dict[TopicPartition, ProducerBatch] = field(default_factory=dict)
    size: int = 0
    sent_at: float = 0.0


@dataclass(frozen=True, slots=True)
class Drained:
    """What `Sender.drain` decided: requests to send, topics whose metadata to refresh."""

    plans: list[ProduceRequestPlan]
    stale_topics: frozenset[str] = frozenset()


def _refusal(batch: ProducerBatch, code: int, message: str | None) -> str:
    """A failed partition's message names the partition (an authorization error its topic)."""
    try:
        name = ErrorCode(code).name
    except ValueError:
        name = f"error {code}"
    detail = f" ({message})" if message else ""
    return f"produce to {batch.topic}-{batch.partition} failed: {name}{detail}"


class Sender:
    """Turns accumulated batches into Produce requests and responses into outcomes."""

    def __init__(
        self,
        config: ProducerConfig,
        accumulator: RecordAccumulator,
        metrics: ProducerMetrics | None = None,
        idempotence: IdempotenceState | None = None,
        transaction: TransactionManager | None = None,
        rand: Callable[[], float] = random.random,
    ) -> None:
        self.config = config
        self.accumulator = accumulator
        self.metrics = metrics or ProducerMetrics()
        self.idempotence = idempotence
        self.transaction = transaction
        self._stale: set[str] = set()
        self._rand = rand
        self._retry_policy = BackoffPolicy(
            initial=config.retry_backoff,
            maximum=max(config.retry_backoff, config.retry_backoff_max),
            jitter=_JITTER,
            max_retries=None,
        )
        self._identity = idempotence.identity if idempotence is not None else None
        self._ids = itertools.count(1)
        self._node_in_flight: dict[int, int] = {}
        self._tp_in_flight: dict[TopicPartition, list[ProducerBatch]] = {}
        #: The broker a partition's batches in flight went to (one at a time).
        self._tp_node: dict[TopicPartition, int] = {}
        #: Partitions with a batch acknowledged under the current producer id and epoch.
        self._confirmed: set[TopicPartition] = set()
        self._in_flight = 0
        #: Batches delivered, failed or split since the engine last took them.
        self.finished: list[ProducerBatch] = []

    # -- sending --------------------------------------------------------------------------------

    @property
    def in_flight(self) -> int:
        """Produce requests sent and not yet answered."""
        return self._in_flight

    def in_flight_batches(self) -> list[ProducerBatch]:
        """Batches sent and not yet answered."""
        return [batch for batches in self._tp_in_flight.values() for batch in batches]

    def has_unsent(self) -> bool:
        """Records are queued that no Produce request carried yet."""
        return not self.accumulator.empty

    def drain(self, now: float, leader: LeaderLookup) -> Drained:
        """Produce requests to send now (at most one per broker per call), and the topics
        whose metadata should be refreshed."""
        self.metrics.now = now
        stale, self._stale = self._stale, set()
        idem = self.idempotence
        txn = self.transaction
        if (txn is not None and txn.blocks_sending) or (idem is not None and not idem.ready):
            return Drained([], frozenset(stale))
        if idem is not None and idem.identity is not self._identity:
            self._restamp(idem)
        plans: dict[int, ProduceRequestPlan] = {}
        limit = self.config.max_in_flight_requests_per_connection
        for tp in list(self.accumulator.sendable(now)):
            node = leader(tp[0], tp[1])
            if node is None or node < 0:
                stale.add(tp[0])
                continue
            plan = plans.get(node)
            if plan is None:
                if self._node_in_flight.get(node, 0) >= limit:
                    continue
                plan = plans[node] = ProduceRequestPlan(next(self._ids), node)
            if self._may_take(tp, plan):
                self._take(tp, plan)
        sent = [self._dispatch(plan, now) for plan in plans.values() if plan.batches]
        return Drained(sent, frozenset(stale))

    def _restamp(self, idem: IdempotenceState) -> None:
        """A new producer id or epoch: queued batches get new sequences when drained."""
        self._identity = idem.identity
        self._confirmed.clear()
        for batch in self.accumulator.batches():
            if batch.base_sequence >= 0:
                batch.reset_identity()

    def _may_take(self, tp: TopicPartition, plan: ProduceRequestPlan) -> bool:
        in_flight = self._tp_in_flight.get(tp, ())
        if in_flight and not self._in_order(tp, in_flight, plan.node_id):
            return False
        if in_flight and self._gathers(tp):
            return False
        if self.idempotence is not None and len(in_flight) >= _MAX_IN_FLIGHT_PER_PARTITION:
            return False
        txn = self.transaction
        if txn is not None and not txn.may_send_to(tp):
            return False
        return not plan.batches or plan.size < self.config.max_request_size

    def _gathers(self, tp: TopicPartition) -> bool:
        """With no linger (and `config.gather`), a batch that is not full waits while its
        partition has one in flight, and takes what arrives meanwhile."""
        if not self.config.gather or self.config.linger or self.accumulator.flushing:
            return False
        return self.accumulator.head(tp).state is BatchState.OPEN

    def _in_order(self, tp: TopicPartition, in_flight: list[ProducerBatch], node: int) -> bool:
        """May the head batch of `tp` go to `node` now, with `in_flight` still out?"""
        if self._tp_node.get(tp) != node:
            return False  # the leader moved: the old one may still write or refuse batches
        if self.idempotence is not None and tp not in self._confirmed:
            return False  # the broker may not know this producer here yet: first batch alone
        if self.accumulator.head(tp).attempts:
            return False  # a retry goes alone
        return not any(batch.attempts > 1 for batch in in_flight)  # behind a retry: wait

    def _take(self, tp: TopicPartition, plan: ProduceRequestPlan) -> None:
        batch = self.accumulator.pop(tp)
        if self.idempotence is not None and batch.base_sequence < 0:
            self.idempotence.stamp(batch)
            batch.transactional = self.transaction is not None
        payload = batch.encode(self.config.compression, self.config.compression_level)
        plan.batches[tp] = batch
        plan.size += len(payload)

    def _dispatch(self, plan: ProduceRequestPlan, now: float) -> ProduceRequestPlan:
        plan.sent_at = now
        self._in_flight += 1
        self._node_in_flight[plan.node_id] = self._node_in_flight.get(plan.node_id, 0) + 1
        for tp, batch in plan.batches.items():
            batch.state = BatchState.IN_FLIGHT
            batch.attempts += 1
            if batch.attempts > 1:
                self.metrics.batch_retried(batch.count)
            else:
                self.metrics.batch_drained(now - batch.created)
            self._tp_in_flight.setdefault(tp, []).append(batch)
            self._tp_node[tp] = plan.node_id
        self.metrics.request_sent()
        return plan

    # -- outcomes -------------------------------------------------------------------------------

    def on_response(
        self,
        plan: ProduceRequestPlan,
        results: Mapping[TopicPartition, PartitionResult],
        now: float,
        throttle_time: float = 0.0,
    ) -> None:
        """The broker answered `plan` (for acks=0, pass an empty mapping: all succeeded);
        `throttle_time` is the response's KIP-219 throttle, in seconds, for the metrics."""
        self._landed(plan, now)
        self.metrics.throttled(throttle_time)
        acks0 = self.config.acks is Acks.NONE
        for tp, batch in plan.batches.items():
            result = results.get(tp)
            if result is None:
                if acks0:
                    self._complete(batch, PartitionResult())
                else:
                    self._retry(batch, now, KrafkaError(f"no result for {tp} in response"))
            else:
                self._outcome(batch, result, now)

    def on_failure(self, plan: ProduceRequestPlan, error: KrafkaError, now: float) -> None:
        """`plan` got no response (connection lost, timed out, version refused)."""
        self._landed(plan, now)
        for tp, batch in plan.batches.items():
            if error.retriable:
                self._stale.add(tp[0])
                self._retry(batch, now, error)
            else:
                self._give_up(batch, error)

    def _landed(self, plan: ProduceRequestPlan, now: float) -> None:
        self.metrics.now = now
        self._in_flight -= 1
        self._node_in_flight[plan.node_id] -= 1
        self.metrics.request_done(now - plan.sent_at)
        for tp, batch in plan.batches.items():
            pending = self._tp_in_flight.get(tp)
            if pending is not None and batch in pending:
                pending.remove(batch)
                if not pending:
                    del self._tp_in_flight[tp]
                    self._tp_node.pop(tp, None)

    def _outcome(self, batch: ProducerBatch, result: PartitionResult, now: float) -> None:
        code = result.error_code
        if code == 0:
            self._complete(batch, result)
        elif code == _DUPLICATE:
            self.metrics.duplicate_acknowledged(batch.count)
            self._complete(batch, PartitionResult())
        elif code in _TOO_LARGE and batch.count > 1:
            self._split(batch, now)
        elif code == _OUT_OF_ORDER:
            self._out_of_order(batch, result, now)
        elif code == _UNKNOWN_PRODUCER and self.idempotence is not None:
            self.idempotence.request_bump()
            batch.reset_identity()
            self._retry(batch, now, error_for_code(code, result.error_message))
        elif code in _FENCED:
            self._fenced(batch, error_for_code(code, result.error_message))
        else:
            error = error_for_code(code, _refusal(batch, code, result.error_message))
            if code in _STALE_METADATA:
                self._stale.add(batch.topic)
            if error.retriable:
                self._retry(batch, now, error)
            else:
                self._give_up(batch, error)

    def _out_of_order(self, batch: ProducerBatch, result: PartitionResult, now: float) -> None:
        """Innocent (an earlier batch is pending) or a gap in the partition's sequences: an
        idempotent producer retries under a new epoch, where sequence 0 is accepted (Java's
        `canRetry`); a transactional one fails it and aborts."""
        error = error_for_code(_OUT_OF_ORDER, result.error_message)
        if self._earlier_unacked(batch):
            self._retry(batch, now, error)
        elif self.idempotence is not None and self.transaction is None:
            self.idempotence.request_bump()
            batch.reset_identity()
            self._retry(batch, now, error)
        else:
            self._fail(batch, OutOfOrderSequenceNumberError(str(error)))

    def _earlier_unacked(self, batch: ProducerBatch) -> bool:
        """An earlier batch of the same partition failed or is pending: this one is innocent."""
        for other in self._tp_in_flight.get(batch.tp, ()):
            if other.order < batch.order:
                return True
        return any(
            b.state is BatchState.RETRY and b.order < batch.order and b.tp == batch.tp
            for b in self.accumulator.batches()
        )

    def _fenced(self, batch: ProducerBatch, error: KrafkaError) -> None:
        fenced = ProducerFencedError(str(error))
        if self.transaction is not None:
            self.transaction.fenced(fenced)
        elif self.idempotence is not None:
            self.idempotence.request_bump()
        self._fail(batch, fenced)

    def _complete(self, batch: ProducerBatch, result: PartitionResult) -> None:
        self.accumulator.release(batch)
        if batch.base_sequence >= 0:
            self._confirmed.add(batch.tp)
        payload = batch.payload
        if payload is None:
            self.metrics.batch_delivered(batch.count, batch.size)
        else:
            self.metrics.batch_delivered(batch.count, len(payload), batch.size)
        batch.complete(result.base_offset, result.log_append_time)
        self.finished.append(batch)

    def _give_up(self, batch: ProducerBatch, error: KrafkaError) -> None:
        """Fail a batch that may have been sent: the broker may or may not have written it, so
        the sequences after it cannot be trusted and an idempotent producer starts a new epoch
        (Java's `handleFailedBatch`), else the partition's next batches would be refused as out
        of order. A batch of an earlier producer id or epoch says nothing of the current ones."""
        idem = self.idempotence
        if idem is not None and self.transaction is None and idem.stamped_now(batch):
            idem.request_bump()
        self._fail(batch, error)

    def _fail(self, batch: ProducerBatch, error: KrafkaError) -> None:
        self.accumulator.release(batch)
        self.metrics.batch_failed(batch.count)
        if self.transaction is not None:
            self.transaction.record_failed(error)
        batch.fail(error)
        self.finished.append(batch)

    def _retry(self, batch: ProducerBatch, now: float, error: KrafkaError) -> None:
        delay = self._backoff(batch.attempts)
        deadline = batch.created + self.config.delivery_timeout
        if batch.attempts > self.config.retries:
            self._give_up(batch, error)
        elif now + delay >= deadline:
            timeout = KafkaTimeoutError(
                f"{batch.topic}-{batch.partition}: not delivered within delivery_timeout="
                f"{self.config.delivery_timeout}s ({batch.attempts} attempts, last error: {error})"
            )
            timeout.__cause__ = error
            self._give_up(batch, timeout)
        else:
            self.accumulator.reenqueue(batch, now + delay)

    def _backoff(self, attempts: int) -> float:
        return self._retry_policy.delay(max(1, attempts), self._rand)

    def _split(self, batch: ProducerBatch, now: float) -> None:
        first, second = batch.split()
        self.finished.append(batch)  # its waiters follow their records into the halves
        self.accumulator.reenqueue(first, now)
        self.accumulator.reenqueue(second, now)

    # -- time -----------------------------------------------------------------------------------

    def expire(self, now: float) -> None:
        """Fail queued batches that outlived `delivery_timeout`."""
        self.metrics.now = now
        for batch in self.accumulator.expire(now):
            self._give_up(
                batch,
                KafkaTimeoutError(
                    f"{batch.topic}-{batch.partition}: {batch.count} records expired after "
                    f"delivery_timeout={self.config.delivery_timeout}s in the accumulator"
                ),
            )

    def fail_all(self, error: KrafkaError) -> None:
        """Fail everything still queued (abort, fatal error, close without flush)."""
        for batch in self.accumulator.drop_all():
            self._fail(batch, error)

    def abandon(self, error: KrafkaError) -> None:
        """Fail everything, queued and in flight: the driver will never report on it again."""
        self.fail_all(error)
        for batches in self._tp_in_flight.values():
            for batch in batches:
                if not batch.done:
                    self._fail(batch, error)
        self._tp_in_flight.clear()
        self._tp_node.clear()
        self._node_in_flight.clear()
        self._in_flight = 0
