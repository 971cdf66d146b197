"""Transactions in scripted conversations with the `ProducerEngine`: the table, the requests,
the errors."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from _producer_scripted import Harness, Sent

from krafka.errors import (
    IllegalGenerationError,
    InvalidStateError,
    KafkaConnectionError,
    KafkaTimeoutError,
    KrafkaError,
    ProducerFencedError,
    TransactionalIdAuthorizationFailedError,
)
from krafka.protocol.error_codes import ErrorCode
from krafka.protocol.messages import (
    AddOffsetsToTxnRequest,
    AddOffsetsToTxnResponse,
    AddPartitionsToTxnRequest,
    AddPartitionsToTxnResponse,
    EndTxnRequest,
    EndTxnResponse,
    InitProducerIdRequest,
    InitProducerIdResponse,
    TxnOffsetCommitRequest,
    TxnOffsetCommitResponse,
)
from krafka.sansio.actions import (
    AnyBroker,
    Coordinator,
    CoordinatorMoved,
    CoordinatorType,
    SendRequest,
)
from krafka.sansio.producer import ProducerConfig
from krafka.sansio.producer.txn_events import (
    PartitionsAdded,
    ProducerFatal,
    ProducerIdAssigned,
    TransactionAbortable,
)
from krafka.sansio.producer.txn_state import TRANSITIONS, TxnEvent, TxnState
from krafka.structs import ConsumerGroupMetadata, OffsetAndMetadata, TopicPartition

S, E = TxnState, TxnEvent
TP = TopicPartition("t", 0)

EXPECTED = {
    (S.UNINITIALIZED, E.INIT): S.INITIALIZING,
    (S.INITIALIZING, E.INIT_DONE): S.READY,
    (S.INITIALIZING, E.INIT_FAILED): S.UNINITIALIZED,
    (S.READY, E.INIT): S.INITIALIZING,
    (S.READY, E.BEGIN): S.IN_TRANSACTION,
    (S.IN_TRANSACTION, E.COMMIT): S.COMMITTING,
    (S.IN_TRANSACTION, E.ABORT): S.ABORTING,
    (S.IN_TRANSACTION, E.ABORTABLE_ERROR): S.ABORTABLE_ERROR,
    (S.COMMITTING, E.END_DONE): S.READY,
    (S.COMMITTING, E.ABORTABLE_ERROR): S.ABORTABLE_ERROR,
    (S.ABORTING, E.END_DONE): S.READY,
    (S.ABORTING, E.INIT): S.INITIALIZING,
    (S.ABORTABLE_ERROR, E.ABORT): S.ABORTING,
    (S.ABORTABLE_ERROR, E.ABORTABLE_ERROR): S.ABORTABLE_ERROR,
    **{(state, E.FATAL_ERROR): S.FATAL_ERROR for state in S},
}


@pytest.mark.parametrize(("state", "event"), list(itertools.product(S, E)))
def test_the_table_is_exactly_the_expected_one(state: TxnState, event: TxnEvent) -> None:
    assert TRANSITIONS.get((state, event)) == EXPECTED.get((state, event))


COORDINATOR = Coordinator("tx", CoordinatorType.TRANSACTION)


class Txn:
    """A transactional producer's engine (on a fake cluster) and a conversation with it."""

    def __init__(self, transactional_id: str | None = "tx", **config: Any) -> None:
        self.config = ProducerConfig(
            transactional_id=transactional_id, linger=0.0, retry_backoff=0.01, **config
        )
        self.harness = Harness(self.config, identity=None, transactional=bool(transactional_id))
        self.engine = self.harness.engine
        assert self.engine.transactions is not None
        self.machine = self.engine.transactions
        self.talk = self.harness.talk

    @property
    def now(self) -> float:
        return self.talk.now

    def init(self, pid: int = 1000, epoch: int = 0) -> None:
        op = self.engine.initialize(self.now)
        sent = self.talk.expect(InitProducerIdRequest)
        assert sent.target == COORDINATOR
        assert self.talk.request(sent).transactional_id == "tx"
        self.talk.reply(sent, InitProducerIdResponse(producer_id=pid, producer_epoch=epoch))
        assert self.talk.outcome(op) is None
        assert any(isinstance(e, ProducerIdAssigned) for e in self.talk.events)

    def append(self, tp: TopicPartition = TP, value: bytes = b"v") -> Any:
        return self.harness.send(value, tuple(tp))  # type: ignore[arg-type]

    def drain(self) -> list[Sent]:
        return self.harness.drain()

    def add_partitions(self, *tps: TopicPartition, code: int = 0) -> SendRequest[Any]:
        sent = self.talk.expect(AddPartitionsToTxnRequest)
        assert sent.target == COORDINATOR and sent.max_version == 3
        request = self.talk.request(sent)
        asked = {(t.name, p) for t in request.v3_and_below_topics for p in t.partitions}
        assert asked == set(tps)
        self.talk.reply(sent, add_partitions_response(asked, code))
        self.talk.step()
        return sent

    def answer_produce(self, plan: Sent, offset: int = 0, code: int = 0) -> None:
        self.harness.answer(plan, code, base_offset=offset)


