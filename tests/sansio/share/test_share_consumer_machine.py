"""The share consumer machine in scripted conversations: sessions per leader, settlements riding
on fetches or sent alone, commits, both acknowledgement modes, RENEW, errors and closing."""

from __future__ import annotations

import pytest
from _share_scripted import Share, acks_in, batch, forgotten_in, named_in, tp

from krafka.errors import (
    IllegalStateError,
    InvalidRecordStateError,
    KafkaConnectionError,
    ShareSessionNotFoundError,
)
from krafka.protocol.error_codes import ErrorCode
from krafka.sansio.actions import RefreshMetadata
from krafka.sansio.share import AcknowledgementsCommitted, AcknowledgeType, Phase, RecordsAvailable

ACCEPT, RELEASE, REJECT, RENEW = (int(t) for t in AcknowledgeType)


def started(mode: str = "implicit", **kw: object) -> Share:
    share = Share(mode, **kw)  # type: ignore[arg-type]
    share.join("a-0", "a-1", "b-0", leaders={"a-0": 1, "a-1": 2, "b-0": 1})
    share.machine.poll(share.now)
    return share


def test_one_session_per_leader_full_then_incremental() -> None:
    share = started()
    first, second = share.fetch(), share.fetch()
    by_node = {s.target.node_id: r for s, r in (first, second)}
    assert named_in(by_node[1]) == {tp("a-0"), tp("b-0")} and named_in(by_node[2]) == {tp("a-1")}
    assert {r.share_session_epoch for r in by_node.values()} == {0}
    assert by_node[1].max_records == 500 and by_node[1].member_id == "m-1"
    sent = first[0] if first[0].target.node_id == 1 else second[0]
    share.reply_fetch(sent, {"a-0": (batch(0, [b"x", b"y"]), [(0, 1, 1)])})
    assert share.events_of(RecordsAvailable)
    records = share.machine.poll(share.now)
    assert [(r.value, r.delivery_count) for r in records] == [(b"x", 1), (b"y", 1)]
    sent, request = share.fetch()  # node 1 again: incremental, nothing new to name
    assert request.share_session_epoch == 1 and named_in(request) == set()
    assert acks_in(request) == {}  # implicit: accepted at the *next* poll
    share.reply_fetch(sent)
    share.machine.poll(share.now)
    sent, request = share.fetch()
    assert request.share_session_epoch == 2
    assert acks_in(request) == {tp("a-0"): [(0, 1, [ACCEPT])]}


def test_gap_for_acquired_offsets_without_records_and_reject_for_corrupt_batches() -> None:
    share = started("explicit")
    sent, _ = share.fetch()
    share.fetch()
    good = batch(0, [b"0", b"1"])
    corrupt = bytearray(batch(5, [b"5", b"6"]))
    corrupt[-1] ^= 0xFF
    share.reply_fetch(sent, {"a-0": (good + bytes(corrupt), [(0, 3, 1), (5, 6, 2)])})
    records = share.machine.poll(share.now)
    assert [r.offset for r in records] == [0, 1]
    for r in records:
        share.machine.acknowledge(tp("a-0"), r.offset, AcknowledgeType.ACCEPT)
    with pytest.raises(Exception, match="corrupt share-fetch data for a-0"):
        share.machine.poll(share.now)  # the batch's error is reported once nothing is buffered
    sent, request = share.fetch()
    assert acks_in(request) == {tp("a-0"): [(0, 3, [ACCEPT, ACCEPT, 0, 0]), (5, 6, [REJECT])]}


def test_explicit_mode_rules_and_acknowledge_by_coordinates() -> None:
    share = started("explicit")
    sent, _ = share.fetch()
    share.fetch()
    share.reply_fetch(sent, {"b-0": (batch(10, [b"p", b"q", b"r"]), [(10, 12, 1)])})
    records = share.machine.poll(share.now)
    with pytest.raises(IllegalStateError, match="b-0 offset 10"):
        share.machine.poll(share.now)
    share.machine.acknowledge(tp("b-0"), 10, AcknowledgeType.ACCEPT)
    with pytest.raises(IllegalStateError, match="already acknowledged"):
        share.machine.acknowledge(tp("b-0"), 10, AcknowledgeType.REJECT)
    with pytest.raises(IllegalStateError, match="not delivered"):
        share.machine.acknowledge(tp("b-0"), 99, AcknowledgeType.ACCEPT)
    share.machine.acknowledge(tp("b-0"), 11, AcknowledgeType.RELEASE)
    share.machine.acknowledge(tp("b-0"), 12, AcknowledgeType.REJECT)
    assert share.machine.poll(share.now) == [] and len(records) == 3
    _, request = share.fetch()
    assert acks_in(request) == {tp("b-0"): [(10, 12, [ACCEPT, RELEASE, REJECT])]}


