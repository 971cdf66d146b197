"""A consumer's records from a batch (`consumer_records`) and their fields read as slots
(`slot_fields`): the compiled twins and the pure ones agree."""

from __future__ import annotations

from pathlib import Path
from typing import Any, NamedTuple

import pytest
from hypothesis import given
from hypothesis import strategies as st

from krafka._codec import implementations
from krafka._codec.records import encode_batch
from krafka._codec.types import TimestampType
from krafka.errors import CorruptRecordError
from tests._codec.strategies import batch_options, build, record_fields


class Rec(NamedTuple):
    topic: str
    partition: int
    offset: int
    timestamp: int
    timestamp_type: int
    key: Any
    value: Any
    headers: tuple[Any, ...]
    leader_epoch: int | None


IMPLS = implementations()
SHARED = Path(__file__).resolve().parents[3] / "shared" / "testdata"
CORPUS = sorted((SHARED / "corpus").glob("*.bin")) if SHARED.is_dir() else []
EMPTY: tuple[()] = ()  # CPython's one empty tuple (`x is ()` is a syntax warning)


def expected(impl: Any, data: bytes, header: Any) -> list[tuple[Any, ...]]:
    """A consumer's records of one entry made the long way: decode it, then copy fields."""
    batch = impl.decode_entry(data, header, True, 1 << 24)
    epoch = batch.partition_leader_epoch
    tstype = int(batch.timestamp_type or 0)
    return [
        ("t", 3, r.offset, r.timestamp, tstype, r.key, r.value, tuple(r.headers),
         None if epoch is None or epoch < 0 else epoch)
        for r in batch.records
    ]  # fmt: skip


def consumer_records_of(impl: Any, data: bytes) -> list[list[tuple[Any, ...]]]:
    out = []
    for header in impl.scan_batches(data):
        records = impl.consumer_records(data, header, True, 1 << 24, "t", 3, Rec)
        assert {type(r) for r in records} <= {Rec}
        assert [tuple(r) for r in records] == expected(impl, data, header)
        out.append([tuple(r) for r in records])
    return out


@given(
    fields=st.lists(record_fields, min_size=1, max_size=20),
    options=batch_options,
    log_append=st.booleans(),
    epoch=st.integers(-1, 2**31 - 1),
)
def test_implementations_agree(
    fields: list[dict[str, Any]], options: dict[str, Any], log_append: bool, epoch: int
) -> None:
    """Each implementation's consumer records are the decoded records' fields, with the batch's
    timestamp type and leader epoch (-1: None), and the implementations agree."""
    tstype = TimestampType.LOG_APPEND_TIME if log_append else TimestampType.CREATE_TIME
    data = encode_batch(
        build(IMPLS["pure"], fields), timestamp_type=tstype, partition_leader_epoch=epoch,
        now_ms=1_700_000_000_000, **options,
    )  # fmt: skip
    results = [consumer_records_of(impl, data) for impl in IMPLS.values()]
    assert all(r == results[0] for r in results)
    (records,) = results[0]
    assert len(records) == len(fields)
    assert all(r[4] == int(log_append) and r[8] == (None if epoch < 0 else epoch) for r in records)


@pytest.mark.parametrize("path", CORPUS, ids=[p.name for p in CORPUS])
def test_implementations_agree_on_the_corpus(path: Path) -> None:
    """Real clients' batches, legacy messages and compressed wrappers included."""
    data = path.read_bytes()
    results = [consumer_records_of(impl, data) for impl in IMPLS.values()]
    assert all(r == results[0] for r in results)


@pytest.mark.parametrize("name", sorted(IMPLS))
def test_a_corrupt_batch_raises(name: str) -> None:
    impl = IMPLS[name]
    data = bytearray(encode_batch([impl.Record(0, 1, None, b"v" * 50, [])]))
    data[-3] ^= 0xFF
    (header,) = impl.scan_batches(bytes(data))
    with pytest.raises(CorruptRecordError):
        impl.consumer_records(bytes(data), header, True, 1 << 24, "t", 3, Rec)
    assert len(impl.consumer_records(bytes(data), header, False, 1 << 24, "t", 3, Rec)) == 1