def add_partitions_response(tps: set[tuple[str, int]], code: int) -> AddPartitionsToTxnResponse:
    topic_cls = AddPartitionsToTxnResponse.AddPartitionsToTxnTopicResult
    part_cls = topic_cls.AddPartitionsToTxnPartitionResult
    by_topic: dict[str, list[Any]] = {}
    for topic, partition in sorted(tps):
        by_topic.setdefault(topic, []).append(
            part_cls(partition_index=partition, partition_error_code=code)
        )
    return AddPartitionsToTxnResponse(
        results_by_topic_v3_and_below=[
            topic_cls(name=t, results_by_partition=ps) for t, ps in by_topic.items()
        ]
    )


def in_transaction_with_a_record() -> tuple[Txn, Any]:
    """Initialised, a transaction begun, one record added to the transaction and sent."""
    txn = Txn()
    txn.init()
    txn.engine.begin(txn.now)
    handle = txn.append()
    assert txn.drain() == []  # the partition must join the transaction first
    txn.add_partitions(TP)
    assert PartitionsAdded((TP,)) in txn.talk.events
    (plan,) = txn.drain()
    return txn, (plan, handle)


def test_a_whole_transaction() -> None:
    txn, (plan, handle) = in_transaction_with_a_record()
    op = txn.engine.commit(txn.now)
    assert txn.machine.state is S.COMMITTING
    txn.talk.expect_nothing()  # the record is still in flight: no EndTxn yet
    txn.answer_produce(plan, offset=5)
    assert handle.result().offset == 5
    sent = txn.talk.expect(EndTxnRequest)
    assert txn.talk.request(sent).committed is True
    assert txn.talk.request(sent).producer_id == 1000
    txn.talk.reply(sent, EndTxnResponse())
    assert txn.talk.outcome(op) is None
    assert txn.machine.state is S.READY


def test_commit_refuses_new_sends_at_once() -> None:
    """The race fixed: COMMITTING is entered before the last records are flushed, so a send
    from another task cannot open a batch that drains after EndTxn."""
    txn, _ = in_transaction_with_a_record()
    txn.engine.commit(txn.now)
    with pytest.raises(InvalidStateError, match="cannot send in state committing"):
        txn.machine.check_can_send()


def test_end_txn_waits_for_partitions_added_during_the_commit_flush() -> None:
    txn, (plan, _) = in_transaction_with_a_record()
    txn.append(TopicPartition("t", 1))  # appended before commit, not yet drained
    op = txn.engine.commit(txn.now)
    txn.answer_produce(plan)
    assert txn.drain() == []
    txn.add_partitions(TopicPartition("t", 1))
    (second,) = txn.drain()
    txn.talk.expect_nothing()
    txn.answer_produce(second)
    txn.talk.reply(txn.talk.expect(EndTxnRequest), EndTxnResponse())
    assert txn.talk.outcome(op) is None