def test_implicit_mode_refuses_acknowledge() -> None:
    share = started()
    with pytest.raises(IllegalStateError, match="explicit"):
        share.machine.acknowledge(tp("a-0"), 0, AcknowledgeType.ACCEPT)


def test_commit_sends_at_once_and_completes_per_partition() -> None:
    share = started()
    sent1, _ = share.fetch()
    sent2, _ = share.fetch()
    if sent1.target.node_id != 1:
        sent1, sent2 = sent2, sent1
    share.reply_fetch(
        sent1, {"a-0": (batch(0, [b"x"]), [(0, 0, 1)]), "b-0": (batch(3, [b"z"]), [(3, 3, 1)])}
    )
    share.reply_fetch(sent2, {"a-1": (batch(7, [b"w"]), [(7, 7, 1)])})
    assert len(share.machine.poll(share.now)) == 3
    op = share.machine.commit(share.now)  # implicit: everything delivered is accepted
    acks = {}
    for _ in range(2):
        sent, request = share.acknowledge()
        acks.update(acks_in(request))
        codes = {"b-0": ErrorCode.INVALID_RECORD_STATE} if sent.target.node_id == 1 else {}
        share.reply_acknowledge(sent, codes=codes)
    assert acks == {
        tp("a-0"): [(0, 0, [ACCEPT])],
        tp("b-0"): [(3, 3, [ACCEPT])],
        tp("a-1"): [(7, 7, [ACCEPT])],
    }
    result = share.talk.outcome(op)
    assert result[tp("a-0")] is None and result[tp("a-1")] is None
    assert isinstance(result[tp("b-0")], InvalidRecordStateError)
    reports = share.events_of(AcknowledgementsCommitted)
    assert {p: o for e in reports for p, o in e.offsets.items()} == {
        tp("a-0"): {0},
        tp("b-0"): {3},
        tp("a-1"): {7},
    }


def test_commit_with_nothing_to_send_completes_at_once() -> None:
    share = started()
    assert share.talk.outcome(share.machine.commit(share.now)) == {}


def test_renew_goes_alone_at_version_2_and_hands_the_record_out_again() -> None:
    share = started("explicit", version=2)
    sent, _ = share.fetch()
    share.fetch()
    share.reply_fetch(sent, {"a-0": (batch(0, [b"slow"]), [(0, 0, 1)])})
    (record,) = share.machine.poll(share.now)
    share.machine.acknowledge(tp("a-0"), 0, AcknowledgeType.RENEW)
    (again,) = share.machine.poll(share.now)  # still the application's: handed out again
    assert again == record
    sent, request = share.acknowledge()
    assert sent.min_version == 2 and request.is_renew_ack
    assert acks_in(request) == {tp("a-0"): [(0, 0, [RENEW])]}
    share.reply_acknowledge(sent)
    share.machine.acknowledge(tp("a-0"), 0, AcknowledgeType.ACCEPT)
    share.machine.poll(share.now)
    _, request = share.fetch()
    assert acks_in(request) == {tp("a-0"): [(0, 0, [ACCEPT])]}


def test_lost_session_fails_its_settlements_and_reopens() -> None:
    share = started("explicit")
    sent, _ = share.fetch()
    share.fetch()
    share.reply_fetch(sent, {"a-0": (batch(0, [b"x"]), [(0, 0, 1)])})
    share.machine.poll(share.now)
    share.machine.acknowledge(tp("a-0"), 0, AcknowledgeType.ACCEPT)
    op = share.machine.commit(share.now)
    sent, _ = share.acknowledge()
    share.reply_acknowledge(sent, code=ErrorCode.SHARE_SESSION_NOT_FOUND)
    result = share.talk.outcome(op)
    assert isinstance(result[tp("a-0")], ShareSessionNotFoundError)
    share.machine.poll(share.now)
    _, request = share.fetch()  # no backoff: a new session at once, naming everything again
    assert request.share_session_epoch == 0 and named_in(request) == {tp("a-0"), tp("b-0")}


