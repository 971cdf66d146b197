"""The reference codec: a plain interpreter over `FieldSpec`s, with a path for every error.

It is the readable statement of the wire format and the source of precise error messages: the
compiled fast path (`_compile`) runs first, and when it fails this interpreter re-runs the same
input and raises `LocalProtocolError` / `RemoteProtocolError` naming message, version and field
(`"MetadataResponse v12: topics[3].name: string length 70000 exceeds remaining 12 bytes"`).
Every length is checked against the bytes that remain before anything is allocated.
"""

from __future__ import annotations

import struct
import uuid
from typing import Any

import krafka.errors as _errors
from krafka.protocol.schema import INT_KINDS, FieldSpec, Struct

_RANGES = {
    "int8": (-(1 << 7), (1 << 7) - 1),
    "int16": (-(1 << 15), (1 << 15) - 1),
    "uint16": (0, (1 << 16) - 1),
    "int32": (-(1 << 31), (1 << 31) - 1),
    "uint32": (0, (1 << 32) - 1),
    "int64": (-(1 << 63), (1 << 63) - 1),
}
_STRUCTS = {kind: struct.Struct(">" + fmt) for kind, fmt in INT_KINDS.items()}
_BYTES_LIKE = (bytes, bytearray, memoryview)


class _Fail(Exception):
    def __init__(self, path: str, detail: str) -> None:
        super().__init__(detail)
        self.path = path
        self.detail = detail


def _in(rng: tuple[int, int], version: int) -> bool:
    return rng[0] <= version <= rng[1]


def _field_flex(f: FieldSpec, flex: bool, version: int) -> bool:
    return flex if f.flexible is None else _in(f.flexible, version)


def _label(cls: type[Struct], version: int) -> str:
    return f"{cls._NAME} v{version}"


# --------------------------------------------------------------------------------------------
# Decoding


class _Reader:
    __slots__ = ("buf", "end", "pos")

    def __init__(self, buf: memoryview, pos: int, end: int) -> None:
        self.buf, self.pos, self.end = buf, pos, end

    @property
    def remaining(self) -> int:
        return self.end - self.pos

    def take(self, n: int, path: str, what: str) -> memoryview:
        if n > self.end - self.pos:
            raise _Fail(path, f"{what} {n} exceeds remaining {self.end - self.pos} bytes")
        start = self.pos
        self.pos += n
        return self.buf[start : self.pos]

    def fixed(self, kind: str, path: str) -> Any:
        st = _STRUCTS[kind]
        if st.size > self.end - self.pos:
            raise _Fail(path, f"{kind} needs {st.size} bytes, {self.end - self.pos} remain")
        (value,) = st.unpack_from(self.buf, self.pos)
        self.pos += st.size
        return value

    def uvarint(self, path: str) -> int:
        value = shift = 0
        while True:
            if self.pos >= self.end:
                raise _Fail(path, "truncated unsigned varint")
            b = self.buf[self.pos]
            self.pos += 1
            value |= (b & 0x7F) << shift
            if not b & 0x80:
                return value
            shift += 7
            if shift >= 35:
                raise _Fail(path, "unsigned varint longer than 5 bytes")

    def length(self, flex: bool, wide: bool, path: str) -> int:
        """A length prefix: compact uvarint (N+1, 0 = null), or int16/int32 (-1 = null)."""
        if flex:
            n = self.uvarint(path) - 1
            if n > 0x7FFFFFFF - 1:
                raise _Fail(path, f"length {n} out of range")
            return n
        n = int(self.fixed("int32" if wide else "int16", path))
        if n < -1:
            raise _Fail(path, f"negative length {n}")
        return n


def decode(
    cls: type[Struct], buf: memoryview, version: int, pos: int, strict: bool
) -> tuple[Any, int]:
    """Decode `cls` at `pos`; raise `RemoteProtocolError` with the failing field's path."""
    r = _Reader(buf, pos, len(buf))
    try:
        obj = _struct(cls, r, version, _in(cls._FLEX, version), "")
        if strict and r.pos != r.end:
            raise _Fail("", f"{r.end - r.pos} trailing bytes after the message")
    except _Fail as e:
        where = f"{e.path.lstrip('.')}: " if e.path else ""
        raise _errors.RemoteProtocolError(f"{_label(cls, version)}: {where}{e.detail}") from None
    return obj, r.pos