def test_an_empty_transaction_ends_without_end_txn() -> None:
    txn = Txn()
    txn.init()
    txn.engine.begin(txn.now)
    op = txn.engine.commit(txn.now)
    assert txn.talk.outcome(op) is None
    assert not txn.talk.outbox and txn.machine.state is S.READY


def test_concurrent_transactions_is_retried_after_backoff() -> None:
    txn, (plan, _) = in_transaction_with_a_record()
    op = txn.engine.commit(txn.now)
    txn.answer_produce(plan)
    sent = txn.talk.expect(EndTxnRequest)
    txn.talk.reply(sent, EndTxnResponse(error_code=ErrorCode.CONCURRENT_TRANSACTIONS))
    txn.talk.expect_nothing()
    before = txn.now
    deadline = txn.talk.advance_to_deadline()
    assert 0.005 < deadline - before <= 0.02  # retry_backoff=0.01 with 20 % jitter
    txn.talk.reply(txn.talk.expect(EndTxnRequest), EndTxnResponse())
    assert txn.talk.outcome(op) is None


def test_not_coordinator_in_an_answer_tells_the_driver_and_retries() -> None:
    """The driver finds and follows the coordinator (`Coordinator` target); the engine says
    when an answer showed it moved, and sends again after backoff."""
    txn, (plan, _) = in_transaction_with_a_record()
    op = txn.engine.commit(txn.now)
    txn.answer_produce(plan)
    sent = txn.talk.expect(EndTxnRequest)
    txn.talk.reply(sent, EndTxnResponse(error_code=ErrorCode.NOT_COORDINATOR))
    txn.talk.expect_nothing()
    assert CoordinatorMoved("tx", CoordinatorType.TRANSACTION) in txn.talk.events
    txn.talk.advance_to_deadline()
    again = txn.talk.expect(EndTxnRequest)
    assert again.target == COORDINATOR
    txn.talk.reply(again, EndTxnResponse())
    assert txn.talk.outcome(op) is None


def test_a_partition_level_not_coordinator_is_reported_too() -> None:
    """AddPartitionsToTxn (v3) says NOT_COORDINATOR per partition, where no driver looks."""
    txn = Txn()
    txn.init()
    txn.engine.begin(txn.now)
    txn.append()
    txn.drain()
    txn.add_partitions(TP, code=ErrorCode.NOT_COORDINATOR)
    assert CoordinatorMoved("tx", CoordinatorType.TRANSACTION) in txn.talk.events
    assert txn.machine.state is S.IN_TRANSACTION
    txn.talk.advance_to_deadline()
    txn.add_partitions(TP)
    assert txn.machine.added == {TP}


def test_a_lost_connection_to_the_coordinator_is_retried_after_backoff() -> None:
    txn, (plan, _) = in_transaction_with_a_record()
    op = txn.engine.commit(txn.now)
    txn.answer_produce(plan)
    txn.talk.fail(txn.talk.expect(EndTxnRequest), KafkaConnectionError("reset"))
    txn.talk.expect_nothing()
    txn.talk.advance_to_deadline()
    txn.talk.reply(txn.talk.expect(EndTxnRequest), EndTxnResponse())
    assert txn.talk.outcome(op) is None


def test_no_deadline_in_the_past_while_a_coordinator_request_is_in_flight() -> None:
    """A past deadline makes the driver loop without yielding, so the answer never gets in
    (the event loop spun until a retry window ran out)."""
    txn, _, sent = committing_with_end_txn_sent()
    txn.talk.advance(1.0)
    txn.talk.expect_nothing()
    assert txn.engine.next_deadline() is None
    txn.talk.fail(sent, KafkaConnectionError("reset"))
    deadline = txn.engine.next_deadline()
    assert deadline is not None and deadline > txn.now


