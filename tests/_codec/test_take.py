"""`take_records`: the compiled loop and its pure twin build the same consumer records."""

from __future__ import annotations

from typing import Any, NamedTuple

import pytest
from hypothesis import given
from hypothesis import strategies as st

from krafka._codec import implementations


class Rec(NamedTuple):
    topic: str
    partition: int
    offset: int
    timestamp: int
    timestamp_type: int
    key: Any
    value: Any
    headers: list[Any]
    leader_epoch: int | None


IMPLS = implementations()


def records_of(impl: Any, offsets: list[int]) -> list[Any]:
    return [
        impl.Record(o, 1000 + o, b"k%d" % o, None if o % 3 else b"v", [("h", b"x")])
        for o in offsets
    ]


@given(
    offsets=st.lists(st.integers(0, 1000), unique=True, max_size=40).map(sorted),
    index=st.integers(0, 5),
    limit=st.integers(0, 50),
    min_offset=st.integers(0, 1000),
    stop=st.integers(-1, 1000),
)
def test_implementations_agree(
    offsets: list[int], index: int, limit: int, min_offset: int, stop: int
) -> None:
    results = []
    for impl in IMPLS.values():
        out: list[Any] = []
        state = impl.take_records(
            records_of(impl, offsets), index, limit, min_offset, stop, "t", 3, 1, 7, Rec, out
        )
        results.append((state, [tuple(r) for r in out], {type(r) for r in out}))
    assert all(r == results[0] for r in results)
    state, out, types = results[0]
    assert types <= {Rec}
    assert len(out) <= limit
    assert all(min_offset <= r[2] and (stop < 0 or r[2] < stop) for r in out)


@pytest.mark.parametrize("name", sorted(IMPLS))
def test_stops_at_the_stop_offset(name: str) -> None:
    impl = IMPLS[name]
    out: list[Any] = []
    state = impl.take_records(
        records_of(impl, [5, 6, 7, 8]), 0, 10, 6, 8, "t", 0, 0, None, Rec, out
    )
    assert state == (3, 2, 8, True)
    assert [r.offset for r in out] == [6, 7]
    assert out[0] == Rec("t", 0, 6, 1006, 0, b"k6", b"v", [("h", b"x")], None)


def test_compiled_records_stay_out_of_the_collector_when_their_contents_do() -> None:
    """Decoded records (untracked header lists) give untracked consumer records, as CPython's
    first collection would make them; a tracked header list keeps its record tracked."""
    import gc

    from krafka.codec import encode_batch

    if "compiled" not in IMPLS:
        pytest.skip("the compiled codec is not built")
    compiled = IMPLS["compiled"]
    blob = encode_batch([(b"k", b"v", [("h", b"x")], 5), (None, b"w", None, 6)])
    (batch,) = compiled.iter_batches(blob, True, 1 << 20)
    out: list[Any] = []
    compiled.take_records(batch.records, 0, 10, 0, -1, "t", 0, 0, None, Rec, out)
    assert [r.value for r in out] == [b"v", b"w"]
    assert not any(gc.is_tracked(r) for r in out)
    tracked = [compiled.Record(0, 1, None, b"v", [("h", [b"mutable"])])]
    out = []
    compiled.take_records(tracked, 0, 10, 0, -1, "t", 0, 0, None, Rec, out)
    assert gc.is_tracked(tracked[0].headers) and gc.is_tracked(out[0])


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
