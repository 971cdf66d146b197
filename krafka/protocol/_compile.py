"""Specialised encoders and decoders, generated per (struct class, version) on first use.

For one version a struct's layout is fixed, so its codec can be straight-line code: runs of
fixed-size fields become a single precompiled `struct.Struct` call, fields the version lacks
are left unset (`Struct.__getattr__` supplies their default on first access), and `records` stay
zero-copy memoryview slices. The generated functions only signal
failure (`_Bad`, or whatever Python raises on bad input); `_codec` then re-runs the reference
interpreter to produce the precise error. Every length is still checked against the remaining
bytes before it is used, so hostile input never drives an allocation.

Decoders have the signature `(buf: memoryview, pos: int) -> (obj, pos)`; encoders
`(obj, ap) -> None`, where `ap` appends a bytes-like part.
"""

from __future__ import annotations

import struct
import uuid
from collections.abc import Callable
from typing import Any

from krafka.protocol.schema import INT_KINDS, FieldSpec, Struct

Decoder = Callable[[memoryview, int], tuple[Any, int]]
Encoder = Callable[[Any, Callable[[Any], None]], None]

_SIZES = {kind: struct.calcsize(">" + fmt) for kind, fmt in INT_KINDS.items()}
_DECODERS: dict[tuple[type[Struct], int], Decoder] = {}
_ENCODERS: dict[tuple[type[Struct], int], Encoder] = {}


_UNSET = object()


class _Bad(Exception):
    """Raised by generated code on malformed input; `_codec` turns it into a precise error."""


