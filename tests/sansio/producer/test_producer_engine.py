"""The `ProducerEngine` as a `Machine`: honest deadlines (a driver trusting them never spins),
one metadata ask at a time, delivery events, flush and close as operations, the append path."""

from __future__ import annotations

import pytest
from _producer_scripted import TP, Cluster, Harness, values

from krafka.errors import InvalidTopicError, KafkaTimeoutError, ProducerFencedError
from krafka.protocol.error_codes import ErrorCode
from krafka.protocol.messages import InitProducerIdRequest, InitProducerIdResponse
from krafka.sansio.actions import Failed, RefreshMetadata, SendRequest
from krafka.sansio.producer import (
    AppendBlocked,
    AppendWait,
    BatchDone,
    Due,
    ProducerConfig,
    ProducerEngine,
    TopicsInUse,
)
from krafka.sansio.producer.batch import BATCH_OVERHEAD
from krafka.sansio.producer.txn_state import TxnState


def test_a_driver_trusting_the_deadline_does_not_spin_while_the_producer_id_is_pending() -> None:
    """The spin bug: while no producer id was granted the accumulator named a due time already
    past (its linger had run out), so a driver sleeping until it looped without end (30,650
    turns in 0.3 s; krafka.io hid it behind a 5 ms poll). Waiting for an answer is no deadline.
    """
    engine = ProducerEngine(ProducerConfig(linger=0.005), Cluster())
    engine.initialize(0.0)
    engine.append("t", 0, None, None, b"v", None, 0.0, 1)
    now, turns, answer_at = 0.0, 0, 0.3
    init = None
    while True:
        actions = engine.next_actions(now)
        init = init or next((a for a in actions if isinstance(a, SendRequest)), None)
        turns += 1
        deadline = engine.next_deadline()
        assert deadline is None or deadline > now, f"a deadline at {deadline} at {now}"
        if deadline is None or deadline >= answer_at:
            break
        now = deadline
    assert turns <= 3  # the first look, the linger running out, nothing more
    assert init is not None and isinstance(init.request, InitProducerIdRequest)
    engine.on_response(init, InitProducerIdResponse(producer_id=1, producer_epoch=0), answer_at)
    (produce,) = [a for a in engine.next_actions(answer_at) if isinstance(a, SendRequest)]
    assert produce.target.node_id == 1  # type: ignore[union-attr]


def test_requests_in_flight_up_to_the_cap_name_no_deadline_but_the_delivery_timeout() -> None:
    h = Harness(
        ProducerConfig(
            linger=0.0,
            batch_size=BATCH_OVERHEAD + 31,
            max_in_flight_requests_per_connection=1,
            delivery_timeout=30.0,
        )
    )
    h.confirm()
    h.send(b"%09d" % 1)
    h.send(b"%09d" % 2)  # a second sealed batch, behind the cap
    (first,) = h.drain()
    assert h.drain() == []
    assert h.engine.next_deadline() == pytest.approx(h.now + 30.0)  # its delivery timeout
    h.answer(first)
    (second,) = h.drain()
    assert values(second) == [b"%09d" % 2]


def drive(engine: ProducerEngine, now: float, until: float) -> int:
    """A driver trusting `next_deadline` from `now` to `until` with no answer coming: the
    number of `next_actions` turns it made (a past deadline would make it spin)."""
    turns = 0
    while True:
        engine.next_actions(now)
        turns += 1
        deadline = engine.next_deadline()
        assert deadline is None or deadline > now, f"a deadline at {deadline} at {now}"
        if deadline is None or deadline >= until or turns > 100:
            return turns
        now = deadline


def test_a_driver_trusting_the_deadline_does_not_spin_with_the_in_flight_slot_taken() -> None:
    h = Harness(ProducerConfig(linger=0.0, max_in_flight_requests_per_connection=1))
    h.confirm()
    h.send(b"a")
    (first,) = h.drain()
    h.send(b"b", ("t", 1))  # same broker: waits for the slot
    assert drive(h.engine, h.now, h.now + 0.3) <= 2
    h.answer(first)
    assert [p.partitions for p in h.drain()] == [{("t", 1)}]


def test_a_driver_trusting_the_deadline_does_not_spin_without_a_leader() -> None:
    h = Harness(ProducerConfig(linger=0.005))
    h.leaders[TP] = None
    h.send(b"a")
    assert drive(h.engine, h.now, h.now + 0.3) <= 3
    h.leaders[TP] = 1
    h.engine.metadata_updated(h.now + 0.3)
    h.now += 0.3
    assert len(h.drain()) == 1


def test_a_partition_without_a_leader_asks_once_and_waits_for_the_metadata() -> None:
    h = Harness()
    h.leaders[TP] = None
    h.send(b"a")
    actions = h.engine.next_actions(h.now)
    assert RefreshMetadata(frozenset({"t"})) in actions
    h.advance(1.0)
    assert not any(isinstance(a, RefreshMetadata) for a in h.engine.next_actions(h.now))
    deadline = h.engine.next_deadline()
    assert deadline is not None and deadline > h.now + 100  # the delivery timeout only
    h.engine.metadata_updated(h.now)  # served, still no leader: asked again
    assert RefreshMetadata(frozenset({"t"})) in h.engine.next_actions(h.now)
    h.leaders[TP] = 2
    h.engine.metadata_updated(h.now)
    (plan,) = h.drain()
    assert plan.node_id == 2


