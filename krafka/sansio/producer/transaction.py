"""Producer ids and transactions as one sans-IO machine (Java's TransactionManager).

It speaks the contract of `krafka.sansio.actions`: the application's calls (`initialize`,
`begin`, `send_offsets`, `commit`, `abort`) return operation ids and are answered by
`Completed` / `Failed` events; requests come out of `next_actions(now)`; answers go in through
`on_response` / `on_failure`. Requests to the coordinator go one at a time, in call order, as
in Java: InitProducerId, AddPartitionsToTxn (for partitions the sender wants to write to),
AddOffsetsToTxn + TxnOffsetCommit, EndTxn. EndTxn waits until every record of the transaction
is settled (`ProduceProgress`); `commit` enters COMMITTING at once, so no `send` can add a
record behind the marker.

Requests go to `Coordinator` targets (the transaction coordinator of the transactional id; the
group's coordinator for TxnOffsetCommit): the driver finds the coordinator and follows it when
it moves. Error handling lives here, once: a coordinator that moved (an answer saying so is
reported as `CoordinatorMoved`, for the driver to look it up again) or is loading, retriable
codes and lost or timed-out requests are retried with exponential backoff until a definite
answer (as in Java: a request that timed out may have been carried out, so giving up would
report an outcome nobody knows), fencing (PRODUCER_FENCED, INVALID_PRODUCER_EPOCH) is fatal,
other errors make the transaction abortable-only. The application's wait for `initialize`,
`commit` and `abort` is bounded by its driver; when it runs out first, the driver says so
(`abandon`) and the call stays pending (`txn_call`): the same call again waits for the same
outcome, any other transactional call is refused. A broker that refuses an epoch bump (Tansu)
is asked for a fresh producer id instead. An idempotent producer without a transactional id
uses the same machine for its InitProducerId (to any broker) and bumps.
"""

from __future__ import annotations

import logging
import random
from collections import deque
from collections.abc import Callable, Mapping
from typing import Any, Final

from krafka.errors import (
    InvalidStateError,
    KrafkaError,
    ProducerFencedError,
    UnsupportedVersionError,
    error_for_code,
)
from krafka.protocol.error_codes import ErrorCode
from krafka.sansio.actions import (
    AnyBroker,
    Completed,
    Coordinator,
    CoordinatorMoved,
    CoordinatorType,
    Failed,
    SendRequest,
    next_op,
)
from krafka.sansio.backoff import Backoff, BackoffPolicy
from krafka.sansio.codes import COORDINATOR_MOVED_CODES
from krafka.sansio.producer import txn_wire as wire
from krafka.sansio.producer.config import ProducerConfig
from krafka.sansio.producer.idempotence import IdempotenceState, ProducerIdentity
from krafka.sansio.producer.txn_call import PendingCall, TxnCall
from krafka.sansio.producer.txn_events import (
    PartitionsAdded,
    ProduceProgress,
    ProducerFatal,
    ProducerIdAssigned,
    TransactionAbortable,
)
from krafka.sansio.producer.txn_state import (
    ABORTABLE_ON_FAILURE,
    TRANSITIONS,
    TxnEvent,
    TxnState,
)
from krafka.sansio.producer.txn_step import StepKind, TxnStep
from krafka.sansio.transitions import transition
from krafka.structs import ConsumerGroupMetadata, OffsetAndMetadata, TopicPartition

_log = logging.getLogger("krafka.producer")

_FENCED: Final = frozenset({ErrorCode.PRODUCER_FENCED, ErrorCode.INVALID_PRODUCER_EPOCH})
#: AddPartitionsToTxn answers this for partitions it skipped because another one failed.
_NOT_ATTEMPTED: Final = ErrorCode.OPERATION_NOT_ATTEMPTED
_GROUP_FENCING: Final = frozenset(
    {ErrorCode.UNKNOWN_MEMBER_ID, ErrorCode.ILLEGAL_GENERATION, ErrorCode.FENCED_INSTANCE_ID}
)


