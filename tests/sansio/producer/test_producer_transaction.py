"""The transaction machine, in scripted conversations: its table, its requests, its errors."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from _producer_scripted import Leaders

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
    FindCoordinatorRequest,
    FindCoordinatorResponse,
    InitProducerIdRequest,
    InitProducerIdResponse,
    TxnOffsetCommitRequest,
    TxnOffsetCommitResponse,
)
from krafka.sansio.actions import AnyBroker, Broker, SendRequest
from krafka.sansio.producer import ProducerConfig, ProducerCore, wire
from krafka.sansio.producer.txn_events import (
    PartitionsAdded,
    ProducerFatal,
    ProducerIdAssigned,
    TransactionAbortable,
)
from krafka.sansio.producer.txn_state import TRANSITIONS, TxnEvent, TxnState
from krafka.structs import ConsumerGroupMetadata, OffsetAndMetadata, TopicPartition
from krafka.testing.conversation import Conversation

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


class Txn:
    """A transactional producer's sans-IO core and a conversation with its machine."""

    def __init__(self, transactional_id: str | None = "tx", **config: Any) -> None:
        self.config = ProducerConfig(
            transactional_id=transactional_id, linger=0.0, retry_backoff=0.01, **config
        )
        self.core = ProducerCore.build(self.config)
        assert self.core.transactions is not None
        self.machine = self.core.transactions
        self.talk = Conversation(self.machine)

    @property
    def now(self) -> float:
        return self.talk.now

    def find_coordinator(self, node: int = 1, code: int = 0) -> SendRequest[Any]:
        sent = self.talk.expect(FindCoordinatorRequest)
        assert sent.target == AnyBroker()
        entry = FindCoordinatorResponse.Coordinator(
            key=self.talk.request(sent).coordinator_keys[0],
            node_id=node,
            host=f"b{node}",
            port=9092,
            error_code=code,
        )
        self.talk.reply(sent, FindCoordinatorResponse(coordinators=[entry]))
        return sent

    def init(self, pid: int = 1000, epoch: int = 0) -> None:
        op = self.machine.initialize(self.now)
        self.find_coordinator()
        sent = self.talk.expect(InitProducerIdRequest)
        assert self.talk.request(sent).transactional_id == "tx"
        self.talk.reply(sent, InitProducerIdResponse(producer_id=pid, producer_epoch=epoch))
        assert self.talk.outcome(op) is None
        assert any(isinstance(e, ProducerIdAssigned) for e in self.talk.events)

    def append(self, tp: TopicPartition = TP, value: bytes = b"v") -> Any:
        _, handle = self.core.accumulator.append(
            tp[0], tp[1], 1_700_000_000_000, None, value, None, 30, self.now, 1
        )
        return handle

    def drain(self) -> list[Any]:
        return self.core.sender.drain(self.now, Leaders()).plans

    def add_partitions(self, *tps: TopicPartition, code: int = 0) -> SendRequest[Any]:
        sent = self.talk.expect(AddPartitionsToTxnRequest)
        assert sent.target == Broker(1, "b1", 9092) and sent.max_version == 3
        request = self.talk.request(sent)
        asked = {(t.name, p) for t in request.v3_and_below_topics for p in t.partitions}
        assert asked == set(tps)
        self.talk.reply(sent, add_partitions_response(asked, code))
        self.talk.step()
        return sent

    def answer_produce(self, plan: Any, offset: int = 0) -> None:
        results = {tp: wire.PartitionResult(base_offset=offset) for tp in plan.batches}
        self.core.sender.on_response(plan, results, self.now)


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
    txn.machine.begin(txn.now)
    handle = txn.append()
    assert txn.drain() == []  # the partition must join the transaction first
    txn.add_partitions(TP)
    assert PartitionsAdded((TP,)) in txn.talk.events
    (plan,) = txn.drain()
    return txn, (plan, handle)


