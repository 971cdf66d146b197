"""`Record` behaves the same in both implementations, however it is constructed."""

from __future__ import annotations

import pickle
from types import ModuleType
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from krafka._codec import implementations
from tests._codec.strategies import blobs, headers, timestamps

FIELDS = ("offset", "timestamp", "key", "value", "headers")
record_args = st.tuples(
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.one_of(st.none(), timestamps),
    blobs,
    blobs,
    headers,
)


def fields(r: Any) -> tuple[Any, ...]:
    return tuple(getattr(r, f) for f in FIELDS)


def test_defaults(codec: ModuleType):
    assert fields(codec.Record()) == (0, None, None, None, ())


@settings(max_examples=50, deadline=None)
@given(args=record_args, n_positional=st.integers(min_value=0, max_value=5))
def test_positional_and_keyword_arguments_agree(
    codec: ModuleType, args: tuple[Any, ...], n_positional: int
):
    keywords = dict(zip(FIELDS[n_positional:], args[n_positional:], strict=True))
    r = codec.Record(*args[:n_positional], **keywords)
    assert fields(r) == args
    assert r == codec.Record(*args)
    assert pickle.loads(pickle.dumps(r)) == r
    assert repr(r) == (
        f"Record(offset={args[0]!r}, timestamp={args[1]!r}, key={args[2]!r}, "
        f"value={args[3]!r}, headers={args[4]!r})"
    )
    match r:
        case codec.Record(offset, timestamp, key, value, hdrs):
            assert (offset, timestamp, key, value, hdrs) == args


@pytest.mark.parametrize(
    "args, kwargs",
    [
        ((1, 2, b"k", b"v", [], "extra"), {}),
        ((), {"partition": 3}),
        ((1,), {"offset": 2}),
        ((1, 2, b"k"), {"key": b"again"}),
    ],
)
def test_bad_arguments_raise_type_error(
    codec: ModuleType, args: tuple[Any, ...], kwargs: dict[str, Any]
):
    with pytest.raises(TypeError):
        codec.Record(*args, **kwargs)


@pytest.mark.parametrize("name", FIELDS)
def test_fields_are_read_only(codec: ModuleType, name: str):
    r = codec.Record(1, 2, b"k", b"v", [("h", b"x")])
    with pytest.raises(AttributeError):
        setattr(r, name, None)
    with pytest.raises(AttributeError):
        delattr(r, name)
    assert fields(r) == (1, 2, b"k", b"v", [("h", b"x")])


def test_decoded_records_equal_constructed_ones(codec: ModuleType):
    hdrs = [("a", b"1"), ("b", None)]
    blob = codec.encode_batch([codec.Record(0, 5, b"k", None, hdrs)], "none", 7)
    (batch,) = codec.decode_batches(blob)
    assert batch.records == [codec.Record(7, 5, b"k", None, hdrs)]
    assert type(batch.records[0].headers) is list


COMPILED = implementations().get("compiled")


@pytest.mark.skipif(COMPILED is None, reason="extensions not built")
@settings(max_examples=50, deadline=None)
@given(args=record_args, n_positional=st.integers(min_value=0, max_value=5))
def test_compiled_call_is_init(args: tuple[Any, ...], n_positional: int):
    """`Record(...)` (a vectorcall entry) builds exactly what `__new__` + `__init__` build."""
    assert COMPILED is not None
    keywords = dict(zip(FIELDS[n_positional:], args[n_positional:], strict=True))
    fast = COMPILED.Record(*args[:n_positional], **keywords)
    slow = COMPILED.Record.__new__(COMPILED.Record)
    slow.__init__(*args[:n_positional], **keywords)
    assert fields(fast) == fields(slow) == args


@pytest.mark.skipif(COMPILED is None, reason="extensions not built")
def test_compiled_offset_and_timestamp_become_ints():
    assert COMPILED is not None
    r = COMPILED.Record(True, "17")
    assert (r.offset, r.timestamp) == (1, 17)
    assert type(r.offset) is int and type(r.timestamp) is int
    with pytest.raises(ValueError):
        COMPILED.Record(timestamp="soon")


def test_repeated_headers_decode_into_independent_lists(codec: ModuleType):
    """Equal headers may share their (immutable) tuples, never a record's headers list."""
    variants = [
        [("ct", b"json"), ("n", None)],
        [("ct", b"json"), ("n", None)],
        [("ct", b"xml"), ("n", b"")],
        [("ct", b"json"), ("n", b"")],
        [("big", b"x" * 100), ("ct", b"json")],
        [("big", b"x" * 100), ("ct", b"json")],
        [("\u00e9t\u00e9", b"\x00"), ("k" * 80, b"v")],
        [("\u00e9t\u00e9", b"\x00"), ("k" * 80, b"v")],
        [],
    ]
    records = [(b"k", b"v", h, i) for i, h in enumerate(variants)] * 3
    decoded = codec.decode_batches(codec.encode_batch(records))[0].records
    assert [r.headers for r in decoded] == [h for _, _, h, _ in records]
    assert len({id(r.headers) for r in decoded}) == len(decoded)
    decoded[0].headers.append(("extra", None))
    assert decoded[1].headers == variants[1]
    assert decoded[len(variants)].headers == variants[0]
