"""The engine's sending against scripted Produce responses, through its contract: retries,
ordering, splitting, sequences, epoch bumps, timeouts, fencing. Responses are protocol objects
round-tripped through the wire."""

from __future__ import annotations

import pytest
from _producer_scripted import TP, Harness, sequences, values

from krafka.codec import decode_batches
from krafka.errors import (
    KafkaConnectionError,
    KafkaTimeoutError,
    OutOfOrderSequenceNumberError,
    ProducerFencedError,
    TopicAuthorizationFailedError,
)
from krafka.protocol.error_codes import ErrorCode
from krafka.protocol.messages import InitProducerIdRequest, InitProducerIdResponse
from krafka.sansio.producer import Acks, ProducerConfig, TxnState
from krafka.sansio.producer.batch import BATCH_OVERHEAD

NOT_LEADER = ErrorCode.NOT_LEADER_OR_FOLLOWER
TOO_LARGE = ErrorCode.MESSAGE_TOO_LARGE
OUT_OF_ORDER = ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER
DUPLICATE = ErrorCode.DUPLICATE_SEQUENCE_NUMBER
UNKNOWN_PID = ErrorCode.UNKNOWN_PRODUCER_ID
FENCED = ErrorCode.PRODUCER_FENCED


def cfg(**kw: object) -> ProducerConfig:
    kw.setdefault("linger", 0.0)
    kw.setdefault("retry_backoff", 0.01)
    return ProducerConfig(**kw)  # type: ignore[arg-type]


def small_batches(n: int = 2, value: int = 10, **kw: object) -> ProducerConfig:
    """Batches of exactly `n` records of `value` bytes."""
    return cfg(batch_size=BATCH_OVERHEAD + n * (21 + value), **kw)


def test_success_resolves_every_record_with_its_offset() -> None:
    h = Harness()
    handles = [h.send(b"v%d" % i) for i in range(3)]
    (plan,) = h.drain()
    assert values(plan) == [b"v0", b"v1", b"v2"]
    assert not handles[0].done
    h.answer(plan, base_offset=40)
    metas = [handle.result() for handle in handles]
    assert [m.offset for m in metas] == [40, 41, 42]
    assert metas[0].topic == "t" and metas[0].partition == 0
    assert metas[0].timestamp == 1_700_000_000_000
    snap = h.engine.metrics.snapshot()
    assert snap.records_sent == 3 and snap.batches_sent == 1 and snap.requests_sent == 1
    assert h.accumulator.buffered == 0


def test_record_queue_time_is_from_batch_creation_to_its_first_request() -> None:
    h = Harness()
    h.send(b"a")
    h.now += 0.25
    (plan,) = h.drain()
    h.answer(plan, base_offset=0)
    h.send(b"b")
    h.now += 0.05
    (plan,) = h.drain()
    snap = h.sender.metrics.snapshot()
    assert snap.record_queue_time_max == pytest.approx(0.25)
    assert snap.record_queue_time_avg == pytest.approx(0.15)


def test_sequences_are_per_partition_and_contiguous() -> None:
    h = Harness(small_batches(2, value=2))
    for i in range(5):
        h.send(b"a%d" % i)
        h.send(b"b%d" % i, tp=("t", 1))
    plans = []
    for _ in range(3):
        drained = h.drain()
        for plan in drained:
            h.answer(plan)
        plans += drained
    seen = [sequences(p) for p in plans]
    assert [s[TP] for s in seen if TP in s] == [(0, 0, 2), (2, 0, 2), (4, 0, 1)]
    assert [s[("t", 1)] for s in seen if ("t", 1) in s] == [(0, 0, 2), (2, 0, 2), (4, 0, 1)]


def test_one_request_per_broker_holds_one_batch_per_partition() -> None:
    h = Harness()
    h.leaders.update({("t", 0): 1, ("t", 1): 2, ("u", 0): 1})
    h.send(b"a")
    h.send(b"b", tp=("t", 1))
    h.send(b"c", tp=("u", 0))
    plans = {p.node_id: p for p in h.drain()}
    assert plans[1].partitions == {("t", 0), ("u", 0)}
    assert plans[2].partitions == {("t", 1)}