def test_a_whole_transaction() -> None:
    txn, (plan, handle) = in_transaction_with_a_record()
    op = txn.machine.commit(txn.now)
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
    txn.machine.commit(txn.now)
    with pytest.raises(InvalidStateError, match="cannot send in state committing"):
        txn.machine.check_can_send()


def test_end_txn_waits_for_partitions_added_during_the_commit_flush() -> None:
    txn, (plan, _) = in_transaction_with_a_record()
    txn.append(TopicPartition("t", 1))  # appended before commit, not yet drained
    op = txn.machine.commit(txn.now)
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
    txn.machine.begin(txn.now)
    op = txn.machine.commit(txn.now)
    assert txn.talk.outcome(op) is None
    assert not txn.talk.outbox and txn.machine.state is S.READY


def test_concurrent_transactions_is_retried_after_backoff() -> None:
    txn, (plan, _) = in_transaction_with_a_record()
    op = txn.machine.commit(txn.now)
    txn.answer_produce(plan)
    sent = txn.talk.expect(EndTxnRequest)
    txn.talk.reply(sent, EndTxnResponse(error_code=ErrorCode.CONCURRENT_TRANSACTIONS))
    txn.talk.expect_nothing()
    before = txn.now
    deadline = txn.talk.advance_to_deadline()
    assert 0.005 < deadline - before <= 0.02  # retry_backoff=0.01 with 20 % jitter
    txn.talk.reply(txn.talk.expect(EndTxnRequest), EndTxnResponse())
    assert txn.talk.outcome(op) is None


def test_not_coordinator_looks_the_coordinator_up_again() -> None:
    txn, (plan, _) = in_transaction_with_a_record()
    op = txn.machine.commit(txn.now)
    txn.answer_produce(plan)
    sent = txn.talk.expect(EndTxnRequest)
    txn.talk.reply(sent, EndTxnResponse(error_code=ErrorCode.NOT_COORDINATOR))
    txn.find_coordinator(node=2)
    again = txn.talk.expect(EndTxnRequest)
    assert again.target == Broker(2, "b2", 9092)
    txn.talk.reply(again, EndTxnResponse())
    assert txn.talk.outcome(op) is None


def test_a_lost_connection_to_the_coordinator_retries_through_a_new_lookup() -> None:
    txn, (plan, _) = in_transaction_with_a_record()
    op = txn.machine.commit(txn.now)
    txn.answer_produce(plan)
    txn.talk.fail(txn.talk.expect(EndTxnRequest), KafkaConnectionError("reset"))
    txn.talk.advance_to_deadline()
    txn.find_coordinator(node=3)
    txn.talk.reply(txn.talk.expect(EndTxnRequest), EndTxnResponse())
    assert txn.talk.outcome(op) is None


def test_no_deadline_in_the_past_while_the_coordinator_lookup_is_in_flight() -> None:
    """A past deadline makes the driver loop without yielding, so the lookup's answer never
    gets in (the event loop spun until a retry window ran out)."""
    txn, _, sent = committing_with_end_txn_sent()
    txn.talk.fail(sent, KafkaConnectionError("reset"))
    txn.talk.advance_to_deadline()
    lookup = txn.talk.expect(FindCoordinatorRequest)
    txn.talk.advance(1.0)
    txn.talk.expect_nothing()
    assert txn.machine.next_deadline() is None
    txn.talk.fail(lookup, KafkaConnectionError("reset"))
    deadline = txn.machine.next_deadline()
    assert deadline is not None and deadline > txn.now


def test_load_in_progress_backs_off_then_retries() -> None:
    txn = Txn()
    op = txn.machine.initialize(txn.now)
    txn.find_coordinator()
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
    op = txn.machine.initialize(txn.now)
    txn.find_coordinator()
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
    op = txn.machine.commit(txn.now)
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
        txn.find_coordinator()
        sent = txn.talk.expect(EndTxnRequest)
        assert txn.talk.request(sent).committed is True
        assert txn.machine.state is S.COMMITTING
    txn.talk.reply(sent, EndTxnResponse())
    assert txn.talk.outcome(op) is None
    assert txn.machine.state is S.READY