def _uvarint_slow(buf: memoryview, pos: int) -> tuple[int, int]:
    value = shift = 0
    while shift < 35:
        b = buf[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            return value, pos
        shift += 7
    raise _Bad


_SMALL_UVARINTS = [bytes([i]) for i in range(128)]


_PACK_U16 = struct.Struct(">H").pack


def _uvarint_bytes(n: int) -> bytes:
    if 0 <= n < 0x80:
        return _SMALL_UVARINTS[n]
    if 0x80 <= n < 0x4000:  # record sets of up to 16 KiB: the common case after the first
        return _PACK_U16(((0x80 | (n & 0x7F)) << 8) | (n >> 7))
    if n < 0:
        raise _Bad
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _write_tags(ap: Callable[[Any], None], known: list[tuple[int, bytes]], unknown: Any) -> None:
    tags = sorted([*known, *((int(t), bytes(d)) for t, d in unknown)], key=lambda td: td[0])
    ap(_uvarint_bytes(len(tags)))
    for tag, data in tags:
        ap(_uvarint_bytes(tag))
        ap(_uvarint_bytes(len(data)))
        ap(data)


def _base_namespace() -> dict[str, Any]:
    return {
        "_Bad": _Bad,
        "_uvs": _uvarint_slow,
        "_uvb": _uvarint_bytes,
        "_SMALL_UVARINTS": _SMALL_UVARINTS,
        "_tags": _write_tags,
        "_UUID": uuid.UUID,
        "_str": str,
        "_bytes": bytes,
        "_new": object.__new__,
        "_EMPTY": frozenset(),
        "_UNSET": _UNSET,
        "_frozenset": frozenset,
        "_unpack_from": struct.unpack_from,
        "_pack": struct.pack,
        "_I16": struct.Struct(">h").unpack_from,
        "_I32": struct.Struct(">i").unpack_from,
        "_P16": struct.Struct(">h").pack,
        "_P32": struct.Struct(">i").pack,
    }


def _in(rng: tuple[int, int], version: int) -> bool:
    return rng[0] <= version <= rng[1]


class _Source:
    """Lines of one generated function plus the constants it refers to."""

    def __init__(self, ns: dict[str, Any]) -> None:
        self.lines: list[str] = []
        self.ns = ns
        self.counter = 0

    def const(self, value: Any, prefix: str = "_k") -> str:
        self.counter += 1
        name = f"{prefix}{self.counter}"
        self.ns[name] = value
        return name

    def tmp(self, prefix: str = "t") -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    def add(self, indent: int, line: str) -> None:
        self.lines.append("    " * indent + line)


def _fixed_run(fields: list[FieldSpec], i: int, version: int, flex: bool) -> int:
    """Index just past the run of fixed-size, untagged, present fields starting at `i`."""
    j = i
    while j < len(fields):
        f = fields[j]
        if f.array or f.kind not in INT_KINDS or (flex and f.is_tagged(version)):
            break
        if not f.present(version):
            break
        j += 1
    return j


# --------------------------------------------------------------------------------------------
# Decoders


def decoder(cls: type[Struct], version: int) -> Decoder:
    fn = _DECODERS.get((cls, version))
    if fn is None:
        fn = _build_decoder(cls, version)
        _DECODERS[(cls, version)] = fn
    return fn


def _read_uvarint(src: _Source, ind: int, var: str) -> None:
    src.add(ind, f"{var} = buf[pos]")
    src.add(ind, "pos += 1")
    src.add(ind, f"if {var} > 127:")
    src.add(ind + 1, f"{var}, pos = _uvs(buf, pos - 1)")


def _read_length(src: _Source, ind: int, var: str, flex: bool, wide: bool) -> None:
    if flex:
        _read_uvarint(src, ind, var)
        src.add(ind, f"{var} -= 1")
    else:
        src.add(ind, f"{var}, = {'_I32' if wide else '_I16'}(buf, pos)")
        src.add(ind, f"pos += {4 if wide else 2}")
        src.add(ind, f"if {var} < -1:")
        src.add(ind + 1, "raise _Bad")


def _emit_read(src: _Source, ind: int, f: FieldSpec, var: str, version: int, flex: bool) -> None:
    nullable = f.is_nullable(version)
    if f.array:
        n = src.tmp("n")
        _read_length(src, ind, n, flex, True)
        src.add(ind, f"if {n} < 0:")
        src.add(ind + 1, f"{var} = None" if nullable else "raise _Bad")
        src.add(ind, f"elif {n} > end - pos:")
        src.add(ind + 1, "raise _Bad")
        src.add(ind, "else:")
        if f.kind in INT_KINDS:
            ch, size = INT_KINDS[f.kind], _SIZES[f.kind]
            src.add(ind + 1, f"{var} = list(_unpack_from('>%d{ch}' % {n}, buf, pos))")
            src.add(ind + 1, f"pos += {n} * {size}")
            return
        src.add(ind + 1, f"{var} = []")
        item = src.tmp("x")
        src.add(ind + 1, f"for _ in range({n}):")
        _emit_read_element(src, ind + 2, f, item, version, flex, False)
        src.add(ind + 2, f"{var}.append({item})")
        return
    _emit_read_element(src, ind, f, var, version, flex, nullable)


def _emit_read_element(
    src: _Source, ind: int, f: FieldSpec, var: str, version: int, flex: bool, nullable: bool
) -> None:
    kind = f.kind
    if kind in INT_KINDS:
        unpack = src.const(struct.Struct(">" + INT_KINDS[kind]).unpack_from, "_U")
        src.add(ind, f"{var}, = {unpack}(buf, pos)")
        src.add(ind, f"pos += {_SIZES[kind]}")
    elif kind == "struct":
        dec = src.const(decoder(f.struct, version), "_d")
        if nullable and not f.array:
            src.add(ind, "if buf[pos] > 127:")
            src.add(ind + 1, "pos += 1")
            src.add(ind + 1, f"{var} = None")
            src.add(ind, "else:")
            src.add(ind + 1, f"{var}, pos = {dec}(buf, pos + 1)")
        else:
            src.add(ind, f"{var}, pos = {dec}(buf, pos)")
    elif kind == "uuid":
        src.add(ind, "if end - pos < 16:")
        src.add(ind + 1, "raise _Bad")
        src.add(ind, f"{var} = _UUID(bytes=_bytes(buf[pos:pos + 16]))")
        src.add(ind, "pos += 16")
    else:
        n = src.tmp("n")
        _read_length(src, ind, n, flex, kind != "string")
        src.add(ind, f"if {n} < 0:")
        if nullable:
            src.add(ind + 1, f"{var} = None")
        else:  # a null non-nullable bytes reads as empty, as in `_interp`
            src.add(ind + 1, f"{var} = b''" if kind == "bytes" else "raise _Bad")
        src.add(ind, f"elif {n} > end - pos:")
        src.add(ind + 1, "raise _Bad")
        src.add(ind, "else:")
        if kind == "string":
            src.add(ind + 1, f"{var} = _str(buf[pos:pos + {n}], 'utf-8')")
        elif kind == "records":
            src.add(ind + 1, f"{var} = buf[pos:pos + {n}]")
        else:
            src.add(ind + 1, f"{var} = _bytes(buf[pos:pos + {n}])")
        src.add(ind + 1, f"pos += {n}")


def _field_flex(f: FieldSpec, flex: bool, version: int) -> bool:
    return flex if f.flexible is None else _in(f.flexible, version)


def _build_decoder(cls: type[Struct], version: int) -> Decoder:
    ns = _base_namespace()
    src = _Source(ns)
    flex = _in(cls._FLEX, version)
    fields = list(cls._FIELDS)
    names = [f"v{i}" for i in range(len(fields))]
    src.add(0, "def _decode(buf, pos):")
    src.add(1, "end = len(buf)")
    tagged: list[int] = []
    i = 0
    while i < len(fields):
        f = fields[i]
        j = _fixed_run(fields, i, version, flex)
        if j > i:
            fmt = ">" + "".join(INT_KINDS[g.kind] for g in fields[i:j])
            st = struct.Struct(fmt)
            unpack = src.const(st.unpack_from, "_G")
            src.add(1, f"{', '.join(names[i:j])}, = {unpack}(buf, pos)")
            src.add(1, f"pos += {st.size}")
            i = j
            continue
        if flex and f.is_tagged(version):
            tagged.append(i)
            src.add(1, f"{names[i]} = _UNSET")
        elif f.present(version):
            _emit_read(src, 1, f, names[i], version, _field_flex(f, flex, version))
        i += 1
    if flex:
        _emit_read_tags(src, [(fields[k], names[k]) for k in tagged], version)
    src.add(1, f"o = _new({src.const(cls, '_C')})")
    # Fields this version lacks are left unset: `Struct.__getattr__` fills in their default on
    # first access, which saves building default sub-structs for every decoded partition.
    for k, (f, name) in enumerate(zip(fields, names, strict=True)):
        if k in tagged:
            src.add(1, f"if {name} is not _UNSET:")
            src.add(2, f"o.{f.name} = {name}")
        elif f.present(version):
            src.add(1, f"o.{f.name} = {name}")
    if flex:
        src.add(1, "if unk:")
        src.add(2, "o.unknown_tagged_fields = unk")
        src.add(1, "if ex:")
        src.add(2, "o.explicit_tags = ex")
    src.add(1, "return o, pos")
    return _exec(src, "_decode", f"{cls.__name__}_v{version}_decode")  # type: ignore[no-any-return]


def _tag_reader(f: FieldSpec, version: int) -> Decoder:
    src = _Source(_base_namespace())
    src.add(0, "def _read(buf, pos):")
    src.add(1, "end = len(buf)")
    _emit_read(src, 1, f, "v", version, True)
    src.add(1, "return v, pos")
    return _exec(src, "_read", f"{f.name}_v{version}_tag")  # type: ignore[no-any-return]


def _emit_read_tags(src: _Source, known: list[tuple[FieldSpec, str]], version: int) -> None:
    _read_uvarint(src, 1, "nt")
    src.add(1, "if nt:")
    src.add(2, "if nt > end - pos:")
    src.add(3, "raise _Bad")
    src.add(2, "unk = []")
    src.add(2, "ex = []")
    src.add(2, "for _ in range(nt):")
    _read_uvarint(src, 3, "tg")
    _read_uvarint(src, 3, "sz")
    src.add(3, "if sz > end - pos:")
    src.add(4, "raise _Bad")
    kw = "if"
    for f, name in known:
        reader = src.const(_tag_reader(f, version), "_r")
        src.add(3, f"{kw} tg == {f.tag}:")
        src.add(4, f"{name}, used = {reader}(buf[pos:pos + sz], 0)")
        src.add(4, f"ex.append({f.tag})")
        src.add(4, "if used != sz:")
        src.add(5, "raise _Bad")
        kw = "elif"
    if known:
        src.add(3, "else:")
        src.add(4, "unk.append((tg, _bytes(buf[pos:pos + sz])))")
    else:
        src.add(3, "unk.append((tg, _bytes(buf[pos:pos + sz])))")
    src.add(3, "pos += sz")
    src.add(2, "unk = tuple(unk)")
    src.add(2, "ex = _frozenset(ex) if ex else _EMPTY")
    src.add(1, "else:")
    src.add(2, "unk = ()")
    src.add(2, "ex = _EMPTY")


def _exec(src: _Source, name: str, filename: str) -> Any:
    code = compile("\n".join(src.lines) + "\n", f"<krafka.protocol {filename}>", "exec")
    exec(code, src.ns)
    return src.ns[name]


# --------------------------------------------------------------------------------------------
# Encoders


def encoder(cls: type[Struct], version: int) -> Encoder:
    fn = _ENCODERS.get((cls, version))
    if fn is None:
        fn = _build_encoder(cls, version)
        _ENCODERS[(cls, version)] = fn
    return fn


def _write_length(src: _Source, ind: int, expr: str, ap: str, flex: bool, wide: bool) -> None:
    if flex:  # a length below 127 (nearly all) is one byte from a table, without a call
        n = src.tmp("n")
        src.add(ind, f"{n} = {expr} + 1")
        src.add(ind, f"{ap}(_SMALL_UVARINTS[{n}] if {n} < 128 else _uvb({n}))")
    else:
        src.add(ind, f"{ap}({'_P32' if wide else '_P16'}({expr}))")


def _null_bytes(flex: bool, wide: bool) -> bytes:
    return b"\x00" if flex else (b"\xff\xff\xff\xff" if wide else b"\xff\xff")


def _emit_write(
    src: _Source, ind: int, f: FieldSpec, var: str, ap: str, version: int, flex: bool
) -> None:
    nullable = f.is_nullable(version)
    if f.array:
        src.add(ind, f"if {var} is None:")
        src.add(ind + 1, f"{ap}({_null_bytes(flex, True)!r})" if nullable else "raise _Bad")
        src.add(ind, "else:")
        _write_length(src, ind + 1, f"len({var})", ap, flex, True)
        if f.kind in INT_KINDS:
            ch = INT_KINDS[f.kind]
            src.add(ind + 1, f"{ap}(_pack('>%d{ch}' % len({var}), *{var}))")
            return
        item = src.tmp("x")
        src.add(ind + 1, f"for {item} in {var}:")
        _emit_write_element(src, ind + 2, f, item, ap, version, flex, False)
        return
    _emit_write_element(src, ind, f, var, ap, version, flex, nullable)


def _emit_write_element(
    src: _Source,
    ind: int,
    f: FieldSpec,
    var: str,
    ap: str,
    version: int,
    flex: bool,
    nullable: bool,
) -> None:
    kind = f.kind
    if kind in INT_KINDS:
        pack = src.const(struct.Struct(">" + INT_KINDS[kind]).pack, "_P")
        src.add(ind, f"{ap}({pack}({var}))")
        return
    if kind == "struct":
        enc = src.const(encoder(f.struct, version), "_e")
        cls = src.const(f.struct, "_C")
        if nullable and not f.array:
            src.add(ind, f"if {var} is None:")
            src.add(ind + 1, f"{ap}(b'\\xff')")
            src.add(ind, "else:")
            ind += 1
            src.add(ind, f"{ap}(b'\\x01')")
        src.add(ind, f"if {var}.__class__ is not {cls}:")
        src.add(ind + 1, "raise _Bad")
        src.add(ind, f"{enc}({var}, {ap})")
        return
    if kind == "uuid":
        src.add(ind, f"{ap}({var}.bytes)")
        return
    wide = kind != "string"
    src.add(ind, f"if {var} is None:")
    src.add(ind + 1, f"{ap}({_null_bytes(flex, wide)!r})" if nullable else "raise _Bad")
    src.add(ind, "else:")
    if kind == "string":
        data = src.tmp("s")
        src.add(ind + 1, f"{data} = {var}.encode()")
    else:
        data = var
    _write_length(src, ind + 1, f"len({data})", ap, flex, wide)
    src.add(ind + 1, f"{ap}({data})")


def _tag_writer(f: FieldSpec, version: int) -> Encoder:
    src = _Source(_base_namespace())
    src.add(0, "def _write(v, ap):")
    _emit_write(src, 1, f, "v", "ap", version, True)
    return _exec(src, "_write", f"{f.name}_v{version}_tagw")  # type: ignore[no-any-return]


def _build_encoder(cls: type[Struct], version: int) -> Encoder:
    src = _Source(_base_namespace())
    flex = _in(cls._FLEX, version)
    fields = list(cls._FIELDS)
    src.add(0, "def _encode(o, ap):")
    tagged: list[FieldSpec] = []
    i = 0
    while i < len(fields):
        f = fields[i]
        j = _fixed_run(fields, i, version, flex)
        if j > i:
            fmt = ">" + "".join(INT_KINDS[g.kind] for g in fields[i:j])
            pack = src.const(struct.Struct(fmt).pack, "_G")
            args = ", ".join(f"o.{g.name}" for g in fields[i:j])
            src.add(1, f"ap({pack}({args}))")
            i = j
            continue
        if flex and f.is_tagged(version):
            tagged.append(f)
        elif f.present(version):
            var = src.tmp("v")
            src.add(1, f"{var} = o.{f.name}")
            _emit_write(src, 1, f, var, "ap", version, _field_flex(f, flex, version))
        elif not f.ignorable:
            spec = src.const(f, "_F")
            src.add(1, f"if not {spec}.is_default(o.{f.name}):")
            src.add(2, "raise _Bad")
        i += 1
    src.add(1, "unk = o.unknown_tagged_fields")
    if not flex:
        src.add(1, "if unk:")
        src.add(2, "raise _Bad")
    elif not tagged:
        src.add(1, "if unk:")
        src.add(2, "_tags(ap, [], unk)")
        src.add(1, "else:")
        src.add(2, "ap(b'\\x00')")
    else:
        src.add(1, "known = []")
        src.add(1, "et = o.explicit_tags")
        for f in tagged:
            spec = src.const(f, "_F")
            writer = src.const(_tag_writer(f, version), "_w")
            src.add(1, f"v = o.{f.name}")
            src.add(1, f"if {f.tag} in et or not {spec}.is_default(v):")
            src.add(2, "p = []")
            src.add(2, f"{writer}(v, p.append)")
            src.add(2, f"known.append(({f.tag}, b''.join(p)))")
        src.add(1, "if known or unk:")
        src.add(2, "_tags(ap, known, unk)")
        src.add(1, "else:")
        src.add(2, "ap(b'\\x00')")
    if len(src.lines) == 1:
        src.add(1, "pass")
    return _exec(src, "_encode", f"{cls.__name__}_v{version}_encode")  # type: ignore[no-any-return]