@pytest.mark.parametrize("name", sorted(IMPLS))
def test_headers_are_a_tuple_and_the_shared_empty_one_without_any(name: str) -> None:
    """A consumer's record is an immutable value: its headers a tuple of (key, value) pairs,
    `()` itself when the record has none (no object made for it), in v2 and legacy entries."""
    impl = IMPLS[name]
    data = encode_batch([(b"k", b"v", [("h", b"x"), ("n", None)], 5), (None, b"w", None, 6)])
    (header,) = impl.scan_batches(data)
    with_headers, without = impl.consumer_records(data, header, True, 1 << 20, "t", 0, Rec)
    assert type(with_headers.headers) is tuple
    assert with_headers.headers == (("h", b"x"), ("n", None))
    assert without.headers == () and without.headers is EMPTY
    assert hash(without) == hash(tuple(without))
    for path in CORPUS:
        legacy = path.read_bytes()
        for entry in impl.scan_batches(legacy):
            for record in impl.consumer_records(legacy, entry, True, 1 << 24, "t", 0, Rec):
                assert type(record.headers) is tuple
                assert record.headers or record.headers is EMPTY


def test_compiled_records_stay_out_of_the_collector() -> None:
    """Decoded records hold ints, bytes, None and untracked header tuples: their tuples are
    untracked, as CPython's first collection would make them, and so is their list."""
    import gc

    if "compiled" not in IMPLS:
        pytest.skip("the compiled codec is not built")
    compiled = IMPLS["compiled"]
    data = encode_batch([(b"k", b"v", [("h", b"x")], 5), (None, b"w", None, 6)])
    (header,) = compiled.scan_batches(data)
    out = compiled.consumer_records(data, header, True, 1 << 20, "t", 0, Rec)
    assert [r.value for r in out] == [b"v", b"w"]
    assert not any(gc.is_tracked(r) for r in out)
    assert not gc.is_tracked(out)  # nothing in it can be in a cycle: collections skip it


def fresh_record_type() -> type[Any]:
    class Fresh(NamedTuple):
        topic: str
        partition: int
        offset: int
        value: Any

        def doubled(self) -> int:
            return self.offset * 2

    return Fresh


@pytest.mark.parametrize("name", sorted(IMPLS))
def test_slot_fields_read_what_the_tuple_holds(name: str) -> None:
    """After `slot_fields` every field reads its tuple item (the same object), fields stay
    read-only, and the NamedTuple's methods, copies and subclasses work as before."""
    import copy

    cls = IMPLS[name].slot_fields(fresh_record_type())
    value = b"v" * 100
    made = [
        cls("t", 3, 7, value),
        cls._make(["t", 3, 7, value]),
        tuple.__new__(cls, ("t", 3, 7, value)),
    ]
    for record in made:
        assert (record.topic, record.partition, record.offset) == ("t", 3, 7)
        assert record.value is value and record.doubled() == 14
        assert record == ("t", 3, 7, value) and len(record) == 4
        with pytest.raises(AttributeError):
            record.value = b"x"  # type: ignore[misc]
    assert copy.deepcopy(made[0]) == made[0] and copy.deepcopy(made[0]).value == value
    assert made[0]._replace(value=None).value is None
    assert made[0]._asdict() == {"topic": "t", "partition": 3, "offset": 7, "value": value}

    class Sub(cls):  # type: ignore[misc, valid-type]
        __slots__ = ()

    assert Sub("u", 1, 2, None).topic == "u"
    assert IMPLS[name].slot_fields(cls) is cls  # twice is once


def test_compiled_slot_fields_never_read_past_a_short_tuple() -> None:
    """A tuple of the type made shorter than its fields (`tuple.__new__` allows it) reads its
    missing fields as absent, never past the object."""
    if "compiled" not in IMPLS:
        pytest.skip("the compiled codec is not built")
    cls = IMPLS["compiled"].slot_fields(fresh_record_type())
    for items in [(), ("t",), ("t", 3, 7)]:
        short = tuple.__new__(cls, items)
        assert tuple(short) == items
        for i, field in enumerate(cls._fields):
            if i < len(items):
                assert getattr(short, field) is items[i]
            else:
                with pytest.raises(AttributeError):
                    getattr(short, field)