def test_abort_after_a_timed_out_commit_is_refused_and_commit_again_resumes_it() -> None:
    txn, op, sent = committing_with_end_txn_sent()
    txn.machine.abandon(op)  # the application's max_block ran out
    with pytest.raises(InvalidStateError, match=r"commit_transaction\(\) timed out.*unknown"):
        txn.machine.abort(txn.now)
    with pytest.raises(InvalidStateError, match=r"cannot call begin_transaction"):
        txn.machine.begin(txn.now)
    assert txn.machine.state is S.COMMITTING
    assert txn.machine.commit(txn.now) == op  # the same operation: waits for the same EndTxn
    txn.talk.expect_nothing()
    txn.talk.reply(sent, EndTxnResponse())
    assert txn.talk.outcome(op) is None
    txn.machine.begin(txn.now)  # the outcome was reported: the producer moves on
    assert txn.machine.state is S.IN_TRANSACTION


def test_a_commit_that_finished_after_its_wait_ran_out_is_reported_by_the_next_commit() -> None:
    txn, op, sent = committing_with_end_txn_sent()
    txn.machine.abandon(op)
    txn.talk.reply(sent, EndTxnResponse())  # the coordinator committed after all
    txn.talk.step()
    assert txn.machine.state is S.READY
    for refused in (
        lambda: txn.machine.abort(txn.now),
        lambda: txn.machine.begin(txn.now),
        lambda: txn.machine.initialize(txn.now),
    ):
        with pytest.raises(InvalidStateError, match="commit_transaction"):
            refused()
    assert txn.machine.commit(txn.now) == op
    assert txn.talk.outcome(op) is None
    txn.machine.begin(txn.now)


def test_commit_after_a_timed_out_abort_is_refused() -> None:
    txn, (plan, _) = in_transaction_with_a_record()
    op = txn.machine.abort(txn.now)
    txn.machine.abandon(op)
    with pytest.raises(InvalidStateError, match=r"cannot call commit_transaction.*abort"):
        txn.machine.commit(txn.now)
    assert txn.machine.abort(txn.now) == op
    txn.answer_produce(plan)
    txn.talk.reply(txn.talk.expect(EndTxnRequest), EndTxnResponse())
    assert txn.talk.outcome(op) is None
    assert txn.machine.state is S.READY


def test_a_failed_commit_learnt_late_is_reported_then_abort_is_allowed() -> None:
    txn, op, sent = committing_with_end_txn_sent()
    txn.machine.abandon(op)
    txn.talk.reply(sent, EndTxnResponse(error_code=ErrorCode.INVALID_TXN_STATE))
    txn.talk.step()
    with pytest.raises(InvalidStateError, match="commit_transaction"):
        txn.machine.abort(txn.now)
    assert txn.machine.commit(txn.now) == op
    with pytest.raises(KrafkaError, match="INVALID_TXN_STATE"):
        txn.talk.outcome(op)
    assert txn.machine.state is S.ABORTABLE_ERROR
    abort = txn.machine.abort(txn.now)
    txn.talk.reply(txn.talk.expect(EndTxnRequest), EndTxnResponse())
    txn.talk.reply(
        txn.talk.expect(InitProducerIdRequest),
        InitProducerIdResponse(producer_id=1000, producer_epoch=1),
    )
    assert txn.talk.outcome(abort) is None