def test_delivery_events_come_out_with_the_next_actions_after_the_answer() -> None:
    h = Harness()
    handle = h.send(b"a")
    (plan,) = h.drain()
    h.answer(plan, base_offset=3)
    assert handle.done
    events = h.engine.next_actions(h.now)
    assert [e.batch for e in events if isinstance(e, BatchDone)] == [handle.batch]
    assert handle.result().offset == 3


def test_flush_is_an_operation_that_ignores_linger() -> None:
    h = Harness(ProducerConfig(linger=60.0))
    handle = h.send(b"a")
    assert h.drain() == []
    assert h.engine.next_deadline() == pytest.approx(60.0)
    op = h.engine.flush(h.now)
    assert h.engine.due
    (plan,) = h.drain()
    assert h.talk.pending(op)
    h.answer(plan)
    assert h.talk.outcome(op) is None and handle.done
    assert h.talk.outcome(h.engine.flush(h.now)) is None  # nothing pending: done at once


def test_close_fails_everything_and_reports_each_batch() -> None:
    h = Harness(ProducerConfig(linger=0.0, batch_size=BATCH_OVERHEAD + 31))
    sent = h.send(b"%09d" % 0)
    queued = h.send(b"%09d" % 1)
    h.drain()
    flush = h.engine.flush(h.now)
    h.engine.close(KafkaTimeoutError("closed"))
    actions = h.engine.next_actions(h.now)
    assert not any(isinstance(a, SendRequest) for a in actions)
    done = {e.batch for e in actions if isinstance(e, BatchDone)}
    assert done == {sent.batch, queued.batch}
    assert isinstance(sent.exception(), KafkaTimeoutError)
    assert next(a for a in actions if isinstance(a, Failed)).op == flush
    assert h.engine.next_deadline() is None
    with pytest.raises(KafkaTimeoutError, match="closed"):
        h.send(b"late")


def test_append_says_what_it_waits_for_and_changes_nothing() -> None:
    h = Harness(ProducerConfig(linger=1.0, buffer_memory=200, batch_size=150))
    with pytest.raises(AppendBlocked) as blocked:
        h.engine.append("new", None, None, None, b"v", None, h.now, 1)
    assert blocked.value.reason is AppendWait.METADATA and h.engine.due
    assert RefreshMetadata(frozenset({"new"})) in h.engine.next_actions(h.now)
    h.send(b"x" * 100)  # 121 bytes: the buffer holds 200
    with pytest.raises(AppendBlocked) as blocked:
        h.send(b"y" * 100, ("t", 1))
    assert blocked.value.reason is AppendWait.BUFFER and blocked.value.size == 121
    assert not h.engine.has_room(121) and h.engine.has_room(79)
    with pytest.raises(InvalidTopicError):
        h.engine.append("bad topic", None, None, None, b"v", None, h.now, 1)
    with pytest.raises(ValueError, match=r"it has 16 partitions \(0-15\)"):
        h.engine.append("t", 16, None, None, b"v", None, h.now, 1)


def test_due_says_when_an_append_needs_the_driver() -> None:
    h = Harness(ProducerConfig(linger=1.0, batch_size=BATCH_OVERHEAD + 62))
    h.send(b"a" * 10)
    assert h.engine.due is Due.WAKE  # a batch opened: its linger starts
    h.step()
    assert h.engine.due is Due.NOTHING
    h.send(b"b" * 10)
    assert h.engine.due is Due.SEALED  # full: it may go now


def test_topics_in_use_are_reported_at_most_once_a_second() -> None:
    h = Harness(ProducerConfig(linger=0.0, enable_idempotence=False, acks=1), identity=None)
    reports = []
    for tick in range(20):
        h.now = tick * 0.25
        h.send(b"v", ("t", tick % 2))
        h.send(b"v", ("u", 0))
        for plan in h.drain():
            h.answer(plan)
        reports += [e for e in h.talk.events if isinstance(e, TopicsInUse)]
        h.talk.events.clear()
    assert len(reports) == 5 and reports[0] == TopicsInUse(frozenset({"t", "u"}))


def test_a_fatal_error_fails_flushes_and_later_appends() -> None:
    h = Harness(ProducerConfig(linger=60.0, transactional_id="tx"), transactional=True)
    h.begin_with(TP)
    handle = h.send(b"a")
    op = h.engine.flush(h.now)
    (plan,) = h.drain()
    h.answer(plan, 90)  # PRODUCER_FENCED
    with pytest.raises(ProducerFencedError):
        h.talk.outcome(op)
    assert isinstance(handle.exception(), ProducerFencedError)
    with pytest.raises(ProducerFencedError):
        h.send(b"b")
    with pytest.raises(ProducerFencedError):
        h.talk.outcome(h.engine.flush(h.now))