def test_unknown_leader_asks_for_metadata_and_waits() -> None:
    h = Harness()
    h.leaders[TP] = None
    h.send(b"a")
    assert h.drain() == []
    assert h.stale == {"t"}
    h.leaders[TP] = 3
    (plan,) = h.drain()
    assert plan.node_id == 3


def test_not_leader_retries_the_same_bytes_after_backoff_and_refreshes_metadata() -> None:
    h = Harness()
    handle = h.send(b"a")
    (plan,) = h.drain()
    payload = plan.payloads[TP]
    h.answer(plan, NOT_LEADER)
    assert not handle.done
    assert h.drain() == []  # backing off (0.01 s with jitter 0.5 -> exactly 0.01)
    assert h.stale == {"t"}  # and the metadata of "t" should be refreshed
    h.advance(0.011)
    h.leaders[TP] = 2
    (retry,) = h.drain()
    assert retry.node_id == 2 and retry.payloads[TP] == payload
    h.answer(retry, base_offset=7)
    assert handle.result().offset == 7
    assert h.engine.metrics.retries == 1


def test_ordering_is_kept_when_an_earlier_batch_fails_and_later_ones_are_rejected() -> None:
    h = Harness(small_batches(1))
    h.confirm()  # seq 0
    handles = [h.send(b"%09d" % i) for i in range(3)]
    plans = [h.drain()[0] for _ in range(3)]  # three batches in flight, seq 1, 2, 3
    h.answer(plans[0], NOT_LEADER)
    h.answer(plans[1], OUT_OF_ORDER)  # innocent: its predecessor failed
    h.answer(plans[2], OUT_OF_ORDER)
    assert not any(x.done for x in handles)
    h.advance(1.0)
    resent = []
    for _ in range(3):
        (plan,) = h.drain()
        resent.append(sequences(plan)[TP][0])
        h.answer(plan, base_offset=100 + len(resent))
    assert resent == [1, 2, 3]
    assert [x.result().offset for x in handles] == [101, 102, 103]


@pytest.mark.parametrize("idempotent", [True, False], ids=["idempotent", "plain"])
def test_after_a_leader_move_batches_reach_the_new_leader_in_send_order(idempotent: bool) -> None:
    """Three batches in flight to broker 1 when the leader moves to broker 2; the first comes
    back NOT_LEADER_OR_FOLLOWER. Nothing goes to broker 2 while batches are out at broker 1;
    the refused ones go back ahead of later ones and are resent one at a time, each after the
    one before is acknowledged; later batches follow (pipelined again). Order never depends on
    the broker refusing out-of-order sequences, so it holds without idempotence too."""
    h = Harness(
        small_batches(1, max_in_flight_requests_per_connection=5, enable_idempotence=idempotent),
        identity=(1000, 0) if idempotent else None,
    )
    h.confirm()
    handles = [h.send(b"%09d" % i) for i in range(3)]
    in_flight = [h.drain()[0] for _ in range(3)]
    assert [p.node_id for p in in_flight] == [1, 1, 1]
    h.leaders[TP] = 2
    handles += [h.send(b"%09d" % i) for i in range(3, 5)]
    assert h.drain() == []  # not to broker 2 while broker 1 may still write earlier ones
    h.answer(in_flight[0], NOT_LEADER)
    h.advance(1.0)
    assert h.drain() == []  # the retry waits for the batches still out at broker 1
    h.answer(in_flight[1], NOT_LEADER)
    h.answer(in_flight[2], NOT_LEADER)
    h.advance(1.0)
    order: list[tuple[int, bytes]] = []
    offset = 100
    while len(order) < 5:
        plans = h.drain() + h.drain()  # a second drain shows what may be pipelined
        order += [(p.node_id, v) for p in plans for v in values(p)]
        for plan in plans:
            h.answer(plan, base_offset=offset)
            offset += 1
    assert order == [(2, b"%09d" % i) for i in range(5)]
    assert [x.result().offset for x in handles] == [100, 101, 102, 103, 104]