def test_init_transactions_again_after_a_timeout_waits_for_the_same_producer_id() -> None:
    """Not Completed at once while INITIALIZING: the producer has no id yet."""
    txn = Txn()
    op = txn.machine.initialize(txn.now)
    txn.find_coordinator()
    sent = txn.talk.expect(InitProducerIdRequest)
    txn.machine.abandon(op)
    assert txn.machine.initialize(txn.now) == op
    assert txn.talk.pending(op)
    txn.talk.reply(sent, InitProducerIdResponse(producer_id=9, producer_epoch=0))
    assert txn.talk.outcome(op) is None
    assert txn.machine.idempotence.identity is not None


def test_add_partitions_that_time_out_are_retried_not_made_abortable() -> None:
    """The coordinator may have added the partitions: giving up would leave them in a
    transaction the producer thinks it never started."""
    txn = Txn()
    txn.init()
    txn.machine.begin(txn.now)
    txn.append()
    txn.drain()
    while txn.now < 120.0:
        sent = txn.talk.expect(AddPartitionsToTxnRequest)
        txn.talk.advance(5.0)
        txn.talk.fail(sent, KafkaTimeoutError("no response within 5.0s"))
        txn.talk.advance_to_deadline()
        txn.find_coordinator()
    assert txn.machine.state is S.IN_TRANSACTION
    txn.add_partitions(TP)
    assert txn.machine.added == {TP}


def test_fencing_is_fatal() -> None:
    txn, (plan, _) = in_transaction_with_a_record()
    op = txn.machine.commit(txn.now)
    txn.answer_produce(plan)
    sent = txn.talk.expect(EndTxnRequest)
    txn.talk.reply(sent, EndTxnResponse(error_code=ErrorCode.PRODUCER_FENCED))
    with pytest.raises(ProducerFencedError, match="EndTxn"):
        txn.talk.outcome(op)
    assert txn.machine.state is S.FATAL_ERROR
    assert any(isinstance(e, ProducerFatal) for e in txn.talk.events)
    with pytest.raises(ProducerFencedError):
        txn.machine.begin(txn.now)


def test_a_fenced_produce_response_makes_the_machine_fatal() -> None:
    txn, (plan, handle) = in_transaction_with_a_record()
    results = {TP: wire.PartitionResult(error_code=ErrorCode.INVALID_PRODUCER_EPOCH)}
    txn.core.sender.on_response(plan, results, txn.now)
    assert txn.machine.fatal
    with pytest.raises(ProducerFencedError):
        handle.result()
    txn.append()
    assert txn.drain() == []


def test_a_failed_record_makes_the_transaction_abortable_and_abort_bumps_the_epoch() -> None:
    txn, (plan, _) = in_transaction_with_a_record()
    results = {TP: wire.PartitionResult(error_code=ErrorCode.INVALID_RECORD)}
    txn.core.sender.on_response(plan, results, txn.now)
    assert txn.machine.state is S.ABORTABLE_ERROR
    txn.talk.step()
    assert any(isinstance(e, TransactionAbortable) for e in txn.talk.events)
    with pytest.raises(InvalidStateError, match="must be aborted"):
        txn.machine.commit(txn.now)
    op = txn.machine.abort(txn.now)
    sent = txn.talk.expect(EndTxnRequest)
    assert txn.talk.request(sent).committed is False
    txn.talk.reply(sent, EndTxnResponse())
    bump = txn.talk.expect(InitProducerIdRequest)
    request = txn.talk.request(bump)
    assert (request.producer_id, request.producer_epoch) == (1000, 0)
    txn.talk.reply(bump, InitProducerIdResponse(producer_id=1000, producer_epoch=1))
    assert txn.talk.outcome(op) is None
    assert txn.machine.state is S.READY and txn.machine.error is None
    txn.machine.begin(txn.now)
    txn.machine.check_can_send()


def test_abort_does_not_turn_its_own_failed_records_into_an_error() -> None:
    txn, (plan, _) = in_transaction_with_a_record()
    txn.append(TopicPartition("t", 9))
    op = txn.machine.abort(txn.now)
    txn.core.sender.fail_all(KrafkaError("transaction aborted"))
    assert txn.machine.state is S.ABORTING
    txn.answer_produce(plan)
    txn.talk.reply(txn.talk.expect(EndTxnRequest), EndTxnResponse())
    assert txn.talk.outcome(op) is None
    assert txn.machine.state is S.READY


