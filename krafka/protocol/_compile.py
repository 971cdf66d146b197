"""Specialised encoders and decoders per (struct class, version).

For one version a struct's layout is fixed, so its codec can be straight-line code: runs of
fixed-size fields become a single precompiled `struct.Struct` call, fields the version lacks
are left unset (`Struct.__getattr__` supplies their default on first access), and `records` stay
zero-copy memoryview slices. The generated functions only signal
failure (`_Bad`, or whatever Python raises on bad input); `_codec` then re-runs the reference
interpreter to produce the precise error. Every length is still checked against the remaining
bytes before it is used, so hostile input never drives an allocation.

Decoders have the signature `(buf: memoryview, pos: int) -> (obj, pos)`; encoders
`(obj, ap) -> None`, where `ap` appends a bytes-like part.

The source of every generated message's codecs, all versions, is committed in
`krafka.protocol.codecs` (one module per message module, written by
`tools/generate_protocol.py` with `module_source`), so a client imports compiled functions
instead of generating and exec'ing them at start; a struct outside the generated messages has
its codec generated here on first use.
"""

from __future__ import annotations

import importlib
import struct
import uuid
from collections.abc import Callable
from types import ModuleType
from typing import Any

from krafka.protocol.schema import INT_KINDS, FieldSpec, Struct

Decoder = Callable[[memoryview, int], tuple[Any, int]]
Encoder = Callable[[Any, Callable[[Any], None]], None]

_SIZES = {kind: struct.calcsize(">" + fmt) for kind, fmt in INT_KINDS.items()}
_DECODERS: dict[tuple[type[Struct], int], Decoder] = {}
_ENCODERS: dict[tuple[type[Struct], int], Encoder] = {}
_MESSAGES = "krafka.protocol.messages."
_CODECS = "krafka.protocol.codecs."


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