def test_a_partition_waits_for_its_retried_batch_before_sending_new_ones() -> None:
    h = Harness(small_batches(1, max_in_flight_requests_per_connection=5))
    h.send(b"%09d" % 0)
    (first,) = h.drain()
    h.answer(first, NOT_LEADER)
    h.advance(1.0)
    h.send(b"%09d" % 1)
    (retry,) = h.drain()
    assert values(retry) == [b"%09d" % 0]
    assert h.drain() == []  # the new batch waits until the retried one is acknowledged
    h.answer(retry)
    (later,) = h.drain()
    assert values(later) == [b"%09d" % 1]


def test_an_idempotent_partitions_first_batch_goes_alone_until_acknowledged() -> None:
    """Found on Apache Kafka: the first batch of a new partition came back
    NOT_LEADER_OR_FOLLOWER (the partition was still being set up) while the batches pipelined
    behind it were accepted, since a broker that holds no state for a producer accepts any
    first sequence. They were written ahead of it, and its retry was refused as
    OUT_OF_ORDER_SEQUENCE_NUMBER. The first batch now goes alone."""
    h = Harness(small_batches(1, max_in_flight_requests_per_connection=5))
    handles = [h.send(b"%09d" % i) for i in range(4)]
    (first,) = h.drain()
    assert h.drain() == []  # nothing of the partition rides behind its first batch
    h.answer(first, NOT_LEADER)
    h.advance(1.0)
    (retry,) = h.drain()
    assert sequences(retry)[TP][0] == 0 and h.drain() == []
    h.answer(retry, base_offset=0)
    pipelined = h.drain() + h.drain() + h.drain()
    assert [sequences(p)[TP][0] for p in pipelined] == [1, 2, 3]  # acknowledged: pipelined
    for offset, plan in enumerate(pipelined, start=1):
        h.answer(plan, base_offset=offset)
    assert [x.result().offset for x in handles] == [0, 1, 2, 3]


def test_a_new_epoch_sends_each_partitions_first_batch_alone_again() -> None:
    h = Harness(small_batches(1, max_in_flight_requests_per_connection=5))
    h.confirm()
    h.send(b"%09d" % 1)
    (plan,) = h.drain()
    h.answer(plan, UNKNOWN_PID)
    h.grant_id(1000, 1)
    h.advance(1.0)
    h.send(b"%09d" % 2)
    (first,) = h.drain()
    assert sequences(first)[TP] == (0, 1, 1) and h.drain() == []


def test_at_most_five_batches_of_a_partition_in_flight_when_idempotent() -> None:
    h = Harness(small_batches(1, max_in_flight_requests_per_connection=5))
    h.confirm()
    for i in range(7):
        h.send(b"%09d" % i)
    plans = [p for _ in range(7) for p in h.drain()]
    assert len(plans) == 5
    h.answer(plans[0])
    assert len(h.drain()) == 1


def test_in_flight_limit_per_broker() -> None:
    h = Harness(small_batches(1, max_in_flight_requests_per_connection=2))
    h.confirm()
    for i in range(3):
        h.send(b"%09d" % i)
    first = h.drain() + h.drain()
    assert len(first) == 2 and h.drain() == []
    h.answer(first[0])
    assert len(h.drain()) == 1


def test_with_no_linger_a_partial_batch_gathers_while_its_partition_has_one_in_flight() -> None:
    """`gather` (the io producer's default): records go out at once when the partition has
    nothing in flight, and together behind the answer when it has; a full batch still goes
    at once, and without `gather` every partial batch does (Java's way)."""
    h = Harness(cfg(gather=True))
    h.confirm()
    h.send(b"a")
    (first,) = h.drain()
    assert values(first) == [b"a"]
    for value in (b"b", b"c", b"d"):
        h.send(value)
        assert h.drain() == []  # waits for the one in flight, gathering
    h.answer(first)
    (second,) = h.drain()
    assert values(second) == [b"b", b"c", b"d"]

    full = Harness(small_batches(2, gather=True))
    full.confirm()
    full.send(b"%010d" % 0)
    assert len(full.drain()) == 1
    full.send(b"%010d" % 1)
    full.send(b"%010d" % 2)  # fills a batch: it goes, in flight beside the first
    assert len(full.drain()) == 1

    java = Harness(cfg())
    java.confirm()
    java.send(b"a")
    assert len(java.drain()) == 1
    java.send(b"b")
    assert len(java.drain()) == 1


