"""The checker on hand-made histories: each anomaly is found, and what the contracts allow
(redelivery after a lost commit, failed sends, aborted records under read_uncommitted) is not
counted against them."""

from __future__ import annotations

from faultkit.checker import check
from faultkit.history import History, Processed, Read, Sent, TxnOutcome

T, X, OUT = "plain", "txn", "out"


def _history(*, pipeline: bool = False) -> History:
    history = History(pipeline=(T, OUT) if pipeline else None)
    history.final_topics = {T, X, OUT}
    return history


def _write(history: History, writer: str, seq: int, partition: int, offset: int) -> Read:
    rid = f"{writer}:{seq}".encode()
    history.send(Sent(rid, T, b"k%d" % partition, writer, seq))
    history.ack(rid, partition, offset)
    return Read(T, partition, offset, b"k%d" % partition, rid)


def _read_both(history: History, *reads: Read) -> None:
    history.committed_reads.extend(reads)
    history.uncommitted_reads.extend(reads)


def test_a_clean_history_has_no_anomaly() -> None:
    history = _history()
    _read_both(history, *(_write(history, "i0", n, 0, n) for n in range(5)))
    report = check(history)
    assert report.ok, report.format()
    assert report.counts["lost"] == 0


def test_an_acknowledged_record_not_read_is_lost() -> None:
    history = _history()
    reads = [_write(history, "i0", n, 0, n) for n in range(3)]
    _read_both(history, reads[0], reads[2])
    report = check(history)
    assert report.violations == {"lost": 1}
    assert "i0:1" in report.examples["lost"][0]


def test_a_failed_send_may_or_may_not_be_there() -> None:
    history = _history()
    history.send(Sent(b"i0:0", T, b"k", "i0", 0))
    history.fail(b"i0:0", TimeoutError("gone"))
    report = check(history)
    assert report.ok
    assert report.counts["indeterminate"] == 1


def test_a_record_at_two_offsets_is_duplicated_and_at_another_offset_misplaced() -> None:
    history = _history()
    first = _write(history, "i0", 0, 0, 0)
    _read_both(history, first, Read(T, 0, 1, first.key, first.value))
    assert check(history).violations == {"duplicated": 1}
    moved = _history()
    record = _write(moved, "i0", 0, 0, 0)
    _read_both(moved, Read(T, 0, 7, record.key, record.value))
    assert check(moved).violations == {"misplaced": 1}


def test_a_writer_s_records_out_of_send_order_are_reordered() -> None:
    history = _history()
    a = _write(history, "i0", 0, 0, 1)
    b = _write(history, "i0", 1, 0, 0)
    other_writer = _write(history, "i1", 0, 0, 2)
    _read_both(history, Read(T, 0, 0, b.key, b.value), Read(T, 0, 1, a.key, a.value), other_writer)
    history.acked.clear()  # the acknowledged offsets agree with the reads
    report = check(history)
    assert report.violations == {"reordered": 1, "reordered keys": 1}


def test_a_record_never_sent_is_unexpected() -> None:
    history = _history()
    _read_both(history, Read(T, 0, 0, None, b"ghost:1"))
    assert check(history).violations == {"unexpected": 1}


def test_transactions_all_or_nothing() -> None:
    history = _history()
    for name, outcome, seqs in (
        ("t0:txn0", TxnOutcome.COMMITTED, (0, 1)),
        ("t0:txn1", TxnOutcome.ABORTED, (2, 3)),
        ("t0:txn2", TxnOutcome.UNKNOWN, (4, 5)),
    ):
        for seq in seqs:
            history.send(Sent(b"t0:%d" % seq, X, b"k", "t0", seq, txn=name))
        history.txn_outcome(name, outcome)
    everything = [Read(X, 0, n, b"k", b"t0:%d" % n) for n in range(6)]
    history.uncommitted_reads.extend(everything)
    # committed: t0:0 (t0:1 lost), t0:2 of the aborted one, t0:4 alone of the unknown one
    history.committed_reads.extend([everything[0], everything[2], everything[4]])
    report = check(history)
    assert report.violations == {"lost": 1, "aborted read": 1, "torn txn": 1}


def test_aborted_records_under_read_uncommitted_are_fine() -> None:
    history = _history()
    history.send(Sent(b"t0:0", X, b"k", "t0", 0, txn="t0:txn0"))
    history.txn_outcome("t0:txn0", TxnOutcome.ABORTED)
    history.uncommitted_reads.append(Read(X, 0, 0, b"k", b"t0:0"))
    assert check(history).ok


def test_the_pipeline_holds_each_input_exactly_once() -> None:
    history = _history(pipeline=True)
    inputs = [_write(history, "i0", n, 0, n) for n in range(3)]
    _read_both(history, *inputs)
    history.pipeline_txns.update({"p0.0": TxnOutcome.COMMITTED, "p0.1": TxnOutcome.ABORTED})
    outputs = [
        Read(OUT, 0, 0, b"k", b"out|i0:0|p0.0"),
        Read(OUT, 0, 1, b"k", b"out|i0:0|p0.0"),  # i0:0 twice (at two offsets)
        Read(OUT, 0, 2, b"k", b"out|i0:1|p0.1"),  # of an aborted transaction
    ]
    _read_both(history, *outputs)
    report = check(history)
    assert report.violations == {
        "duplicated": 1,
        "aborted read": 1,
        "pipeline missing": 1,  # i0:2
        "pipeline duplicated": 1,  # i0:0
    }


def test_redelivery_after_a_lost_commit_is_not_a_loss() -> None:
    history = _history()
    reads = [_write(history, "i0", n, 0, n) for n in range(4)]
    _read_both(history, *reads)
    for member, offsets in (("g0", (0, 1, 2)), ("g1", (1, 2, 3))):  # g0's commit was lost
        for offset in offsets:
            history.processed.append(Processed(member, T, 0, offset, reads[offset].value))
    history.group_commit({(T, 0): 4})
    report = check(history)
    assert report.ok, report.format()
    assert report.counts["redelivered"] == 2


def test_a_commit_past_unprocessed_records_is_a_skip() -> None:
    history = _history()
    reads = [_write(history, "i0", n, 0, n) for n in range(4)]
    _read_both(history, *reads)
    history.processed.append(Processed("g0", T, 0, 0, reads[0].value))
    history.group_commit({(T, 0): 3})
    report = check(history)
    assert report.violations == {"group skipped": 2}
    assert report.counts["group unprocessed"] == 1


def test_a_failed_send_written_late_is_not_a_reorder() -> None:
    history = _history()
    late = _write(history, "i0", 0, 0, 1)
    history.acked.pop(late.value)
    history.fail(late.value, TimeoutError("delivery timeout"))
    on_time = _write(history, "i0", 1, 0, 0)
    _read_both(history, on_time, late)
    report = check(history)
    assert report.ok, report.format()
    assert report.counts["late indeterminate"] == 1