@pytest.mark.parametrize("partition", [-1, 16, 99])
def test_a_partition_outside_the_topic_is_refused_naming_the_topic_and_its_partitions(
    partition: int,
) -> None:
    """Issue 27: `partition=-1` was refused as "'t' has 16 partitions, not 0"."""
    h = Harness()
    message = rf"partition {partition} of topic 't' does not exist: it has 16 partitions \(0-15\)"
    with pytest.raises(ValueError, match=message):
        h.engine.append("t", partition, None, None, b"v", None, h.now, 1)
    assert h.engine.pending() == []


def test_a_topic_the_broker_calls_invalid_fails_the_append_once_the_answer_is_in() -> None:
    """Issue 27: the record waited for metadata until `max_block` ("no metadata"); Java fails
    the send with InvalidTopicException once the Metadata answer says so."""
    h = Harness()
    with pytest.raises(AppendBlocked):
        h.engine.append("clash", None, None, None, b"v", None, h.now, 1)
    assert RefreshMetadata(frozenset({"clash"})) in h.engine.next_actions(h.now)
    h.cluster.topic_errors["clash"] = ErrorCode.INVALID_TOPIC_EXCEPTION
    h.engine.metadata_updated(h.now)
    for _ in range(2):  # and again at once, without waiting for another answer
        with pytest.raises(InvalidTopicError, match="clash"):
            h.engine.append("clash", None, None, None, b"v", None, h.now, 1)
    assert h.engine.pending() == []


def test_a_record_refused_for_an_unusable_topic_dooms_its_transaction() -> None:
    """Committing the other records would make the transaction partial (as in Java)."""
    h = Harness(ProducerConfig(linger=0.0, transactional_id="tx"), transactional=True)
    h.cluster.topic_errors["clash"] = ErrorCode.INVALID_TOPIC_EXCEPTION
    h.begin_with(TP)
    h.send(b"a")
    with pytest.raises(InvalidTopicError):
        h.engine.append("clash", None, None, None, b"v", None, h.now, 1)
    assert h.txn is not None and h.txn.state is TxnState.ABORTABLE_ERROR


def test_an_idempotent_producer_asks_for_its_producer_id_itself_once_it_has_records() -> None:
    """As Java's sender: without `initialize` an idempotent (not transactional) producer left
    its records unsent until their delivery timeout, no request and no deadline before it."""
    engine = ProducerEngine(ProducerConfig(linger=0.0), Cluster())
    assert engine.next_actions(0.0) == []  # nothing to send: no request yet
    engine.append("t", 0, None, None, b"v", None, 0.0, 1)
    (init,) = [a for a in engine.next_actions(0.0) if isinstance(a, SendRequest)]
    assert isinstance(init.request, InitProducerIdRequest)
    engine.on_response(init, InitProducerIdResponse(producer_id=1, producer_epoch=0), 0.1)
    (produce,) = [a for a in engine.next_actions(0.1) if isinstance(a, SendRequest)]
    assert produce.target.node_id == 1  # type: ignore[union-attr]


def test_appends_within_linger_make_one_batch_whatever_answers_arrive_meanwhile() -> None:
    """The one-driver client runs the engine after every input (answers included): a batch
    still lingering must keep filling while a request to its broker is in flight and answered,
    and go once its linger ran out, with every record appended meanwhile (issue 22: lingered
    batches going out early made more, smaller requests)."""
    h = Harness(ProducerConfig(linger=0.005))
    h.send(b"first")
    h.advance(0.005)
    (in_flight,) = h.drain()
    batches = [in_flight]
    opened = h.now
    for i in range(100):
        h.send(b"%03d" % i)
        h.advance(0.00004)
        if i == 50:
            h.answer(in_flight)
        batches += h.drain()  # the core steps the engine after each input
    assert len(batches) == 1
    assert h.engine.next_deadline() == pytest.approx(opened + 0.005)
    h.now = opened + 0.005
    (lingered,) = h.drain()
    assert values(lingered) == [b"%03d" % i for i in range(100)]


def test_seal_open_lets_the_full_batch_go_before_the_next_record_opens_one() -> None:
    h = Harness(ProducerConfig(linger=1.0))
    h.send(b"a")
    h.step()
    assert h.engine.seal_open(*TP)
    assert h.engine.due is Due.SEALED
    assert not h.engine.seal_open(*TP)  # nothing open any more
    (sealed,) = h.drain()
    assert values(sealed) == [b"a"]
    h.advance(0.5)
    h.send(b"b")  # a new batch: its linger starts now
    assert h.engine.next_deadline() == pytest.approx(h.now + 1.0)


def test_seal_open_leaves_a_transactional_producers_batches_alone() -> None:
    h = Harness(ProducerConfig(linger=1.0, transactional_id="t"), transactional=True)
    h.begin_with(TP)
    h.send(b"a")
    assert not h.engine.seal_open(*TP)