def test_message_too_large_splits_the_batch_keeping_sequences_and_handles() -> None:
    h = Harness(cfg(batch_size=10_000))
    handles = [h.send(b"r%d" % i) for i in range(5)]
    (plan,) = h.drain()
    assert sequences(plan)[TP] == (0, 0, 5)
    h.answer(plan, TOO_LARGE)
    (first,) = h.drain()  # one batch per partition per request
    assert sequences(first)[TP] == (0, 0, 2) and values(first) == [b"r0", b"r1"]
    assert h.drain() == []  # a retried batch goes alone: the second half waits for the first
    h.answer(first, base_offset=10)
    (second,) = h.drain()
    assert sequences(second)[TP] == (2, 0, 3) and values(second) == [b"r2", b"r3", b"r4"]
    h.answer(second, base_offset=12)
    assert [x.result().offset for x in handles] == [10, 11, 12, 13, 14]
    assert h.accumulator.buffered == 0


def test_a_single_record_too_large_fails() -> None:
    h = Harness()
    handle = h.send(b"big")
    (plan,) = h.drain()
    h.answer(plan, TOO_LARGE)
    assert handle.done and type(handle.exception()).__name__ == "MessageTooLargeError"


def answer_bump(h: Harness, epoch: int) -> tuple[int, int]:
    """Answer the machine's epoch bump; returns the (producer id, epoch) it asked with."""
    assert h.talk is not None
    sent = h.talk.expect(InitProducerIdRequest)
    request = h.talk.request(sent)
    h.talk.reply(sent, InitProducerIdResponse(producer_id=1000, producer_epoch=epoch))
    h.talk.step()
    return request.producer_id, request.producer_epoch


def test_out_of_order_without_an_earlier_failure_is_retried_under_a_new_epoch() -> None:
    """A gap in the sequences: an idempotent producer bumps its epoch and retries (Java's
    `canRetry` retries every OUT_OF_ORDER_SEQUENCE_NUMBER of an idempotent producer)."""
    h = Harness(small_batches(1))
    bad = h.send(b"%09d" % 0)
    later = h.send(b"%09d" % 1)
    (plan,) = h.drain()
    h.answer(plan, OUT_OF_ORDER)
    assert not bad.done
    assert h.wants_producer_id()
    assert h.drain() == []  # nothing is sent with the broken epoch
    h.grant_id(1000, 1)
    h.advance(1.0)
    (plan,) = h.drain()
    assert sequences(plan)[TP] == (0, 1, 1)  # new epoch, sequences restart at 0
    h.answer(plan, base_offset=5)
    (plan,) = h.drain()
    assert sequences(plan)[TP] == (1, 1, 1)
    h.answer(plan, base_offset=6)
    assert (bad.result().offset, later.result().offset) == (5, 6)


@pytest.mark.parametrize("where", ["in-flight", "queued-retry"])
def test_an_expired_sent_batch_bumps_the_epoch_and_later_batches_are_delivered(
    where: str,
) -> None:
    """A sent batch that expires may or may not be in the log: the partition's later
    sequences cannot be trusted (Java's `handleFailedBatch`). Without a new epoch the next
    batch carries a sequence whose predecessor the broker never saw: OUT_OF_ORDER_SEQUENCE."""
    h = Harness(cfg(delivery_timeout=5.0))
    h.confirm()  # sequence 0 acknowledged under epoch 0
    lost = h.send(b"lost")
    (plan,) = h.drain()  # sequence 1: the network is cut
    if where == "in-flight":
        h.advance(5.5)
        h.fail(plan, KafkaConnectionError("request timed out"))
    else:
        h.fail(plan, KafkaConnectionError("lost"))
        h.advance(5.5)
        h.step()
    assert isinstance(lost.exception(), KafkaTimeoutError)
    healthy = h.send(b"healthy")
    assert h.wants_producer_id()
    assert h.drain() == []  # nothing goes under the untrusted sequences
    assert answer_bump(h, 1) == (1000, 0)  # KIP-360: the current id and epoch
    (plan,) = h.drain()
    assert sequences(plan)[TP] == (0, 1, 1)
    h.answer(plan, base_offset=2)
    assert healthy.result().offset == 2