def _struct(cls: type[Struct], r: _Reader, version: int, flex: bool, path: str) -> Any:
    values: dict[str, Any] = {}
    tagged: dict[int, FieldSpec] = {}
    for f in cls._FIELDS:
        if flex and f.is_tagged(version):
            tagged[f.tag] = f
            values[f.name] = f.default_value()
        elif f.present(version):
            values[f.name] = _value(
                f, r, version, _field_flex(f, flex, version), f"{path}.{f.name}"
            )
        else:
            values[f.name] = f.default_value()
    unknown: list[tuple[int, bytes]] = []
    seen: set[int] = set()
    if flex:
        _tags(r, version, tagged, values, unknown, seen, path)
    values["unknown_tagged_fields"] = tuple(unknown)
    values["explicit_tags"] = frozenset(seen)
    return cls(**values)


def _tags(
    r: _Reader,
    version: int,
    known: dict[int, FieldSpec],
    values: dict[str, Any],
    unknown: list[tuple[int, bytes]],
    seen: set[int],
    path: str,
) -> None:
    where = f"{path}.<tagged fields>"
    count = r.uvarint(where)
    if count > r.remaining:
        raise _Fail(where, f"tagged field count {count} exceeds remaining {r.remaining} bytes")
    for _ in range(count):
        tag = r.uvarint(where)
        size = r.uvarint(where)
        data = r.take(size, f"{where}[tag {tag}]", "tagged field size")
        f = known.get(tag)
        if f is None:
            unknown.append((tag, bytes(data)))
            continue
        seen.add(tag)
        sub = _Reader(data, 0, len(data))
        fpath = f"{path}.{f.name}"
        values[f.name] = _value(f, sub, version, True, fpath)
        if sub.pos != sub.end:
            raise _Fail(fpath, f"tagged field has {sub.end - sub.pos} unread bytes")


def _value(f: FieldSpec, r: _Reader, version: int, flex: bool, path: str) -> Any:
    nullable = f.is_nullable(version)
    if f.array:
        n = r.length(flex, True, path)
        if n < 0:
            if nullable:
                return None
            raise _Fail(path, "null array in a version where it is not nullable")
        if n > r.remaining:
            raise _Fail(path, f"array length {n} exceeds remaining {r.remaining} bytes")
        return [_element(f, r, version, flex, f"{path}[{i}]", False) for i in range(n)]
    return _element(f, r, version, flex, path, nullable)


def _element(f: FieldSpec, r: _Reader, version: int, flex: bool, path: str, nullable: bool) -> Any:
    kind = f.kind
    if kind in INT_KINDS:
        return r.fixed(kind, path)
    if kind == "struct":
        if nullable and not f.array and int(r.fixed("int8", path)) < 0:
            return None
        return _struct(f.struct, r, version, flex, path)
    if kind == "uuid":
        return uuid.UUID(bytes=bytes(r.take(16, path, "uuid needs")))
    n = r.length(flex, kind != "string", path)
    if n < 0:
        if nullable:
            return None
        if kind == "bytes":
            # librdkafka's mock cluster (and librdkafka itself) write an errored SyncGroup's
            # MemberState as null; reading it as empty lets the error code be seen.
            return b""
        raise _Fail(path, f"null {kind} in a version where it is not nullable")
    data = r.take(n, path, f"{kind} length")
    if kind == "string":
        try:
            return str(data, "utf-8")
        except UnicodeDecodeError as e:
            raise _Fail(path, f"invalid UTF-8 in string: {e.reason}") from None
    if kind == "records":
        return data
    return bytes(data)


# --------------------------------------------------------------------------------------------
# Encoding


def _uvarint(n: int) -> bytes:
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def encode(obj: Struct, version: int) -> bytes:
    """Encode `obj`; raise `LocalProtocolError` naming the first invalid field."""
    cls = type(obj)
    out = bytearray()
    try:
        _enc_struct(obj, cls, out, version, _in(cls._FLEX, version), "")
    except _Fail as e:
        where = f"{e.path.lstrip('.')}: " if e.path else ""
        raise _errors.LocalProtocolError(f"{_label(cls, version)}: {where}{e.detail}") from None
    return bytes(out)