def test_send_offsets_commits_through_the_group_coordinator() -> None:
    txn, _ = in_transaction_with_a_record()
    group = ConsumerGroupMetadata("g", generation_id=7, member_id="m-1")
    op = txn.machine.send_offsets({TP: OffsetAndMetadata(42, "meta", 3)}, group, txn.now)
    sent = txn.talk.expect(AddOffsetsToTxnRequest)
    assert txn.talk.request(sent).group_id == "g"
    txn.talk.reply(sent, AddOffsetsToTxnResponse())
    lookup = txn.talk.expect(FindCoordinatorRequest)
    request = txn.talk.request(lookup)
    assert (request.key_type, request.coordinator_keys) == (0, ["g"])
    entry = FindCoordinatorResponse.Coordinator(key="g", node_id=4, host="b4", port=9092)
    txn.talk.reply(lookup, FindCoordinatorResponse(coordinators=[entry]))
    commit = txn.talk.expect(TxnOffsetCommitRequest)
    assert commit.target == Broker(4, "b4", 9092)
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
    op = txn.machine.send_offsets({TP: OffsetAndMetadata(42)}, group, txn.now)
    txn.talk.reply(txn.talk.expect(AddOffsetsToTxnRequest), AddOffsetsToTxnResponse())
    lookup = txn.talk.expect(FindCoordinatorRequest)
    entry = FindCoordinatorResponse.Coordinator(key="g", node_id=1, host="b1", port=9092)
    txn.talk.reply(lookup, FindCoordinatorResponse(coordinators=[entry]))
    commit = txn.talk.expect(TxnOffsetCommitRequest)
    txn.talk.reply(commit, txn_offset_commit_response(ErrorCode.ILLEGAL_GENERATION))
    with pytest.raises(IllegalGenerationError):
        txn.talk.outcome(op)
    assert txn.machine.state is S.ABORTABLE_ERROR


def test_an_authorization_failure_of_the_lookup_fails_the_call() -> None:
    txn = Txn()
    op = txn.machine.initialize(txn.now)
    txn.find_coordinator(code=ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
    with pytest.raises(TransactionalIdAuthorizationFailedError):
        txn.talk.outcome(op)
    assert txn.machine.state is S.UNINITIALIZED


def test_init_producer_id_requires_v3() -> None:
    txn = Txn()
    txn.machine.initialize(txn.now)
    txn.find_coordinator()
    sent = txn.talk.expect(InitProducerIdRequest)
    assert sent.min_version == 3


class TestIdempotentOnly:
    """Without a transactional id the machine keeps the producer id and bumps epochs."""

    def start(self) -> Txn:
        txn = Txn(transactional_id=None)
        op = txn.machine.initialize(txn.now)
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
            txn.machine.begin(txn.now)

    def test_a_refused_bump_asks_for_a_new_id(self) -> None:
        txn = self.start()
        txn.core.sender.idempotence.request_bump()  # type: ignore[union-attr]
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
        identity = txn.core.sender.idempotence.identity  # type: ignore[union-attr]
        assert identity is not None and identity.producer_id == 51

    def test_a_bump_refused_for_good_is_fatal(self) -> None:
        """As in Java: without a usable id nothing can be sent. (The bump was asked again and
        again, and the answer that finally came raised: no transition from UNINITIALIZED.)"""
        txn = self.start()
        txn.core.sender.idempotence.request_bump()  # type: ignore[union-attr]
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
        txn.core.sender.idempotence.request_bump()  # type: ignore[union-attr]
        txn.talk.expect_nothing()
        txn.answer_produce(plan)
        txn.talk.expect(InitProducerIdRequest)