def test_load_in_progress_backs_off_then_retries() -> None:
    txn = Txn()
    op = txn.engine.initialize(txn.now)
    sent = txn.talk.expect(InitProducerIdRequest)
    txn.talk.reply(sent, InitProducerIdResponse(error_code=ErrorCode.COORDINATOR_LOAD_IN_PROGRESS))
    txn.talk.expect_nothing()
    txn.talk.advance_to_deadline()
    sent = txn.talk.expect(InitProducerIdRequest)
    txn.talk.reply(sent, InitProducerIdResponse(producer_id=7, producer_epoch=1))
    assert txn.talk.outcome(op) is None


def test_retriable_errors_are_retried_until_an_answer_however_long() -> None:
    """No retry window turns "not answered yet" into a failure: Java retries until a definite
    answer, and only the application's wait is bounded."""
    txn = Txn(request_timeout=5.0)
    op = txn.engine.initialize(txn.now)
    while txn.now < 120.0:
        sent = txn.talk.expect(InitProducerIdRequest)
        code = ErrorCode.CONCURRENT_TRANSACTIONS
        txn.talk.reply(sent, InitProducerIdResponse(error_code=code))
        assert txn.talk.pending(op)
        txn.talk.advance_to_deadline()
    sent = txn.talk.expect(InitProducerIdRequest)
    txn.talk.reply(sent, InitProducerIdResponse(producer_id=7, producer_epoch=0))
    assert txn.talk.outcome(op) is None
    assert txn.machine.state is S.READY


def committing_with_end_txn_sent() -> tuple[Txn, int, SendRequest[Any]]:
    txn, (plan, _) = in_transaction_with_a_record()
    op = txn.engine.commit(txn.now)
    txn.answer_produce(plan)
    return txn, op, txn.talk.expect(EndTxnRequest)


def test_an_end_txn_that_timed_out_is_sent_again_not_given_up() -> None:
    """The coordinator may have committed what a timed-out EndTxn asked: the commit neither
    fails nor makes the transaction abortable; the same EndTxn goes again until answered."""
    txn, op, sent = committing_with_end_txn_sent()
    for _ in range(20):
        txn.talk.advance(5.0)  # request_timeout: the driver reports the request lost
        txn.talk.fail(sent, KafkaTimeoutError("no response within 5.0s"))
        txn.talk.advance_to_deadline()
        sent = txn.talk.expect(EndTxnRequest)
        assert txn.talk.request(sent).committed is True
        assert txn.machine.state is S.COMMITTING
    txn.talk.reply(sent, EndTxnResponse())
    assert txn.talk.outcome(op) is None
    assert txn.machine.state is S.READY


def test_abort_after_a_timed_out_commit_is_refused_and_commit_again_resumes_it() -> None:
    txn, op, sent = committing_with_end_txn_sent()
    txn.engine.abandon(op)  # the application's max_block ran out
    with pytest.raises(InvalidStateError, match=r"commit_transaction\(\) timed out.*unknown"):
        txn.engine.abort(txn.now)
    with pytest.raises(InvalidStateError, match=r"cannot call begin_transaction"):
        txn.engine.begin(txn.now)
    assert txn.machine.state is S.COMMITTING
    assert txn.engine.commit(txn.now) == op  # the same operation: waits for the same EndTxn
    txn.talk.expect_nothing()
    txn.talk.reply(sent, EndTxnResponse())
    assert txn.talk.outcome(op) is None
    txn.engine.begin(txn.now)  # the outcome was reported: the producer moves on
    assert txn.machine.state is S.IN_TRANSACTION


def test_a_commit_that_finished_after_its_wait_ran_out_is_reported_by_the_next_commit() -> None:
    txn, op, sent = committing_with_end_txn_sent()
    txn.engine.abandon(op)
    txn.talk.reply(sent, EndTxnResponse())  # the coordinator committed after all
    txn.talk.step()
    assert txn.machine.state is S.READY
    for refused in (
        lambda: txn.engine.abort(txn.now),
        lambda: txn.engine.begin(txn.now),
        lambda: txn.engine.initialize(txn.now),
    ):
        with pytest.raises(InvalidStateError, match="commit_transaction"):
            refused()
    assert txn.engine.commit(txn.now) == op
    assert txn.talk.outcome(op) is None
    txn.engine.begin(txn.now)