def _enc_struct(obj: Any, cls: Any, out: bytearray, version: int, flex: bool, path: str) -> None:
    if not isinstance(obj, cls):
        raise _Fail(path, f"expected {cls.__name__}, got {type(obj).__name__}")
    tagged: list[tuple[int, bytes]] = []
    explicit: frozenset[int] = getattr(obj, "explicit_tags", frozenset())
    for f in cls._FIELDS:
        value = getattr(obj, f.name)
        fpath = f"{path}.{f.name}"
        if flex and f.is_tagged(version):
            if f.tag in explicit or not f.is_default(value):
                sub = bytearray()
                _enc_value(f, value, sub, version, True, fpath)
                tagged.append((f.tag, bytes(sub)))
        elif f.present(version):
            _enc_value(f, value, out, version, _field_flex(f, flex, version), fpath)
        elif not f.ignorable and not f.is_default(value):
            detail = f"field is not in v{version} and is not ignorable (value not default)"
            raise _Fail(fpath, detail)
    unknown = getattr(obj, "unknown_tagged_fields", ())
    if not flex:
        if unknown:
            raise _Fail(path, f"unknown tagged fields set, but v{version} is not flexible")
        return
    try:
        extra = [(int(t), bytes(d)) for t, d in unknown]
    except (TypeError, ValueError):
        raise _Fail(path, "unknown_tagged_fields must be (int, bytes) pairs") from None
    tagged.extend(extra)
    tagged.sort(key=lambda td: td[0])
    out += _uvarint(len(tagged))
    for tag, data in tagged:
        if tag < 0:
            raise _Fail(path, f"negative tag {tag}")
        out += _uvarint(tag)
        out += _uvarint(len(data))
        out += data


def _enc_length(n: int, out: bytearray, flex: bool, wide: bool, path: str) -> None:
    if flex:
        out += _uvarint(n + 1)
    elif wide:
        out += _STRUCTS["int32"].pack(n)
    else:
        if n > 0x7FFF:
            raise _Fail(path, f"string of {n} bytes is too long for an int16 length")
        out += _STRUCTS["int16"].pack(n)


def _enc_value(
    f: FieldSpec, value: Any, out: bytearray, version: int, flex: bool, path: str
) -> None:
    nullable = f.is_nullable(version)
    if f.array:
        if value is None:
            if not nullable:
                raise _Fail(path, f"None in v{version}, where the array is not nullable")
            _enc_length(-1, out, flex, True, path)
            return
        if not isinstance(value, (list, tuple)):
            raise _Fail(path, f"expected a list, got {type(value).__name__}")
        _enc_length(len(value), out, flex, True, path)
        for i, item in enumerate(value):
            _enc_element(f, item, out, version, flex, f"{path}[{i}]", False)
        return
    _enc_element(f, value, out, version, flex, path, nullable)


def _enc_element(
    f: FieldSpec, value: Any, out: bytearray, version: int, flex: bool, path: str, nullable: bool
) -> None:
    kind = f.kind
    if value is None and kind not in INT_KINDS and kind != "uuid":
        if not nullable:
            raise _Fail(path, f"None in v{version}, where the {kind} is not nullable")
        if kind == "struct":
            out += b"\xff"
        else:
            _enc_length(-1, out, flex, kind != "string", path)
        return
    if kind in INT_KINDS:
        _enc_scalar(kind, value, out, path)
    elif kind == "struct":
        if nullable and not f.array:
            out += b"\x01"
        _enc_struct(value, f.struct, out, version, flex, path)
    elif kind == "uuid":
        if not isinstance(value, uuid.UUID):
            raise _Fail(path, f"expected uuid.UUID, got {type(value).__name__}")
        out += value.bytes
    elif kind == "string":
        if not isinstance(value, str):
            raise _Fail(path, f"expected str, got {type(value).__name__}")
        try:
            data = value.encode("utf-8")
        except UnicodeEncodeError:
            raise _Fail(path, "string is not encodable as UTF-8") from None
        _enc_length(len(data), out, flex, False, path)
        out += data
    else:
        if not isinstance(value, _BYTES_LIKE):
            raise _Fail(path, f"expected bytes, got {type(value).__name__}")
        view = memoryview(value).cast("B")
        _enc_length(len(view), out, flex, True, path)
        out += view


def _enc_scalar(kind: str, value: Any, out: bytearray, path: str) -> None:
    if kind == "float64":
        if not isinstance(value, (int, float)):
            raise _Fail(path, f"expected float, got {type(value).__name__}")
        out += _STRUCTS[kind].pack(value)
        return
    if not isinstance(value, int):
        raise _Fail(path, f"expected int, got {type(value).__name__}")
    if kind == "bool":
        out += b"\x01" if value else b"\x00"
        return
    lo, hi = _RANGES[kind]
    if not lo <= value <= hi:
        raise _Fail(path, f"{value} is out of range for {kind}")
    out += _STRUCTS[kind].pack(value)