def test_settlements_for_a_lost_connection_fail_and_the_broker_backs_off() -> None:
    share = started("explicit")
    sent, _ = share.fetch()
    share.fetch()
    share.reply_fetch(sent, {"a-0": (batch(0, [b"x"]), [(0, 0, 1)])})
    share.machine.poll(share.now)
    share.machine.acknowledge(tp("a-0"), 0, AcknowledgeType.ACCEPT)
    share.machine.poll(share.now)
    sent, request = share.fetch()
    assert acks_in(request)
    share.talk.fail(sent, KafkaConnectionError("gone"))
    reports = share.events_of(AcknowledgementsCommitted)
    assert isinstance(reports[0].error, KafkaConnectionError)
    assert share.events_of(RefreshMetadata)
    share.talk.expect_nothing()  # backing off
    share.talk.advance(0.2)
    _, request = share.fetch()
    assert request.share_session_epoch == 0


def test_partitions_leaving_the_assignment_are_forgotten_and_their_records_released() -> None:
    share = started("explicit")
    sent, _ = share.fetch()
    other, _ = share.fetch()
    share.reply_fetch(sent, {"b-0": (batch(0, [b"1", b"2"]), [(0, 1, 1)])})
    share.reply_fetch(other)
    share.talk.advance(5)
    sent, _ = share.heartbeat()
    share.reply_heartbeat(sent, epoch=2, assigned=["a-0", "a-1"])
    sent, request = share.acknowledge()  # no poll since: the releases go alone
    assert acks_in(request) == {tp("b-0"): [(0, 1, [RELEASE])]}
    share.reply_acknowledge(sent)
    share.heartbeat()
    assert share.machine.poll(share.now) == []
    requests = {s.target.node_id: r for s, r in (share.fetch(), share.fetch())}
    assert forgotten_in(requests[1]) == {tp("b-0")} and named_in(requests[1]) == set()


def test_stale_leader_asks_for_metadata() -> None:
    share = started()
    sent, _ = share.fetch()
    share.fetch()
    share.reply_fetch(sent, partition_codes={"a-0": ErrorCode.NOT_LEADER_OR_FOLLOWER})
    assert share.events_of(RefreshMetadata)


def test_close_settles_releases_closes_sessions_then_leaves() -> None:
    share = started("explicit")
    sent1, _ = share.fetch()
    sent2, _ = share.fetch()
    if sent1.target.node_id != 1:
        sent1, sent2 = sent2, sent1
    share.reply_fetch(sent1, {"a-0": (batch(0, [b"x", b"y", b"z"]), [(0, 2, 1)])})
    share.reply_fetch(sent2)
    records = share.machine.poll(share.now, 2)  # z stays buffered
    share.machine.acknowledge(tp("a-0"), records[0].offset, AcknowledgeType.ACCEPT)
    op = share.machine.close(share.now)
    assert share.machine.phase is Phase.FLUSHING
    closing = [share.acknowledge() for _ in range(2)]
    assert {r.share_session_epoch for _, r in closing} == {-1}
    node1 = next(r for s, r in closing if s.target.node_id == 1)
    assert acks_in(node1) == {tp("a-0"): [(0, 2, [ACCEPT, RELEASE, RELEASE])]}
    for sent, _ in closing:
        share.reply_acknowledge(sent)
    sent, request = share.heartbeat()
    assert request.member_epoch == -1
    share.reply_heartbeat(sent, epoch=-1)
    assert share.talk.outcome(op) is None
    assert share.machine.phase is Phase.CLOSED
    with pytest.raises(Exception, match="closed"):
        share.machine.poll(share.now)