def base_namespace() -> dict[str, Any]:
    """The helpers every generated function refers to (a committed codec module's globals)."""
    return {
        "_Struct": struct.Struct,
        "_Bad": _Bad,
        "_uvs": _uvarint_slow,
        "_uvb": _uvarint_bytes,
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


_SAFE = str.maketrans({"?": "Z"})


class _Unit:
    """Functions generated together and the names they refer to: at run time one struct's
    codec (nested structs' codecs are referred to, built on their own), for the committed source
    every struct of a message module in every version (nested ones emitted alongside; a function
    whose text another version already has is an alias of it)."""

    def __init__(self, committed: bool) -> None:
        self.committed = committed
        self.functions: list[str] = []
        self.consts: dict[str, tuple[Any, str]] = {}
        self.classes: dict[str, type[Struct]] = {}
        self.names: dict[tuple[str, type[Struct], int, str], str] = {}
        self.bodies: dict[str, str] = {}
        self.aliases: list[tuple[str, str]] = []

    def const(self, name: str, value: Any, expr: str) -> str:
        self.consts[name] = (value, expr)
        return name

    def struct_method(self, fmt: str, method: str) -> str:
        """`struct.Struct(">" + fmt).<method>` (`unpack_from` or `pack`)."""
        name = f"_{method[0].upper()}_{fmt.translate(_SAFE)}"
        value = getattr(struct.Struct(">" + fmt), method)
        return self.const(name, value, f"_Struct({'>' + fmt!r}).{method}")

    def cls(self, cls: type[Struct]) -> str:
        self.classes[cls.__name__] = cls
        return self.const(cls.__name__, cls, cls.__name__)

    def spec(self, cls: type[Struct], index: int) -> str:
        name = f"_f_{cls.__name__}_{index}"
        return self.const(name, cls._FIELDS[index], f"{cls.__name__}._FIELDS[{index}]")

    def decoder(self, cls: type[Struct], version: int) -> str:
        name = f"d_{cls.__name__}_{version}"
        if not self.committed:
            return self.const(name, decoder(cls, version), name)
        return self.function(("d", cls, version, ""), name, _emit_decoder, cls, version)

    def encoder(self, cls: type[Struct], version: int) -> str:
        name = f"e_{cls.__name__}_{version}"
        if not self.committed:
            return self.const(name, encoder(cls, version), name)
        return self.function(("e", cls, version, ""), name, _emit_encoder, cls, version)

    def tag_reader(self, cls: type[Struct], f: FieldSpec, version: int) -> str:
        name = f"r_{cls.__name__}_{f.name}_{version}"
        return self.function(("r", cls, version, f.name), name, _emit_tag_reader, f, version)

    def tag_writer(self, cls: type[Struct], f: FieldSpec, version: int) -> str:
        name = f"w_{cls.__name__}_{f.name}_{version}"
        return self.function(("w", cls, version, f.name), name, _emit_tag_writer, f, version)

    def function(
        self,
        key: tuple[str, type[Struct], int, str],
        name: str,
        emit: Callable[..., None],
        *args: Any,
    ) -> str:
        """The name of the function `emit(src, *args)` writes, emitting it on first use."""
        known = self.names.get(key)
        if known is not None:
            return known
        src = _Source(self, name)
        emit(src, *args)
        text = "\n".join(src.lines)
        canonical = name
        if self.committed:
            canonical = self.bodies.setdefault(text.replace(f"def {name}(", "def _(", 1), name)
        if canonical == name:
            self.functions.append(text)
        else:
            self.aliases.append((name, canonical))
        self.names[key] = canonical
        return canonical

    def compiled(self, name: str) -> Any:
        """Compile and run every function of the unit; the one called `name`."""
        ns = base_namespace()
        ns.update((const, value) for const, (value, _) in self.consts.items())
        code = compile("\n\n".join(self.functions) + "\n", f"<krafka.protocol {name}>", "exec")
        exec(code, ns)
        return ns[name]


class _Source:
    """Lines of one generated function."""

    def __init__(self, unit: _Unit, name: str) -> None:
        self.lines: list[str] = []
        self.unit = unit
        self.name = name
        self.counter = 0

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
        fn = _committed(cls, f"d_{cls.__name__}_{version}") or build_decoder(cls, version)
        _DECODERS[(cls, version)] = fn
    return fn


def build_decoder(cls: type[Struct], version: int) -> Decoder:
    """Generate and compile the decoder (what `krafka.protocol.codecs` holds for messages)."""
    unit = _Unit(committed=False)
    name = unit.function(("d", cls, version, ""), "_decode", _emit_decoder, cls, version)
    return unit.compiled(name)  # type: ignore[no-any-return]


def _committed(cls: type[Struct], name: str) -> Any:
    """The committed function `name` of a generated message's struct, or None for a struct
    defined elsewhere."""
    module = cls.__module__
    if not module.startswith(_MESSAGES):
        return None
    return getattr(importlib.import_module(_CODECS + module[len(_MESSAGES) :]), name, None)


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
        unpack = src.unit.struct_method(INT_KINDS[kind], "unpack_from")
        src.add(ind, f"{var}, = {unpack}(buf, pos)")
        src.add(ind, f"pos += {_SIZES[kind]}")
    elif kind == "struct":
        dec = src.unit.decoder(f.struct, version)
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


def _emit_decoder(src: _Source, cls: type[Struct], version: int) -> None:
    flex = _in(cls._FLEX, version)
    fields = list(cls._FIELDS)
    names = [f"v{i}" for i in range(len(fields))]
    src.add(0, f"def {src.name}(buf, pos):")
    src.add(1, "end = len(buf)")
    tagged: list[int] = []
    i = 0
    while i < len(fields):
        f = fields[i]
        j = _fixed_run(fields, i, version, flex)
        if j > i:
            fmt = "".join(INT_KINDS[g.kind] for g in fields[i:j])
            unpack = src.unit.struct_method(fmt, "unpack_from")
            src.add(1, f"{', '.join(names[i:j])}, = {unpack}(buf, pos)")
            src.add(1, f"pos += {struct.calcsize('>' + fmt)}")
            i = j
            continue
        if flex and f.is_tagged(version):
            tagged.append(i)
            src.add(1, f"{names[i]} = _UNSET")
        elif f.present(version):
            _emit_read(src, 1, f, names[i], version, _field_flex(f, flex, version))
        i += 1
    if flex:
        _emit_read_tags(src, cls, [(fields[k], names[k]) for k in tagged], version)
    src.add(1, f"o = _new({src.unit.cls(cls)})")
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


def _emit_tag_reader(src: _Source, f: FieldSpec, version: int) -> None:
    src.add(0, f"def {src.name}(buf, pos):")
    src.add(1, "end = len(buf)")
    _emit_read(src, 1, f, "v", version, True)
    src.add(1, "return v, pos")


def _emit_read_tags(
    src: _Source, cls: type[Struct], known: list[tuple[FieldSpec, str]], version: int
) -> None:
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
        reader = src.unit.tag_reader(cls, f, version)
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


# --------------------------------------------------------------------------------------------
# Encoders


def encoder(cls: type[Struct], version: int) -> Encoder:
    fn = _ENCODERS.get((cls, version))
    if fn is None:
        fn = _committed(cls, f"e_{cls.__name__}_{version}") or build_encoder(cls, version)
        _ENCODERS[(cls, version)] = fn
    return fn


def build_encoder(cls: type[Struct], version: int) -> Encoder:
    """Generate and compile the encoder (what `krafka.protocol.codecs` holds for messages)."""
    unit = _Unit(committed=False)
    name = unit.function(("e", cls, version, ""), "_encode", _emit_encoder, cls, version)
    return unit.compiled(name)  # type: ignore[no-any-return]


def _write_length(src: _Source, ind: int, expr: str, ap: str, flex: bool, wide: bool) -> None:
    if flex:
        src.add(ind, f"{ap}(_uvb({expr} + 1))")
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
        pack = src.unit.struct_method(INT_KINDS[kind], "pack")
        src.add(ind, f"{ap}({pack}({var}))")
        return
    if kind == "struct":
        enc = src.unit.encoder(f.struct, version)
        cls = src.unit.cls(f.struct)
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


def _emit_tag_writer(src: _Source, f: FieldSpec, version: int) -> None:
    src.add(0, f"def {src.name}(v, ap):")
    _emit_write(src, 1, f, "v", "ap", version, True)


def _emit_encoder(src: _Source, cls: type[Struct], version: int) -> None:
    flex = _in(cls._FLEX, version)
    fields = list(cls._FIELDS)
    src.add(0, f"def {src.name}(o, ap):")
    tagged: list[int] = []
    i = 0
    while i < len(fields):
        f = fields[i]
        j = _fixed_run(fields, i, version, flex)
        if j > i:
            fmt = "".join(INT_KINDS[g.kind] for g in fields[i:j])
            pack = src.unit.struct_method(fmt, "pack")
            args = ", ".join(f"o.{g.name}" for g in fields[i:j])
            src.add(1, f"ap({pack}({args}))")
            i = j
            continue
        if flex and f.is_tagged(version):
            tagged.append(i)
        elif f.present(version):
            var = src.tmp("v")
            src.add(1, f"{var} = o.{f.name}")
            _emit_write(src, 1, f, var, "ap", version, _field_flex(f, flex, version))
        elif not f.ignorable:
            spec = src.unit.spec(cls, i)
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
        for k in tagged:
            f = fields[k]
            spec = src.unit.spec(cls, k)
            writer = src.unit.tag_writer(cls, f, version)
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


# --------------------------------------------------------------------------------------------
# Committed source


def module_source(module: ModuleType, import_name: str) -> str:
    """The source of `krafka.protocol.codecs.<name>` for the generated message module `module`
    (importable as `import_name`): the decoder and encoder of each of its structs in every
    version, named `d_<Struct>_<version>` and `e_<Struct>_<version>`."""
    structs = [
        value
        for key, value in vars(module).items()
        if isinstance(value, type)
        and issubclass(value, Struct)
        and value.__module__ == module.__name__
        and not key.startswith("_")
    ]
    unit = _Unit(committed=True)
    for cls in structs:
        for version in range(cls._VERSIONS[0], cls._VERSIONS[1] + 1):
            unit.decoder(cls, version)
            unit.encoder(cls, version)
    lines = [
        "# Generated by tools/generate_protocol.py. Do not edit.",
        f'"""The decoder and encoder of every struct of `{import_name}`',
        "in every version, as `krafka.protocol._compile` generates them: committed, so that",
        'none is generated and exec\'d at run time."""',
        "",
        "from krafka.protocol._compile import base_namespace",
        f"from {import_name} import (",
        *(f"    {name}," for name in sorted(unit.classes)),
        ")",
        "",
        "globals().update(base_namespace())",
        "",
        *(f"{name} = {expr}" for name, (_, expr) in sorted(unit.consts.items()) if name != expr),
    ]
    for text in unit.functions:
        lines += ["", "", text]
    lines += ["", ""]
    lines += [f"{name} = {canonical}" for name, canonical in unit.aliases]
    return "\n".join(lines) + "\n"