@pytest.mark.parametrize("name", sorted(IMPLS))
def test_slot_fields_refuse_what_is_not_a_plain_tuple(name: str) -> None:
    class Loose(tuple):  # type: ignore[type-arg]
        _fields = ("a",)

    with pytest.raises(TypeError):
        IMPLS[name].slot_fields(type("NotTuple", (), {"_fields": ("a",)}))
    if name == "compiled":
        with pytest.raises(TypeError):  # instances have a __dict__: not a bare tuple
            IMPLS[name].slot_fields(Loose)


@pytest.mark.parametrize("name", sorted(IMPLS))
@pytest.mark.parametrize("enabled", [True, False])
def test_the_collector_is_left_as_it_was(name: str, enabled: bool) -> None:
    """Decoding pauses the collector at most while it runs: enabled or disabled by the
    application, it is so afterwards, a corrupt batch's error included."""
    import gc

    impl = IMPLS[name]
    good = encode_batch([impl.Record(i, 1, None, b"v", []) for i in range(3)])
    bad = bytearray(good)
    bad[-1] = 0x04  # the last record's header count: 2 headers, no bytes for them
    was = gc.isenabled()
    try:
        (gc.enable if enabled else gc.disable)()
        for data, check_crc in ((good, True), (bytes(bad), False)):
            (header,) = impl.scan_batches(data)
            if data is good:
                impl.consumer_records(data, header, check_crc, 1 << 20, "t", 0, Rec)
            else:
                with pytest.raises(CorruptRecordError):
                    impl.consumer_records(data, header, check_crc, 1 << 20, "t", 0, Rec)
            assert gc.isenabled() is enabled
    finally:
        (gc.enable if was else gc.disable)()


@pytest.mark.parametrize("name", sorted(IMPLS))
def test_records_and_subclass_records_are_freed_whole(name: str) -> None:
    """Freeing records (of the type, and of a subclass with a dict and a finalizer) releases
    their items and their type's reference, once."""
    import sys
    import weakref

    cls = IMPLS[name].slot_fields(fresh_record_type())
    finalized: list[int] = []

    class Rich(cls):  # type: ignore[misc, valid-type]
        def __del__(self) -> None:
            finalized.append(self.offset)

    class Item:
        pass

    for kind in (cls, Rich):
        types_before = sys.getrefcount(kind)
        items = [Item() for _ in range(100)]
        alive = [weakref.ref(i) for i in items]
        records = [kind("t", 0, n, item) for n, item in enumerate(items)]
        if kind is Rich:
            records[0].note = "a dict"
        del items
        assert all(a() is not None for a in alive)
        del records
        assert all(a() is None for a in alive)
        assert sys.getrefcount(kind) == types_before
    assert sorted(finalized) == list(range(100))


def test_freed_records_are_reused_whole() -> None:
    """A freed record's memory makes a later one, of its type or of another slot type with as
    many fields: types, fields and the types' references all come out right."""
    import sys

    from krafka.sansio.consumer.record import ConsumerRecord

    if "compiled" not in IMPLS:
        pytest.skip("the compiled codec is not built")
    compiled = IMPLS["compiled"]

    Other = NamedTuple("Other", list(Rec.__annotations__.items()))  # type: ignore[misc]
    compiled.slot_fields(Other)
    data = encode_batch(
        [(b"k%d" % i, b"v%d" % i, [("h", b"%d" % i)] if i % 2 else None, i) for i in range(50)]
    )
    (header,) = compiled.scan_batches(data)
    want = [(b"k%d" % i, b"v%d" % i, (("h", b"%d" % i),) if i % 2 else ()) for i in range(50)]
    refs = sys.getrefcount(ConsumerRecord), sys.getrefcount(Other)
    for round_ in range(6):
        kind = (ConsumerRecord, Other)[round_ % 2]
        out = compiled.consumer_records(data, header, True, 1 << 20, "t", 0, kind)
        assert {type(r) for r in out} == {kind}
        assert [(r.key, r.value, r.headers) for r in out] == want
        assert [r.offset for r in out] == list(range(50)) and out[7].topic == "t"
        del out, kind
    assert (sys.getrefcount(ConsumerRecord), sys.getrefcount(Other)) == refs