def test_close_waits_for_the_fetch_in_flight() -> None:
    share = Share()
    share.join("a-0")
    fetch, _ = share.fetch()
    op = share.machine.close(share.now)
    share.talk.expect_nothing()
    share.reply_fetch(fetch, {"a-0": (batch(0, [b"late"]), [(0, 0, 1)])})
    sent, request = share.acknowledge()
    assert request.share_session_epoch == -1
    assert acks_in(request) == {tp("a-0"): [(0, 0, [RELEASE])]}
    share.reply_acknowledge(sent)
    sent, request = share.heartbeat()
    assert request.member_epoch == -1
    share.reply_heartbeat(sent, epoch=-1)
    assert share.talk.outcome(op) is None
    share.talk.expect_nothing()


def test_records_of_a_lost_session_are_dropped_and_their_settlements_fail_here() -> None:
    share = started("explicit")
    sent, _ = share.fetch()
    share.fetch()
    share.reply_fetch(sent, {"a-0": (batch(0, [b"x", b"y", b"z"]), [(0, 2, 1)])})
    (held,) = share.machine.poll(share.now, 1)  # y and z stay buffered
    share.machine.acknowledge(tp("a-0"), held.offset, AcknowledgeType.ACCEPT)
    share.machine.poll(share.now, 1)  # y held: no fetch, the ACCEPT of x goes alone
    sent, request = share.acknowledge()
    assert acks_in(request) == {tp("a-0"): [(0, 0, [ACCEPT])]}
    share.reply_acknowledge(sent, code=ErrorCode.SHARE_SESSION_NOT_FOUND)
    share.events_of(AcknowledgementsCommitted)
    share.machine.acknowledge(
        tp("a-0"), 1, AcknowledgeType.ACCEPT
    )  # y: acquired in the lost session
    op = share.machine.commit(share.now)
    assert isinstance(
        share.talk.outcome(op).get(tp("a-0"), InvalidRecordStateError("")), InvalidRecordStateError
    )
    (report,) = share.events_of(AcknowledgementsCommitted)
    assert report.offsets == {tp("a-0"): {1}} and isinstance(report.error, InvalidRecordStateError)
    assert share.machine.poll(share.now) == []  # z was dropped with the session
    _, request = share.fetch()
    assert request.share_session_epoch == 0 and acks_in(request) == {}


def test_poll_needs_a_subscription() -> None:
    share = Share()
    with pytest.raises(IllegalStateError, match="not subscribed to any topics"):
        share.machine.poll(share.now)
    share.join("a-0")
    op = share.machine.unsubscribe(share.now)
    sent, request = share.heartbeat()
    assert request.member_epoch == -1
    share.reply_heartbeat(sent, epoch=-1)
    share.talk.outcome(op)
    assert share.member.subscription() == frozenset()
    with pytest.raises(IllegalStateError, match="not subscribed to any topics"):
        share.machine.poll(share.now)


def test_metrics_count_records_bytes_settlements_by_type_and_latencies() -> None:
    share = started("explicit")
    sent, _ = share.fetch()
    share.fetch()
    data = batch(10, [b"p", b"q", b"r"])
    share.talk.advance(0.25)
    share.reply_fetch(sent, {"b-0": (data, [(10, 13, 1)])}, ack_codes={})
    records = share.machine.poll(share.now)
    for record, kind in zip(records, (ACCEPT, RELEASE, REJECT), strict=True):
        share.machine.acknowledge(tp("b-0"), record.offset, AcknowledgeType(kind))
    share.machine.commit(share.now)
    sent, _ = share.acknowledge()
    share.talk.advance(0.5)
    share.reply_acknowledge(sent, codes={"b-0": ErrorCode.INVALID_RECORD_STATE})
    metrics = share.machine.metrics.snapshot(share.now + 1)
    assert metrics["records_consumed"] == metrics["records_fetched"] == 3
    assert metrics["bytes_consumed"] == len(data)
    assert metrics["acknowledgements_sent_by_type"] == {
        "accept": 1, "release": 1, "reject": 1, "renew": 0, "gap": 1
    }  # fmt: skip
    assert metrics["acknowledgements_sent"] == metrics["acknowledgement_errors"] == 4
    assert metrics["fetches"] == 1 and metrics["fetch_latency_max"] == 0.25
    assert metrics["acknowledge_requests"] == 1 and metrics["acknowledge_latency_avg"] == 0.5
    assert metrics["last_poll_seconds_ago"] == 1.5
