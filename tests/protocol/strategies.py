"""Hypothesis strategies for any generated struct in a given version.

Values are drawn only where the version carries them (absent fields keep their defaults, null
only where nullable), so `decode(encode(x)) == x` must hold exactly. Flexible versions also get
unknown tagged fields, which must survive a decode/encode round trip.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from krafka.protocol.schema import FieldSpec, Struct

_INT_RANGES = {
    "int8": (-(1 << 7), (1 << 7) - 1),
    "int16": (-(1 << 15), (1 << 15) - 1),
    "uint16": (0, (1 << 16) - 1),
    "int32": (-(1 << 31), (1 << 31) - 1),
    "uint32": (0, (1 << 32) - 1),
    "int64": (-(1 << 63), (1 << 63) - 1),
}
_TEXT = st.text(st.characters(codec="utf-8"), max_size=8)


def _flex(cls: type[Struct], version: int) -> bool:
    lo, hi = cls._FLEX
    return lo <= version <= hi


def _element(f: FieldSpec, version: int, depth: int, tags: bool) -> st.SearchStrategy[Any]:
    kind = f.kind
    if kind in _INT_RANGES:
        lo, hi = _INT_RANGES[kind]
        return st.integers(lo, hi)
    if kind == "bool":
        return st.booleans()
    if kind == "float64":
        return st.floats(allow_nan=False)
    if kind == "string":
        return _TEXT
    if kind in ("bytes", "records"):
        return st.binary(max_size=12)
    if kind == "uuid":
        return st.uuids()
    return struct_strategy(f.struct, version, depth + 1, tags)


def _value(f: FieldSpec, version: int, depth: int, tags: bool) -> st.SearchStrategy[Any]:
    elem = _element(f, version, depth, tags)
    if f.array:
        base: st.SearchStrategy[Any] = st.lists(elem, max_size=0 if depth > 3 else 3)
    else:
        base = elem
    if f.is_nullable(version):
        return st.one_of(st.none(), base)
    return base


def struct_strategy(
    cls: type[Struct], version: int, depth: int = 0, tags: bool = True
) -> st.SearchStrategy[Any]:
    """Instances of `cls` valid in `version`; `tags=False` leaves out unknown/explicit tags."""
    flex = _flex(cls, version)
    kwargs: dict[str, st.SearchStrategy[Any]] = {}
    for f in cls._FIELDS:
        if (flex and f.is_tagged(version)) or f.present(version):
            kwargs[f.name] = _value(f, version, depth, tags)
    if flex and tags:
        known = {f.tag for f in cls._FIELDS if f.tag >= 0}
        unknown = st.lists(
            st.integers(0, 300).filter(lambda t: t not in known), max_size=2, unique=True
        ).map(sorted)
        tagged = sorted(f.tag for f in cls._FIELDS if f.is_tagged(version))
        if tagged:
            kwargs["explicit_tags"] = st.frozensets(st.sampled_from(tagged))
        kwargs["unknown_tagged_fields"] = unknown.flatmap(
            lambda ts: st.tuples(*(st.tuples(st.just(t), st.binary(max_size=6)) for t in ts))
        )
    return st.builds(cls, **kwargs)