def test_out_of_order_behind_an_expired_batch_is_retried_under_a_new_epoch() -> None:
    h = Harness(small_batches(1, delivery_timeout=5.0))
    h.confirm()
    lost = h.send(b"%09d" % 0)
    (first,) = h.drain()  # sequence 1
    h.advance(1.0)
    behind = h.send(b"%09d" % 1)
    (second,) = h.drain()  # sequence 2, pipelined
    h.advance(4.5)
    h.fail(first, KafkaConnectionError("request timed out"))
    assert isinstance(lost.exception(), KafkaTimeoutError)
    h.answer(second, OUT_OF_ORDER)  # the broker never got sequence 1
    assert not behind.done
    assert h.wants_producer_id()
    h.grant_id(1000, 1)
    h.advance(0.1)
    (plan,) = h.drain()
    assert sequences(plan)[TP] == (0, 1, 1)
    h.answer(plan, base_offset=3)
    assert behind.result().offset == 3


def test_a_batch_of_an_earlier_epoch_expiring_asks_for_no_new_one() -> None:
    h = Harness(cfg(delivery_timeout=5.0))
    other = ("t", 1)
    h.leaders[other] = 2
    h.confirm()
    h.confirm(other)
    h.send(b"a")
    h.send(b"b", other)
    stale, bumping = h.drain()
    h.fail(stale, KafkaConnectionError("lost"))  # queued for a retry
    h.answer(bumping, UNKNOWN_PID)
    assert answer_bump(h, 1) == (1000, 0)
    h.advance(5.5)
    h.step()  # "a" still carries its epoch 0 sequence
    assert not h.wants_producer_id()


def test_out_of_order_fails_a_transactional_batch() -> None:
    h = Harness(cfg(transactional_id="tx"), transactional=True)
    assert h.txn is not None
    h.begin_with(TP)
    handle = h.send(b"a")
    (plan,) = h.drain()
    h.answer(plan, OUT_OF_ORDER)
    assert isinstance(handle.exception(), OutOfOrderSequenceNumberError)
    assert h.txn.state is TxnState.ABORTABLE_ERROR


def test_bump_waits_for_requests_in_flight() -> None:
    h = Harness(small_batches(1))
    h.confirm()
    h.send(b"%09d" % 0)
    h.send(b"%09d" % 1)
    p0, p1 = h.drain()[0], h.drain()[0]
    h.answer(p0, UNKNOWN_PID)
    assert not h.wants_producer_id()  # p1 is still out there
    h.answer(p1, OUT_OF_ORDER)  # its predecessor is pending: retried, not failed
    assert h.wants_producer_id()


def test_unknown_producer_id_retries_under_the_new_epoch() -> None:
    h = Harness()
    handle = h.send(b"a")
    (plan,) = h.drain()
    h.answer(plan, UNKNOWN_PID)
    assert h.wants_producer_id() and not handle.done
    h.grant_id(1000, 3)
    h.advance(1.0)
    (plan,) = h.drain()
    assert sequences(plan)[TP] == (0, 3, 1)
    h.answer(plan, base_offset=9)
    assert handle.result().offset == 9


