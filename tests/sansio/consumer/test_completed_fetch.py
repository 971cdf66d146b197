"""One partition's fetched data: position filtering, read_committed (with the broker's aborted
list, and by look-ahead without it), the last stable offset, hostile bytes."""

from __future__ import annotations

import struct

import pytest

from krafka.codec import Record, encode_batch
from krafka.errors import CorruptRecordError
from krafka.sansio.consumer.completed_fetch import CompletedFetch
from krafka.sansio.consumer.record import ConsumerRecord
from krafka.structs import TopicPartition

TP = TopicPartition("t", 0)


def data_batch(base: int, values: list[bytes], pid: int = -1, txn: bool = False) -> bytes:
    records = [Record(i, 1000, None, v, []) for i, v in enumerate(values)]
    return encode_batch(records, "none", base, pid, 0 if pid >= 0 else -1, 0, txn)


def marker(offset: int, pid: int, commit: bool) -> bytes:
    key = struct.pack(">hh", 0, 1 if commit else 0)
    value = struct.pack(">hi", 0, 0)
    return encode_batch([Record(0, 1000, key, value, [])], "none", offset, pid, 0, -1, True,
                        control=True)  # fmt: skip


def take_all(fetch: CompletedFetch, step: int = 1000) -> list[ConsumerRecord]:
    out: list[ConsumerRecord] = []
    while fetch.take(out, step):
        pass
    return out


def interleaved() -> bytes:
    """Producers 1 and 2 interleave; 1 aborts its first transaction, 2 commits; then 1 commits."""
    return b"".join(
        [
            data_batch(0, [b"p1-a0", b"p1-a1"], pid=1, txn=True),
            data_batch(2, [b"p2-c0"], pid=2, txn=True),
            marker(3, 1, commit=False),
            data_batch(4, [b"plain"]),
            marker(5, 2, commit=True),
            data_batch(6, [b"p1-c0"], pid=1, txn=True),
            marker(7, 1, commit=True),
        ]
    )


@pytest.mark.parametrize("with_list", [True, False])
def test_read_committed_with_several_producers(with_list: bool) -> None:
    aborted = ((1, 0),) if with_list else ()
    fetch = CompletedFetch(TP, interleaved(), start=0, epoch=0, last_stable_offset=8,
                           aborted_transactions=aborted, read_committed=True)  # fmt: skip
    got = take_all(fetch, step=1)
    assert [r.value for r in got] == [b"p2-c0", b"plain", b"p1-c0"]
    assert fetch.next_offset == 8 and fetch.drained


def test_read_uncommitted_skips_only_markers() -> None:
    fetch = CompletedFetch(TP, interleaved(), start=0, epoch=0)
    got = take_all(fetch)
    assert [r.offset for r in got] == [0, 1, 2, 4, 6]
    assert fetch.next_offset == 8


def test_records_below_the_position_and_at_the_lso_are_not_returned() -> None:
    buf = data_batch(0, [b"%d" % i for i in range(10)]) + data_batch(10, [b"10", b"11"])
    fetch = CompletedFetch(TP, buf, start=4, epoch=0, last_stable_offset=11, read_committed=True)
    got = take_all(fetch, step=3)
    assert [r.offset for r in got] == list(range(4, 11))
    assert fetch.next_offset == 11
    assert got[0] == ConsumerRecord("t", 0, 4, 1000, 0, None, b"4", (), None)


def test_trailing_partial_batch_is_trimmed() -> None:
    whole = data_batch(0, [b"a", b"b"])
    partial = data_batch(2, [b"c" * 100])[:40]
    fetch = CompletedFetch(TP, whole + partial, start=0, epoch=0)
    assert fetch.size == len(whole) and fetch.end_offset == 2
    assert [r.value for r in take_all(fetch)] == [b"a", b"b"]