def test_commit_after_a_timed_out_abort_is_refused() -> None:
    txn, (plan, _) = in_transaction_with_a_record()
    op = txn.engine.abort(txn.now)
    txn.engine.abandon(op)
    with pytest.raises(InvalidStateError, match=r"cannot call commit_transaction.*abort"):
        txn.engine.commit(txn.now)
    assert txn.engine.abort(txn.now) == op
    txn.answer_produce(plan)
    txn.talk.reply(txn.talk.expect(EndTxnRequest), EndTxnResponse())
    assert txn.talk.outcome(op) is None
    assert txn.machine.state is S.READY


def test_a_failed_commit_learnt_late_is_reported_then_abort_is_allowed() -> None:
    txn, op, sent = committing_with_end_txn_sent()
    txn.engine.abandon(op)
    txn.talk.reply(sent, EndTxnResponse(error_code=ErrorCode.INVALID_TXN_STATE))
    txn.talk.step()
    with pytest.raises(InvalidStateError, match="commit_transaction"):
        txn.engine.abort(txn.now)
    assert txn.engine.commit(txn.now) == op
    with pytest.raises(KrafkaError, match="INVALID_TXN_STATE"):
        txn.talk.outcome(op)
    assert txn.machine.state is S.ABORTABLE_ERROR
    abort = txn.engine.abort(txn.now)
    txn.talk.reply(txn.talk.expect(EndTxnRequest), EndTxnResponse())
    txn.talk.reply(
        txn.talk.expect(InitProducerIdRequest),
        InitProducerIdResponse(producer_id=1000, producer_epoch=1),
    )
    assert txn.talk.outcome(abort) is None


def test_init_transactions_again_after_a_timeout_waits_for_the_same_producer_id() -> None:
    """Not Completed at once while INITIALIZING: the producer has no id yet."""
    txn = Txn()
    op = txn.engine.initialize(txn.now)
    sent = txn.talk.expect(InitProducerIdRequest)
    txn.engine.abandon(op)
    assert txn.engine.initialize(txn.now) == op
    assert txn.talk.pending(op)
    txn.talk.reply(sent, InitProducerIdResponse(producer_id=9, producer_epoch=0))
    assert txn.talk.outcome(op) is None
    assert txn.machine.idempotence.identity is not None


def test_add_partitions_that_time_out_are_retried_not_made_abortable() -> None:
    """The coordinator may have added the partitions: giving up would leave them in a
    transaction the producer thinks it never started."""
    txn = Txn(delivery_timeout=600.0)  # the record waits for its partition that long
    txn.init()
    txn.engine.begin(txn.now)
    txn.append()
    txn.drain()
    while txn.now < 120.0:
        sent = txn.talk.expect(AddPartitionsToTxnRequest)
        txn.talk.advance(5.0)
        txn.talk.fail(sent, KafkaTimeoutError("no response within 5.0s"))
        txn.talk.advance_to_deadline()
    assert txn.machine.state is S.IN_TRANSACTION
    txn.add_partitions(TP)
    assert txn.machine.added == {TP}


def test_fencing_is_fatal() -> None:
    txn, (plan, _) = in_transaction_with_a_record()
    op = txn.engine.commit(txn.now)
    txn.answer_produce(plan)
    sent = txn.talk.expect(EndTxnRequest)
    txn.talk.reply(sent, EndTxnResponse(error_code=ErrorCode.PRODUCER_FENCED))
    with pytest.raises(ProducerFencedError, match="EndTxn"):
        txn.talk.outcome(op)
    assert txn.machine.state is S.FATAL_ERROR
    assert any(isinstance(e, ProducerFatal) for e in txn.talk.events)
    with pytest.raises(ProducerFencedError):
        txn.engine.begin(txn.now)


