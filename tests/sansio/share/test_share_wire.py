"""Share sessions, acknowledgement batches and the decoding of share-fetched data."""

from __future__ import annotations

import itertools

from _share_scripted import batch
from hypothesis import given, settings
from hypothesis import strategies as st

from krafka.errors import CorruptRecordError, RecordDeserializationError
from krafka.protocol.error_codes import ErrorCode
from krafka.sansio.share.acknowledgements import GAP, AcknowledgeType, ack_batches
from krafka.sansio.share.record import MAX_ACQUIRED, decode_share_data
from krafka.sansio.share.session import ShareSession
from krafka.structs import TopicPartition

TP = TopicPartition("t", 0)
A, B, C = ("x", 0), ("x", 1), ("y", 0)


@given(st.dictionaries(st.integers(0, 200), st.sampled_from([GAP, 1, 2, 3, 4]), max_size=60))
def test_ack_batches_round_trip(acks: dict[int, int]) -> None:
    batches = ack_batches(acks)
    back = {offset: kind for b in batches for offset, kind in b.offsets()}
    assert back == acks
    for b in batches:
        assert len(b.types) in (1, b.last - b.first + 1)
    assert all(x.last + 1 < y.first for x, y in itertools.pairwise(batches))


def test_uniform_runs_carry_one_type() -> None:
    assert [(b.first, b.last, b.types) for b in ack_batches({1: 1, 2: 1, 3: 1, 7: 2})] == [
        (1, 3, (1,)), (7, 7, (2,))
    ]  # fmt: skip


def test_session_full_incremental_forgotten_and_resets() -> None:
    session = ShareSession()
    first = session.next_request({A, B})  # type: ignore[arg-type]
    assert (first.epoch, first.named, first.forgotten) == (0, {A, B}, set())
    session.answered(ErrorCode.NONE)
    second = session.next_request({B, C})  # type: ignore[arg-type]
    assert (second.epoch, second.named, second.forgotten) == (1, {C}, {A})
    session.answered(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)  # other errors still move the epoch
    assert session.epoch == 2 and session.is_open
    session.answered(ErrorCode.INVALID_SHARE_SESSION_EPOCH)
    assert session.epoch == 0 and not session.is_open
    again = session.next_request({B})  # type: ignore[arg-type]
    assert again.named == {B} and again.epoch == 0
    session.answered(ErrorCode.GROUP_AUTHORIZATION_FAILED)  # never opened
    assert session.epoch == 0 and session.partitions == frozenset()


def test_session_epoch_wraps_to_1_and_closing_uses_the_final_epoch() -> None:
    session = ShareSession()
    session.epoch = 2**31 - 1
    session.answered(ErrorCode.NONE)
    assert session.epoch == 1
    assert session.closing_request().epoch == -1
    assert not session.is_open


def test_only_acquired_offsets_are_delivered_and_the_rest_gapped() -> None:
    data = batch(0, [b"0", b"1", b"2", b"3"]) + batch(6, [b"6"])
    out = decode_share_data(TP, data, [(1, 2, 3), (4, 6, 1)])
    assert [(r.offset, r.delivery_count) for r in out.records] == [(1, 3), (2, 3), (6, 1)]
    assert all(type(r.headers) is tuple and r.headers == () for r in out.records)
    assert out.settled == {4: GAP, 5: GAP}
    assert out.errors == []


def test_a_refused_record_is_released_and_reported() -> None:
    def value(raw: bytes) -> int:
        return int(raw)

    out = decode_share_data(TP, batch(0, [b"1", b"oops", b"3"]), [(0, 2, 1)],
                            value_deserializer=value)  # fmt: skip
    assert [r.value for r in out.records] == [1, 3]
    assert out.settled == {1: AcknowledgeType.RELEASE}
    assert isinstance(out.errors[0], RecordDeserializationError)


def test_corrupt_batches_are_rejected_whole() -> None:
    bad = bytearray(batch(0, [b"a", b"b"]))
    bad[-1] ^= 1
    out = decode_share_data(TP, bytes(bad) + batch(2, [b"c"]), [(0, 2, 1)])
    assert [r.value for r in out.records] == [b"c"]
    assert out.settled == {0: AcknowledgeType.REJECT, 1: AcknowledgeType.REJECT}
    assert isinstance(out.errors[0], CorruptRecordError)


@settings(deadline=None)
@given(st.binary(max_size=300), st.lists(st.tuples(st.integers(-5, 2**40), st.integers(-5, 2**40),
       st.integers(0, 5)), max_size=4))  # fmt: skip
def test_hostile_data_and_ranges_never_crash(
    data: bytes, acquired: list[tuple[int, int, int]]
) -> None:
    out = decode_share_data(TP, data, acquired)
    assert len(out.settled) + len(out.records) <= MAX_ACQUIRED