def test_connection_loss_retries_with_the_same_sequence_and_duplicates_count_as_success() -> None:
    h = Harness()
    handle = h.send(b"a")
    (plan,) = h.drain()
    h.fail(plan, KafkaConnectionError("lost"))
    h.advance(1.0)
    (retry,) = h.drain()
    assert sequences(retry)[TP] == (0, 0, 1)
    h.answer(retry, DUPLICATE)
    assert handle.done and handle.exception() is None
    assert handle.result().offset == -1
    snap = h.engine.metrics.snapshot()
    assert (snap.duplicate_batches, snap.duplicate_records) == (1, 1)
    assert (snap.records_sent, snap.errors) == (1, 0)


def test_only_duplicate_answers_count_as_duplicates() -> None:
    h = Harness(small_batches(3))
    h.confirm()
    first = [h.send(b"%09d" % i) for i in range(3)]
    second = [h.send(b"%09d" % i) for i in range(3, 5)]
    plans = [h.drain()[0] for _ in range(2)]
    h.answer(plans[0], DUPLICATE)
    h.answer(plans[1], base_offset=10)
    assert [x.result().offset for x in first + second] == [-1, -1, -1, 10, 11]
    snap = h.engine.metrics.snapshot()
    assert (snap.duplicate_batches, snap.duplicate_records) == (1, 3)
    assert (snap.batches_sent, snap.records_sent) == (3, 6)


def test_a_response_without_the_partition_is_retried_not_taken_as_acks_zero() -> None:
    h = Harness()
    handle = h.send(b"a")
    (plan,) = h.drain()
    h.answer(plan, {})  # acks=all: a response that names no partition delivered nothing
    assert not handle.done
    h.advance(1.0)
    (retry,) = h.drain()
    assert sequences(retry)[TP] == (0, 0, 1)
    h.answer(retry, base_offset=5)
    assert handle.result().offset == 5
    assert h.engine.metrics.snapshot().duplicate_records == 0


def test_retriable_errors_stop_at_delivery_timeout() -> None:
    h = Harness(cfg(delivery_timeout=1.0, retry_backoff=0.1, retry_backoff_max=0.2))
    handle = h.send(b"a")
    while not handle.done:
        plans = h.drain()
        for plan in plans:
            h.answer(plan, NOT_LEADER)
        h.advance(0.05)
    error = handle.exception()
    assert isinstance(error, KafkaTimeoutError) and "delivery_timeout" in str(error)
    assert h.now <= 1.1


def test_retries_are_bounded_by_the_retries_setting() -> None:
    h = Harness(cfg(retries=2, enable_idempotence=False, acks=Acks.LEADER))
    handle = h.send(b"a")
    attempts = 0
    while not handle.done:
        for plan in h.drain():
            attempts += 1
            h.answer(plan, NOT_LEADER)
        h.advance(1.0)
    assert attempts == 3
    assert type(handle.exception()).__name__ == "NotLeaderOrFollowerError"


def test_backoff_is_exponential_and_capped() -> None:
    h = Harness(cfg(retry_backoff=0.1, retry_backoff_max=0.3))
    assert [round(h.sender._backoff(n), 3) for n in (1, 2, 3, 4)] == [0.1, 0.2, 0.3, 0.3]


def test_non_retriable_error_fails_the_batch() -> None:
    h = Harness()
    handle = h.send(b"a")
    (plan,) = h.drain()
    h.answer(plan, 29)
    assert isinstance(handle.exception(), TopicAuthorizationFailedError)
    with pytest.raises(TopicAuthorizationFailedError):
        handle.result()
    assert h.engine.metrics.errors == 1
    assert h.wants_producer_id()  # its sequence was not written: later ones need a new epoch


def test_acks_zero_completes_without_offsets() -> None:
    h = Harness(cfg(acks=Acks.NONE, enable_idempotence=False), identity=None)
    handle = h.send(b"a")
    (plan,) = h.drain()
    assert sequences(plan)[TP] == (-1, -1, 1)
    h.engine.on_response(plan.sent, None, h.now)  # acks=0: no response
    assert handle.result().offset == -1


def test_idempotent_producer_waits_for_its_producer_id() -> None:
    h = Harness(identity=None)
    h.send(b"a")
    assert h.drain() == []
    h.grant_id(77, 0)
    assert not h.wants_producer_id() and len(h.drain()) == 1