def test_a_fenced_produce_response_makes_the_machine_fatal() -> None:
    txn, (plan, handle) = in_transaction_with_a_record()
    txn.answer_produce(plan, code=ErrorCode.INVALID_PRODUCER_EPOCH)
    assert txn.machine.fatal
    with pytest.raises(ProducerFencedError):
        handle.result()
    assert txn.drain() == []
    with pytest.raises(ProducerFencedError):
        txn.append()


def test_a_failed_record_makes_the_transaction_abortable_and_abort_bumps_the_epoch() -> None:
    txn, (plan, _) = in_transaction_with_a_record()
    txn.answer_produce(plan, code=ErrorCode.INVALID_RECORD)
    assert txn.machine.state is S.ABORTABLE_ERROR
    txn.talk.step()
    assert any(isinstance(e, TransactionAbortable) for e in txn.talk.events)
    with pytest.raises(InvalidStateError, match="must be aborted"):
        txn.engine.commit(txn.now)
    op = txn.engine.abort(txn.now)
    sent = txn.talk.expect(EndTxnRequest)
    assert txn.talk.request(sent).committed is False
    txn.talk.reply(sent, EndTxnResponse())
    bump = txn.talk.expect(InitProducerIdRequest)
    request = txn.talk.request(bump)
    assert (request.producer_id, request.producer_epoch) == (1000, 0)
    txn.talk.reply(bump, InitProducerIdResponse(producer_id=1000, producer_epoch=1))
    assert txn.talk.outcome(op) is None
    assert txn.machine.state is S.READY and txn.machine.error is None
    txn.engine.begin(txn.now)
    txn.machine.check_can_send()


def test_abort_does_not_turn_its_own_failed_records_into_an_error() -> None:
    txn, (plan, _) = in_transaction_with_a_record()
    unsent = txn.append(TopicPartition("t", 9))
    op = txn.engine.abort(txn.now)
    with pytest.raises(KrafkaError, match="transaction aborted"):
        unsent.result()  # the engine failed what was not sent yet
    assert txn.machine.state is S.ABORTING
    txn.answer_produce(plan)
    txn.talk.reply(txn.talk.expect(EndTxnRequest), EndTxnResponse())
    assert txn.talk.outcome(op) is None
    assert txn.machine.state is S.READY


def test_send_offsets_commits_through_the_group_coordinator() -> None:
    txn, _ = in_transaction_with_a_record()
    group = ConsumerGroupMetadata("g", generation_id=7, member_id="m-1")
    op = txn.engine.send_offsets({TP: OffsetAndMetadata(42, "meta", 3)}, group, txn.now)
    sent = txn.talk.expect(AddOffsetsToTxnRequest)
    assert sent.target == COORDINATOR
    assert txn.talk.request(sent).group_id == "g"
    txn.talk.reply(sent, AddOffsetsToTxnResponse())
    commit = txn.talk.expect(TxnOffsetCommitRequest)
    assert commit.target == Coordinator("g", CoordinatorType.GROUP)
    body = txn.talk.request(commit)
    assert (body.generation_id, body.member_id) == (7, "m-1")
    (part,) = body.topics[0].partitions
    assert (part.committed_offset, part.committed_metadata) == (42, "meta")
    assert part.committed_leader_epoch == 3
    txn.talk.reply(commit, txn_offset_commit_response(0))
    assert txn.talk.outcome(op) is None
    assert txn.machine.offsets_added


def txn_offset_commit_response(code: int) -> TxnOffsetCommitResponse:
    topic_cls = TxnOffsetCommitResponse.TxnOffsetCommitResponseTopic
    part = topic_cls.TxnOffsetCommitResponsePartition(partition_index=0, error_code=code)
    return TxnOffsetCommitResponse(topics=[topic_cls(name="t", partitions=[part])])