class TransactionManager:
    """Producer id, epoch bumps and the transaction of one producer."""

    def __init__(
        self,
        config: ProducerConfig,
        idempotence: IdempotenceState,
        progress: ProduceProgress,
        *,
        rand: Callable[[], float] = random.random,
    ) -> None:
        self.transactional_id = config.transactional_id
        self.config = config
        self.idempotence = idempotence
        self.state = TxnState.UNINITIALIZED
        self.error: KrafkaError | None = None
        self.added: set[TopicPartition] = set()
        self.pending: set[TopicPartition] = set()
        self.offsets_added = False
        self._progress = progress
        self._rand = rand
        self._policy = BackoffPolicy(
            initial=config.retry_backoff,
            maximum=max(config.retry_backoff, config.retry_backoff_max),
            max_retries=None,
        )
        self._steps: deque[TxnStep] = deque()
        self._events: list[Any] = []
        self._now = float("-inf")
        self._bump_after_abort = False
        self._pending: PendingCall | None = None

    # -- the application's calls ----------------------------------------------------------------

    def initialize(self, now: float) -> int:
        """Get a producer id (registering the transactional id, fencing older producers)."""
        resumed = self._resume(TxnCall.INITIALIZE)
        if resumed is not None:
            return resumed
        op = next_op()
        if self.state is not TxnState.UNINITIALIZED:
            self._events.append(Completed(op))
            return op
        self._move(TxnEvent.INIT)
        self._steps.append(TxnStep(StepKind.INIT_PRODUCER_ID, op))
        self._pending = PendingCall(TxnCall.INITIALIZE, op)
        return op

    def begin(self, now: float) -> None:
        """Start a transaction (local: the coordinator hears of it with the first record)."""
        self._require_transactional()
        self._refuse_if_pending("begin_transaction")
        self._move(TxnEvent.BEGIN)

    def send_offsets(
        self,
        offsets: Mapping[TopicPartition, OffsetAndMetadata],
        group: ConsumerGroupMetadata,
        now: float,
    ) -> int:
        """Commit consumer offsets within the transaction (AddOffsetsToTxn, TxnOffsetCommit)."""
        self._refuse_if_pending("send_offsets_to_transaction")
        self.check_can_send()
        op = next_op()
        self._steps.append(TxnStep(StepKind.ADD_OFFSETS, group=group))
        self._steps.append(TxnStep(StepKind.TXN_OFFSET_COMMIT, op, offsets=offsets, group=group))
        return op

    def commit(self, now: float) -> int:
        """Commit: COMMITTING now, EndTxn once every record of the transaction is settled."""
        self._require_transactional()
        resumed = self._resume(TxnCall.COMMIT)
        if resumed is not None:
            return resumed
        if self.state is TxnState.ABORTABLE_ERROR:
            raise InvalidStateError(
                f"transaction {self.transactional_id!r} must be aborted: {self.error}"
            ) from self.error
        self._move(TxnEvent.COMMIT)
        op = next_op()
        self._steps.append(TxnStep(StepKind.END_TXN, op, committed=True))
        self._pending = PendingCall(TxnCall.COMMIT, op)
        return op

    def abort(self, now: float) -> int:
        """Abort: ABORTING now, EndTxn once records in flight are settled (the driver fails the
        unsent ones); after an error the epoch is bumped too (KIP-360)."""
        self._require_transactional()
        resumed = self._resume(TxnCall.ABORT)
        if resumed is not None:
            return resumed
        self._bump_after_abort |= self.state is TxnState.ABORTABLE_ERROR
        self._move(TxnEvent.ABORT)
        op = next_op()
        self._steps.append(TxnStep(StepKind.END_TXN, op, committed=False))
        self._pending = PendingCall(TxnCall.ABORT, op)
        return op

    def abandon(self, op: int) -> None:
        """The application stopped waiting for `op` before its outcome: keep the outcome for
        the same call made again, and refuse other transactional calls until then."""
        pending = self._pending
        if pending is not None and pending.op == op and not pending.finished:
            pending.abandoned = True

    def close(self, error: KrafkaError) -> None:
        """The producer closes: every pending operation fails with `error`, nothing more is
        sent (the state stays: a closed producer makes no further calls)."""
        while self._steps:
            self._finish(self._steps[0], error=error)

    def _resume(self, call: TxnCall) -> int | None:
        """The operation of a timed-out `call` made again (None: nothing is pending)."""
        pending = self._pending
        if pending is None:
            return None
        if pending.call is not call:
            raise pending.refusal(call.value)
        pending.abandoned = False
        if pending.finished:
            self._pending = None  # the driver kept the outcome: this call reports it
        return pending.op

    def _refuse_if_pending(self, attempted: str) -> None:
        if self._pending is not None:
            raise self._pending.refusal(attempted)

    # -- what the sender asks -------------------------------------------------------------------

    def check_can_send(self) -> None:
        """A transactional producer sends only inside a transaction; raises otherwise."""
        if self.transactional_id is None:
            return
        if self.state is not TxnState.IN_TRANSACTION:
            detail = f": {self.error}" if self.error is not None else ""
            raise InvalidStateError(
                f"transaction {self.transactional_id!r}: cannot send in state "
                f"{self.state.value}{detail}"
            ) from self.error

    def may_send_to(self, tp: tuple[str, int]) -> bool:
        """True when `tp` joined the transaction; otherwise it is queued for AddPartitionsToTxn."""
        if tp in self.added:
            return True
        self.pending.add(TopicPartition(*tp))
        return False

    @property
    def blocks_sending(self) -> bool:
        """No produce request may go out: no producer id yet, a bump pending, or an error."""
        return (
            self.state in (TxnState.FATAL_ERROR, TxnState.ABORTABLE_ERROR)
            or not self.idempotence.ready
        )

    def record_failed(self, error: KrafkaError) -> None:
        """A record of the transaction failed: the transaction is abortable-only now."""
        if self.transactional_id is not None and self.state in ABORTABLE_ON_FAILURE:
            self._abortable(error)

    def fenced(self, error: KrafkaError) -> None:
        """A produce response said this producer is fenced."""
        if self.transactional_id is None:
            self.idempotence.request_bump()
            return
        self._fatal(error)

    @property
    def fatal(self) -> bool:
        return self.state is TxnState.FATAL_ERROR

    # -- the contract ---------------------------------------------------------------------------

    def next_actions(self, now: float) -> list[Any]:
        self._now = now
        self._maybe_bump()
        self._maybe_add_partitions()
        actions: list[Any] = []
        step = self._steps[0] if self._steps else None
        if step is not None and step.sent is None:
            request = self._advance(step, now)
            if request is not None:
                actions.append(request)
        actions[:0], self._events = self._events, []
        return actions

    def next_deadline(self) -> float | None:
        step = self._steps[0] if self._steps else None
        if step is None or step.sent is not None:
            return None
        return self._wait_until(step)

    def on_response(self, sent: SendRequest[Any], response: Any, now: float) -> None:
        step = self._current(sent)
        if step is None:
            return
        step.sent = None
        code = self._code(step, response)
        if code == ErrorCode.NONE:
            self._succeeded(step, response)
        else:
            self._failed_with_code(step, code, now, _refused(step, response, code))

    def on_failure(self, sent: SendRequest[Any], error: KrafkaError, now: float) -> None:
        step = self._current(sent)
        if step is None:
            return
        step.sent = None
        if not error.retriable:
            self._give_up(step, error)
            return
        self._retry_later(step, now)

    # -- steps ----------------------------------------------------------------------------------

    def _advance(self, step: TxnStep, now: float) -> SendRequest[Any] | None:
        """The request for `step` now, if it may go (else wait: backoff, records)."""
        if step.kind is StepKind.END_TXN and not self._end_txn_ready(step):
            return None
        if step.backoff is not None and step.backoff.wait_time(now) > 0:
            return None
        is_init = step.kind is StepKind.INIT_PRODUCER_ID
        step.sent = SendRequest(
            self._destination(step),
            self._request(step),
            max_version=(
                wire.ADD_PARTITIONS_MAX_VERSION if step.kind is StepKind.ADD_PARTITIONS else None
            ),
            min_version=wire.INIT_PRODUCER_ID_MIN_VERSION if is_init else None,
        )
        return step.sent

    def _end_txn_ready(self, step: TxnStep) -> bool:
        """EndTxn goes once every record is settled and every partition was added; a commit of
        a transaction that can only be aborted fails at once (its unsent records are failed
        with it, by the engine: nothing settles them otherwise)."""
        if step.committed and self.state is TxnState.ABORTABLE_ERROR:
            self._finish(step, error=self._must_abort())
            return False
        if self._progress.in_flight or self._progress.has_unsent():
            return False
        if not (self.added or self.offsets_added):
            self._finish(step)  # nothing reached the coordinator: nothing to end
            self._ended(step)
            return False
        return True

    def _request(self, step: TxnStep) -> Any:
        identity = self.idempotence.identity
        if step.kind is StepKind.INIT_PRODUCER_ID:
            current = None if step.fresh_id else identity
            return wire.init_producer_id_request(self.config, current)
        assert identity is not None and self.transactional_id is not None
        txn_id = self.transactional_id
        if step.kind is StepKind.ADD_PARTITIONS:
            return wire.add_partitions_request(txn_id, identity, step.partitions)
        if step.kind is StepKind.ADD_OFFSETS:
            assert step.group is not None
            return wire.add_offsets_request(txn_id, identity, step.group.group_id)
        if step.kind is StepKind.TXN_OFFSET_COMMIT:
            assert step.group is not None
            return wire.txn_offset_commit_request(txn_id, identity, step.offsets, step.group)
        return wire.end_txn_request(txn_id, identity, step.committed)

    def _code(self, step: TxnStep, response: Any) -> int:
        """The one code that decides the step (fencing first, OPERATION_NOT_ATTEMPTED ignored)."""
        if step.kind is StepKind.ADD_PARTITIONS:
            codes = set(wire.add_partitions_errors(response).values())
        elif step.kind is StepKind.TXN_OFFSET_COMMIT:
            codes = set(wire.txn_offset_commit_errors(response).values())
        else:
            codes = {int(response.error_code)}
        codes -= {ErrorCode.NONE, _NOT_ATTEMPTED}
        return max(codes, key=lambda c: (c in _FENCED, c), default=ErrorCode.NONE)

    def _succeeded(self, step: TxnStep, response: Any) -> None:
        if step.kind is StepKind.INIT_PRODUCER_ID:
            identity = ProducerIdentity(int(response.producer_id), int(response.producer_epoch))
            self.idempotence.set_identity(identity.producer_id, identity.producer_epoch)
            self._move(TxnEvent.INIT_DONE)
            self._events.append(ProducerIdAssigned(identity))
        elif step.kind is StepKind.ADD_PARTITIONS:
            self.added.update(step.partitions)
            self._events.append(PartitionsAdded(step.partitions))
        elif step.kind is StepKind.ADD_OFFSETS:
            self.offsets_added = True
        elif step.kind is StepKind.END_TXN:
            self._ended(step)
            if self._bump_after_abort and not step.committed:
                self._bump_after_abort = False
                self._move(TxnEvent.INIT)
                self._steps.insert(1, TxnStep(StepKind.INIT_PRODUCER_ID, step.op))
                self._steps.popleft()
                return
        self._finish(step)

    def _ended(self, step: TxnStep) -> None:
        self._move(TxnEvent.END_DONE)
        self.added.clear()
        self.pending.clear()
        self.offsets_added = False

    def _failed_with_code(self, step: TxnStep, code: int, now: float, where: str = "") -> None:
        if code in _FENCED:
            self._fatal(
                ProducerFencedError(f"{step.what}: producer fenced ({ErrorCode(code).name})")
            )
            return
        if code in COORDINATOR_MOVED_CODES and self._needs_coordinator(step):
            target = self._destination(step)
            assert isinstance(target, Coordinator)
            self._events.append(CoordinatorMoved(target.key, target.key_type))
            self._retry_later(step, now)
            return
        if code == ErrorCode.COORDINATOR_LOAD_IN_PROGRESS:
            self._retry_later(step, now)
            return
        error = error_for_code(code, f"{step.what} failed: {_name(code)}{where}")
        refused_bump = (
            step.kind is StepKind.INIT_PRODUCER_ID
            and not step.fresh_id
            and not error.retriable
            and self.idempotence.identity is not None
        )
        if refused_bump:
            step.fresh_id = True  # the broker refused an epoch bump: ask for a new id (Tansu)
            return
        if error.retriable:
            self._retry_later(step, now)
        else:
            self._give_up(step, error)

    def _retry_later(self, step: TxnStep, now: float) -> None:
        step.backoff = step.backoff or Backoff(self._policy)
        step.backoff.failed(now, self._rand)

    def _give_up(self, step: TxnStep, error: KrafkaError) -> None:
        """`step` failed for good: fail its operation; the state follows Java's rules."""
        if step.kind is StepKind.INIT_PRODUCER_ID and step.op is None:
            self._fatal(error)  # an idempotent producer's epoch bump: no id to send with
            return
        if isinstance(error, UnsupportedVersionError) or step.kind is StepKind.INIT_PRODUCER_ID:
            if self.state is TxnState.INITIALIZING:
                self._move(TxnEvent.INIT_FAILED)
        elif step.kind is StepKind.TXN_OFFSET_COMMIT and _code_of(error) in _GROUP_FENCING:
            self._abortable(error)
        elif self.state in ABORTABLE_ON_FAILURE or self.state is TxnState.ABORTING:
            if self.state is TxnState.ABORTING:
                self._move(TxnEvent.FATAL_ERROR, error)
                self._events.append(ProducerFatal(error))
            else:
                self._abortable(error)
        self._finish(step, error=error)
        if step.kind is StepKind.ADD_OFFSETS:
            self._drop_dependent_commit(error)

    def _drop_dependent_commit(self, error: KrafkaError) -> None:
        if self._steps and self._steps[0].kind is StepKind.TXN_OFFSET_COMMIT:
            self._finish(self._steps[0], error=error)

    def _finish(self, step: TxnStep, error: KrafkaError | None = None) -> None:
        if self._steps and self._steps[0] is step:
            self._steps.popleft()
        if step.op is None:
            return
        self._events.append(Completed(step.op) if error is None else Failed(step.op, error))
        pending = self._pending
        if pending is not None and pending.op == step.op:
            if pending.abandoned:
                pending.finished = True
            else:
                self._pending = None

    # -- internal work --------------------------------------------------------------------------

    def _maybe_bump(self) -> None:
        """An idempotent producer's broken sequences need a new epoch once nothing is in flight;
        a transactional one's make the transaction abortable (the abort bumps the epoch)."""
        idem = self.idempotence
        if not idem.bump_needed or self.state is TxnState.FATAL_ERROR:
            return
        if self.transactional_id is not None:
            if self.state in ABORTABLE_ON_FAILURE:
                self._abortable(KrafkaError("the broker lost this producer's sequence state"))
            return
        if self._progress.in_flight or any(
            s.kind is StepKind.INIT_PRODUCER_ID for s in self._steps
        ):
            return
        if self.state is TxnState.READY:
            self._move(TxnEvent.INIT)
        self._steps.append(TxnStep(StepKind.INIT_PRODUCER_ID))

    def _maybe_add_partitions(self) -> None:
        """Queue AddPartitionsToTxn for partitions the sender wants to write to, once each
        (not again while a request for them is queued or in flight)."""
        asked = {
            tp for s in self._steps if s.kind is StepKind.ADD_PARTITIONS for tp in s.partitions
        }
        new = sorted(self.pending - self.added - asked)
        self.pending.clear()
        if not new or self.state not in (TxnState.IN_TRANSACTION, TxnState.COMMITTING):
            return
        queued = next(
            (s for s in self._steps if s.kind is StepKind.ADD_PARTITIONS and s.sent is None), None
        )
        if queued is not None:
            queued.partitions = tuple(sorted({*queued.partitions, *new}))
            return
        index = next(
            (i for i, s in enumerate(self._steps) if s.kind is StepKind.END_TXN), len(self._steps)
        )
        self._steps.insert(index, TxnStep(StepKind.ADD_PARTITIONS, partitions=tuple(new)))

    def _abortable(self, error: KrafkaError) -> None:
        if (self.state, TxnEvent.ABORTABLE_ERROR) in TRANSITIONS:
            first = self.state is not TxnState.ABORTABLE_ERROR
            self._move(TxnEvent.ABORTABLE_ERROR, error)
            self._bump_after_abort = True
            if first:
                self._events.append(TransactionAbortable(error))

    def _fatal(self, error: KrafkaError) -> None:
        if self.state is TxnState.FATAL_ERROR:
            return
        self._move(TxnEvent.FATAL_ERROR, error)
        self._events.append(ProducerFatal(error))
        while self._steps:
            self._finish(self._steps[0], error=error)

    def _move(self, event: TxnEvent, error: KrafkaError | None = None) -> None:
        new = TRANSITIONS.get((self.state, event))
        if new is None:
            detail = f": {self.error}" if self.error is not None else ""
            name = self.transactional_id or "idempotent producer"
            raise InvalidStateError(
                f"transaction {name!r}: cannot {event.value} in state {self.state.value}{detail}"
            ) from self.error
        if error is not None:
            self.error = error
        elif new in (TxnState.READY, TxnState.IN_TRANSACTION):
            self.error = None
        if _log.isEnabledFor(logging.DEBUG):
            name = self.transactional_id or "idempotent producer"
            transition(_log, f"transactions {name!r}", self.state, new, error or event.name)
        self.state = new

    def _must_abort(self) -> InvalidStateError:
        error = InvalidStateError(
            f"transaction {self.transactional_id!r} must be aborted: {self.error}"
        )
        error.__cause__ = self.error
        return error

    def _require_transactional(self) -> None:
        if self.transactional_id is None:
            raise InvalidStateError("not a transactional producer: set transactional_id")
        if self.state is TxnState.FATAL_ERROR and self.error is not None:
            raise self.error

    # -- coordinators ---------------------------------------------------------------------------

    def _needs_coordinator(self, step: TxnStep) -> bool:
        """Transactional requests go to a coordinator; an idempotent producer's to any broker."""
        return self.transactional_id is not None or step.kind is not StepKind.INIT_PRODUCER_ID

    def _destination(self, step: TxnStep) -> Coordinator | AnyBroker:
        if not self._needs_coordinator(step):
            return AnyBroker()
        if step.kind is StepKind.TXN_OFFSET_COMMIT:
            assert step.group is not None
            return Coordinator(step.group.group_id, CoordinatorType.GROUP)
        assert self.transactional_id is not None
        return Coordinator(self.transactional_id, CoordinatorType.TRANSACTION)

    def _current(self, sent: SendRequest[Any]) -> TxnStep | None:
        step = self._steps[0] if self._steps else None
        return step if step is not None and step.sent is sent else None

    def _wait_until(self, step: TxnStep) -> float | None:
        """When `step` may go after its backoff; None when nothing but an input can move it
        (the backoff ended at the last `next_actions` already: EndTxn waits for records)."""
        if step.backoff is not None and step.backoff.failures:
            retry_at = step.backoff.retry_at
            return retry_at if retry_at > self._now else None
        return None


def _refused(step: TxnStep, response: Any, code: int) -> str:
    """What a step failed with `code` for: " for group 'g'", " for t-0, t-1" (or nothing)."""
    codes: dict[TopicPartition, int] = {}
    if step.kind is StepKind.ADD_PARTITIONS:
        codes = wire.add_partitions_errors(response)
    elif step.kind is StepKind.TXN_OFFSET_COMMIT:
        codes = wire.txn_offset_commit_errors(response)
    where = [f"group {step.group.group_id!r}"] if step.group is not None else []
    where += sorted(f"{tp.topic}-{tp.partition}" for tp, c in codes.items() if c == code)
    return f" for {', '.join(where)}" if where else ""


def _name(code: int) -> str:
    try:
        return ErrorCode(code).name
    except ValueError:
        return f"error {code}"


def _code_of(error: KrafkaError) -> int | None:
    code = getattr(type(error), "code", None)
    return int(code) if isinstance(code, int) else None


__all__ = [
    "CoordinatorMoved",
    "PartitionsAdded",
    "ProduceProgress",
    "ProducerFatal",
    "ProducerIdAssigned",
    "TransactionAbortable",
    "TransactionManager",
    "TxnEvent",
    "TxnState",
]