def test_max_request_size_spreads_partitions_over_requests() -> None:
    h = Harness(cfg(max_request_size=300))
    for p in range(3):
        h.send(b"x" * 100, tp=("t", p))
    first = h.drain()
    assert len(first) == 1 and len(first[0].partitions) == 2  # the second batch passed the limit
    h.answer(first[0])
    (second,) = h.drain()
    assert len(second.partitions) == 1


def test_expired_batches_in_the_accumulator_fail() -> None:
    h = Harness(cfg(delivery_timeout=2.0, linger=5.0))
    handle = h.send(b"a")
    h.now = 2.5
    h.step()
    assert isinstance(handle.exception(), KafkaTimeoutError)


def test_fencing_is_fatal_for_a_transactional_producer() -> None:
    h = Harness(cfg(transactional_id="tx"), transactional=True)
    assert h.txn is not None
    h.begin_with(TP)
    handle = h.send(b"a")
    other = h.send(b"b", tp=("t", 1))
    (plan,) = h.drain()
    assert plan.partitions == {TP}  # ("t", 1) has not joined the transaction yet
    h.answer(plan, FENCED)
    assert isinstance(handle.exception(), ProducerFencedError)
    assert h.txn.state is TxnState.FATAL_ERROR
    assert h.drain() == []
    assert isinstance(other.exception(), ProducerFencedError)  # never sent: fails with it
    with pytest.raises(ProducerFencedError):
        h.send(b"c")


def test_transactional_batches_carry_the_transactional_flag() -> None:
    h = Harness(cfg(transactional_id="tx"), transactional=True)
    h.begin_with(TP)
    h.send(b"a")
    (plan,) = h.drain()
    assert decode_batches(plan.payloads[TP])[0].is_transactional


def test_failed_batch_makes_the_transaction_abortable() -> None:
    h = Harness(cfg(transactional_id="tx"), transactional=True)
    assert h.txn is not None
    h.begin_with(TP)
    h.send(b"a")
    (plan,) = h.drain()
    h.answer(plan, ErrorCode.TOPIC_AUTHORIZATION_FAILED)
    assert h.txn.state is TxnState.ABORTABLE_ERROR


def test_abandon_fails_queued_and_in_flight_batches() -> None:
    h = Harness(small_batches(1))
    sent = h.send(b"%09d" % 0)
    queued = h.send(b"%09d" % 1)
    h.drain()
    h.engine.close(KafkaTimeoutError("closed"))
    assert isinstance(sent.exception(), KafkaTimeoutError)
    assert isinstance(queued.exception(), KafkaTimeoutError)
    assert h.engine.in_flight == 0 and h.accumulator.buffered == 0


def test_a_finished_batch_lets_go_of_its_records_while_its_handles_live_on() -> None:
    """Java frees a batch's buffer once it completes; a handle the application keeps (every
    confirmed `send` keeps one) must not keep the batch's records and request bytes alive."""
    h = Harness(cfg(batch_size=10_000))
    delivered = [h.send(b"d%d" % i) for i in range(3)]
    (plan,) = h.drain()
    h.answer(plan, base_offset=7)
    split = [h.send(b"s%d" % i, tp=("t", 2)) for i in range(4)]
    (plan,) = h.drain()
    h.answer(plan, TOO_LARGE)
    for _ in range(2):
        (plan,) = h.drain()
        h.answer(plan, base_offset=20)
    failed = h.send(b"f", tp=("t", 1))
    (plan,) = h.drain()
    h.answer(plan, 29)
    for handle in (delivered[0], failed, split[0]):
        assert handle.batch.builder is None and handle.batch.payload is None
    assert [x.result().offset for x in delivered] == [7, 8, 9]
    assert delivered[0].batch.count == 3 and failed.batch.count == 1 and split[0].batch.count == 4
    assert [x.result().offset for x in split] == [20, 21, 20, 21]
    assert isinstance(failed.exception(), TopicAuthorizationFailedError)