def test_corrupt_batch_fails_after_the_good_records_and_keeps_failing() -> None:
    good = data_batch(0, [b"a", b"b"])
    bad = bytearray(data_batch(2, [b"c", b"d"]))
    bad[-1] ^= 0xFF  # breaks the CRC
    fetch = CompletedFetch(TP, good + bytes(bad), start=0, epoch=0)
    out: list[ConsumerRecord] = []
    assert fetch.take(out, 100) == 2
    for _ in range(2):
        with pytest.raises(CorruptRecordError, match="t-0"):
            fetch.take(out, 100)
    assert not fetch.drained and fetch.next_offset == 2


def unreadable(batch: bytes) -> bytes:
    broken = bytearray(batch)
    broken[-1] ^= 0xFF  # breaks the CRC
    return bytes(broken)


@pytest.mark.parametrize("read_committed", [True, False])
def test_an_unreadable_marker_fails_at_the_marker(read_committed: bool) -> None:
    buf = b"".join(
        [
            data_batch(0, [b"plain"]),
            data_batch(1, [b"p1-a"], pid=1, txn=True),
            data_batch(2, [b"p2-a"], pid=2, txn=True),
            marker(3, 2, commit=True),
            unreadable(marker(4, 1, commit=False)),
            data_batch(5, [b"after"]),
        ]
    )
    fetch = CompletedFetch(TP, buf, start=0, epoch=0, last_stable_offset=6,
                           read_committed=read_committed)  # fmt: skip
    out: list[ConsumerRecord] = []
    fetch.take(out, 100)
    # p1-a's fate is the unreadable marker's: read_committed holds it (and what follows)
    expected = [b"plain"] if read_committed else [b"plain", b"p1-a", b"p2-a"]
    assert [r.value for r in out] == expected
    where = "at offset 4" if read_committed else "after offset 4"
    for _ in range(2):
        with pytest.raises(CorruptRecordError, match=f"t-0 {where}"):
            fetch.take(out, 100)
    assert not fetch.drained and fetch.next_offset == (1 if read_committed else 4)


def test_a_fetch_of_only_an_unreadable_marker_fails_when_read() -> None:
    buf = data_batch(0, [b"t"], pid=1, txn=True) + unreadable(marker(1, 1, commit=True))
    fetch = CompletedFetch(TP, buf, start=0, epoch=0, last_stable_offset=2, read_committed=True)
    with pytest.raises(CorruptRecordError, match="t-0 at offset 1") as info:
        fetch.take([], 100)
    assert "CRC" in str(info.value) and str(info.value).count("at byte") <= 1


def test_deserializer_failure_names_the_record_and_stays() -> None:
    from krafka.errors import RecordDeserializationError

    fetch = CompletedFetch(TP, data_batch(0, [b"1", b"x", b"3"]), start=0, epoch=0)
    out: list[ConsumerRecord] = []
    assert fetch.take(out, 10, value_deserializer=int) == 1
    with pytest.raises(RecordDeserializationError) as info:
        fetch.take(out, 10, value_deserializer=int)
    assert info.value.offset == 1 and fetch.next_offset == 1


def test_raw_hands_out_everything() -> None:
    buf = data_batch(0, [b"a"]) + data_batch(1, [b"b", b"c"])
    raw = CompletedFetch(TP, buf, start=1, epoch=0, high_watermark=3).raw()
    assert (raw.start, raw.next_offset, raw.high_watermark, bytes(raw.data)) == (1, 3, 3, buf)


def test_a_stored_error_is_raised_as_a_fresh_copy_each_time() -> None:
    """Raising one object poll after poll would grow its traceback without end."""
    fetch = CompletedFetch(TP, unreadable(data_batch(0, [b"a"])), start=0, epoch=0)
    raised = []
    for _ in range(3):
        with pytest.raises(CorruptRecordError) as info:
            fetch.take([], 10)
        raised.append(info.value)
    assert len({id(e) for e in raised}) == 3 and str(raised[0]) == str(raised[2])