def test_a_stale_generation_makes_send_offsets_fail_and_the_transaction_abortable() -> None:
    txn, _ = in_transaction_with_a_record()
    group = ConsumerGroupMetadata("g", generation_id=7, member_id="m-1")
    op = txn.engine.send_offsets({TP: OffsetAndMetadata(42)}, group, txn.now)
    txn.talk.reply(txn.talk.expect(AddOffsetsToTxnRequest), AddOffsetsToTxnResponse())
    commit = txn.talk.expect(TxnOffsetCommitRequest)
    txn.talk.reply(commit, txn_offset_commit_response(ErrorCode.ILLEGAL_GENERATION))
    with pytest.raises(IllegalGenerationError):
        txn.talk.outcome(op)
    assert txn.machine.state is S.ABORTABLE_ERROR


def test_an_authorization_failure_of_the_lookup_fails_the_call() -> None:
    """The driver could not find the coordinator for good (it refused the lookup)."""
    txn = Txn()
    op = txn.engine.initialize(txn.now)
    sent = txn.talk.expect(InitProducerIdRequest)
    txn.talk.fail(sent, TransactionalIdAuthorizationFailedError("FindCoordinator for 'tx'"))
    with pytest.raises(TransactionalIdAuthorizationFailedError):
        txn.talk.outcome(op)
    assert txn.machine.state is S.UNINITIALIZED


def test_init_producer_id_requires_v3() -> None:
    txn = Txn()
    txn.engine.initialize(txn.now)
    sent = txn.talk.expect(InitProducerIdRequest)
    assert sent.min_version == 3


class TestIdempotentOnly:
    """Without a transactional id the machine keeps the producer id and bumps epochs."""

    def start(self) -> Txn:
        txn = Txn(transactional_id=None)
        op = txn.engine.initialize(txn.now)
        sent = txn.talk.expect(InitProducerIdRequest)
        assert sent.target == AnyBroker()
        assert txn.talk.request(sent).transactional_id is None
        txn.talk.reply(sent, InitProducerIdResponse(producer_id=50, producer_epoch=0))
        assert txn.talk.outcome(op) is None
        return txn

    def test_sends_nothing_else(self) -> None:
        txn = self.start()
        txn.talk.expect_nothing()
        with pytest.raises(InvalidStateError, match="not a transactional producer"):
            txn.engine.begin(txn.now)

    def test_a_refused_bump_asks_for_a_new_id(self) -> None:
        txn = self.start()
        txn.engine.sender.idempotence.request_bump()  # type: ignore[union-attr]
        sent = txn.talk.expect(InitProducerIdRequest)
        assert (txn.talk.request(sent).producer_id, txn.talk.request(sent).producer_epoch) == (
            50,
            0,
        )
        txn.talk.reply(sent, InitProducerIdResponse(error_code=ErrorCode.UNKNOWN_SERVER_ERROR))
        fresh = txn.talk.expect(InitProducerIdRequest)
        assert txn.talk.request(fresh).producer_id == -1
        txn.talk.reply(fresh, InitProducerIdResponse(producer_id=51, producer_epoch=0))
        txn.talk.step()
        identity = txn.engine.sender.idempotence.identity  # type: ignore[union-attr]
        assert identity is not None and identity.producer_id == 51

    def test_a_bump_refused_for_good_is_fatal(self) -> None:
        """As in Java: without a usable id nothing can be sent. (The bump was asked again and
        again, and the answer that finally came raised: no transition from UNINITIALIZED.)"""
        txn = self.start()
        txn.engine.sender.idempotence.request_bump()  # type: ignore[union-attr]
        for _ in range(2):  # the bump, then a fresh id: both refused
            sent = txn.talk.expect(InitProducerIdRequest)
            code = ErrorCode.UNKNOWN_SERVER_ERROR
            txn.talk.reply(sent, InitProducerIdResponse(error_code=code))
        txn.talk.expect_nothing()
        assert txn.machine.fatal
        assert any(isinstance(e, ProducerFatal) for e in txn.talk.events)

    def test_the_bump_waits_for_requests_in_flight(self) -> None:
        txn = self.start()
        txn.append()
        (plan,) = txn.drain()
        txn.engine.sender.idempotence.request_bump()  # type: ignore[union-attr]
        txn.talk.expect_nothing()
        txn.answer_produce(plan)
        txn.talk.expect(InitProducerIdRequest)
