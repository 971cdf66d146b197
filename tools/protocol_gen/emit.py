"""Emit one Python module per message schema, and the package `__init__`."""

from __future__ import annotations

import keyword
import textwrap
from dataclasses import dataclass, field
from typing import Any

from tools.protocol_gen.schema_load import MAX_VERSION, PRIMITIVES, Schema, parse_versions, snake

PY_TYPES = {
    "bool": "bool", "int8": "int", "int16": "int", "uint16": "int", "int32": "int",
    "uint32": "int", "int64": "int", "float64": "float", "string": "str", "bytes": "bytes",
    "records": "memoryview | bytes", "uuid": "uuid.UUID",
}  # fmt: skip
INT_KINDS = {"int8", "int16", "uint16", "int32", "uint32", "int64"}
SECRET_FIELDS = {"AuthBytes", "Hmac", "SaltedPassword", "Salt"}
"""Fields carrying credentials: left out of `repr` so they never reach logs or tracebacks."""


@dataclass
class StructDef:
    name: str
    fields: list[dict[str, Any]]
    nested: list[StructDef] = field(default_factory=list)


def py_name(wire: str) -> str:
    name = snake(wire)
    return name + "_" if keyword.iskeyword(name) else name


def _parse_int(text: Any) -> int:
    if isinstance(text, bool):
        raise ValueError(text)
    if isinstance(text, int):
        return text
    t = str(text).strip()
    return int(t, 16) if t.lower().startswith(("0x", "-0x")) else int(t)


def _collect(schema: Schema, fields: list[dict[str, Any]], out: dict[str, StructDef]) -> None:
    """Find every struct type used by `fields` (inline or common), depth first."""
    for f in fields:
        t = f["type"].removeprefix("[]")
        if t in PRIMITIVES:
            continue
        if "fields" in f:
            sub = f["fields"]
        elif t in schema.common:
            sub = schema.common[t]["fields"]
        else:
            raise ValueError(f"{schema.name}: unknown type {t}")
        if t in out:
            continue
        _collect(schema, sub, out)
        out[t] = StructDef(t, sub)


def _default(f: dict[str, Any], kind: str, nullable: bool) -> tuple[str, str]:
    """(python default expression for the dataclass, FieldSpec default expression)."""
    d = f.get("default")
    array = f["type"].startswith("[]")
    if d == "null":
        return "None", "None"
    if array:
        return "field(default_factory=list)", "()"
    if kind == "struct":
        return f"field(default_factory={f['type']})", "..."  # class name, not the alias
    if kind in INT_KINDS:
        v = repr(_parse_int(d)) if d not in (None, "") else "0"
        return v, v
    if kind == "float64":
        v = repr(float(d)) if d not in (None, "") else "0.0"
        return v, v
    if kind == "bool":
        v = "True" if d in (True, "true") else "False"
        return v, v
    if kind == "string":
        v = repr(d if d is not None else "")
        return v, v
    if kind == "bytes":
        return 'b""', 'b""'
    if kind == "records":
        return "None", "None"
    if kind == "uuid":
        return "ZERO_UUID", "ZERO_UUID"
    raise ValueError(kind)


def _rng(r: tuple[int, int]) -> str:
    return f"({r[0]}, {r[1]})"


@dataclass
class InitParam:
    """One keyword of a generated `__init__`: `default` in the signature; `fresh`, when set, is
    the new value (a list, a struct) an omitted argument stands for (`default` is then FRESH)."""

    name: str
    py: str
    default: str
    fresh: str | None = None


def _init_param(name: str, py: str, dflt: str) -> InitParam:
    if dflt == "field(default_factory=list)":
        return InitParam(name, py, "FRESH", "[]")
    if dflt.startswith("field(default_factory="):
        struct = dflt.removeprefix("field(default_factory=").removesuffix(")")
        return InitParam(name, py, "FRESH", f"_{struct}()")
    return InitParam(name, py, dflt)


def _field_lines(f: dict[str, Any], msg_versions: tuple[int, int]) -> tuple[str, str, InitParam]:
    """(dataclass field line, FieldSpec expression, `__init__` keyword) for one schema field."""
    wire = f["name"]
    name = py_name(wire)
    t = f["type"]
    array = t.startswith("[]")
    base = t.removeprefix("[]")
    kind = base if base in PRIMITIVES else "struct"
    nullable = parse_versions(f.get("nullableVersions"))
    versions = parse_versions(f["versions"])
    py = PY_TYPES.get(base, f"_{base}")
    if array:
        py = f"list[{py}]"
    dflt, spec_dflt = _default(f, kind, nullable != (1, 0))
    if nullable != (1, 0) or dflt == "None":
        py += " | None"
    kw = [repr(name), repr(wire), repr(kind)]
    if array:
        kw.append("array=True")
    if versions != (0, MAX_VERSION):
        kw.append(f"versions={_rng(versions)}")
    if nullable != (1, 0):
        kw.append(f"nullable={_rng(nullable)}")
    if "taggedVersions" in f:
        kw.append(f"tagged={_rng(parse_versions(f['taggedVersions']))}")
        kw.append(f"tag={int(f['tag'])}")
    if spec_dflt != "None":
        kw.append(f"default={spec_dflt}")
    if f.get("ignorable"):
        kw.append("ignorable=True")
    if kind == "struct":
        kw.append(f"struct={base}")
    if "flexibleVersions" in f:
        kw.append(f"flexible={_rng(parse_versions(f['flexibleVersions']))}")
    if f.get("mapKey"):
        kw.append("map_key=True")
    param = _init_param(name, py, dflt)
    if wire in SECRET_FIELDS:
        dflt = (
            dflt.replace(")", ", repr=False)")
            if dflt.startswith("field(")
            else f"field(default={dflt}, repr=False)"
        )
    return f"    {name}: {py} = {dflt}", f"FieldSpec({', '.join(kw)})", param


def _class_src(
    name: str,
    fields: list[dict[str, Any]],
    base: str,
    label: str,
    header: list[str],
    nested: list[str],
    about: str | None,
) -> list[str]:
    msg_versions = (0, MAX_VERSION)
    lines = [
        "@dataclass(slots=True, kw_only=True, init=False, repr=False, eq=False)",
        f"class {name}({base}):",
    ]
    if about:
        lines.append(f'    """{about}"""')
        lines.append("")
    lines += header
    for n in nested:
        lines.append(f"    {n} = {n}")
    specs = []
    params = []
    hidden = []
    seen: set[str] = set()
    for f in fields:
        fl, spec, param = _field_lines(f, msg_versions)
        params.append(param)
        if f["name"] in SECRET_FIELDS:
            hidden.append(param.name)
        pn = py_name(f["name"])
        if pn in seen:
            raise ValueError(f"{label}: duplicate field {pn}")
        seen.add(pn)
        about = " ".join(str(f.get("about", "")).split())
        if about:
            lines += ["    #: " + ln for ln in textwrap.wrap(about, 92)]
        lines.append(fl)
        specs.append(spec)
    lines.append("    unknown_tagged_fields: tuple[tuple[int, bytes], ...] = ()")
    lines.append(
        "    explicit_tags: frozenset[int] = field(default=frozenset(), compare=False, repr=False)"
    )
    lines.append("")
    lines.append(f"    _FIELDS = ({', '.join(specs)},)" if specs else "    _FIELDS = ()")
    lines.append(f"    _NAME = {label!r}")
    lines.append("    _FLEX = _FLEX_VERSIONS")
    lines.append("    _VERSIONS = _VALID_VERSIONS")
    if hidden:
        lines.append(f"    _HIDDEN = frozenset({{{', '.join(map(repr, sorted(hidden)))}}})")
    lines += ["", *_init_src(params)]
    return lines


def _init_src(params: list[InitParam]) -> list[str]:
    """The `__init__` of a struct, written out (a dataclass's is generated and exec'd when its
    module is imported: the bulk of the import time of a message module)."""
    params = [
        *params,
        InitParam("unknown_tagged_fields", "tuple[tuple[int, bytes], ...]", "()"),
        InitParam("explicit_tags", "frozenset[int]", "frozenset()"),
    ]
    lines = ["    def __init__(", "        self,", "        *,"]
    lines += [f"        {p.name}: {p.py} = {p.default}," for p in params]
    lines.append("    ) -> None:")
    for p in params:
        value = p.name if p.fresh is None else f"{p.fresh} if {p.name} is FRESH else {p.name}"
        lines.append(f"        self.{p.name} = {value}")
    return lines


def _about(text: str | None) -> str | None:
    if not text:
        return None
    return text.replace("\\", "\\\\").replace('"""', "'''").strip()


def module_source(schema: Schema) -> str:
    raw = schema.raw
    valid = parse_versions(raw["validVersions"])
    flex = parse_versions(raw.get("flexibleVersions"))
    structs: dict[str, StructDef] = {}
    _collect(schema, raw["fields"], structs)
    base_name, base_expr, response_name = _message_base(schema)
    src = [
        f"# Generated by tools/generate_protocol.py from {schema.path.name}"
        + (f" ({schema.overlay_source})" if schema.overlay_source else "")
        + ". Do not edit.",
        f'"""{schema.name}: Kafka {schema.type} schema, versions {valid[0]}-{valid[1]}."""',
        "",
        "from __future__ import annotations",
        "",
        "import uuid",
        "from dataclasses import dataclass, field",
        *(["from typing import TYPE_CHECKING"] if response_name else []),
        "",
        "from krafka.protocol.schema import FRESH, ZERO_UUID, "
        + ", ".join(sorted({base_name, "FieldSpec", "Struct"})),
        *(
            [
                "",
                "if TYPE_CHECKING:",
                f"    from krafka.protocol.messages.{snake(response_name)} import {response_name}",
            ]
            if response_name
            else []
        ),
        "",
        f"_FLEX_VERSIONS = {_rng(flex)}",
        f"_VALID_VERSIONS = {_rng(valid)}",
        "",
    ]
    for sd in structs.values():
        nested = [
            sub.removeprefix("[]")
            for sub in (f["type"] for f in sd.fields)
            if sub.removeprefix("[]") in structs
        ]
        src += ["", ""]
        src += _class_src(
            sd.name, sd.fields, "Struct", f"{schema.name}.{sd.name}", [], nested, None
        )
        src += ["", "", f"_{sd.name} = {sd.name}"]
    api_key = raw.get("apiKey")
    header = [
        f"    API_KEY = {api_key!r}",
        f"    MIN_VERSION = {valid[0]}",
        f"    MAX_VERSION = {valid[1]}",
        f"    FLEXIBLE_VERSION = {flex[0] if flex != (1, 0) else None}",
    ]
    if raw.get("latestVersionUnstable"):
        header.append("    LATEST_VERSION_UNSTABLE = True")
    if raw.get("deprecatedVersions"):
        header.append(
            f"    DEPRECATED_VERSIONS = {_rng(parse_versions(raw['deprecatedVersions']))}"
        )
    nested = sorted(
        {f["type"].removeprefix("[]") for f in raw["fields"]} & set(structs)
        | set(schema.common) & set(structs)
    )
    src += ["", ""]
    src += _class_src(
        schema.name,
        raw["fields"],
        base_expr,
        schema.name,
        header,
        nested,
        _about(f"Kafka {schema.name} ({schema.type}), versions {valid[0]}-{valid[1]}."),
    )
    exports = [schema.name, *structs]
    src += ["", "", f"__all__ = {sorted(exports)!r}", ""]
    return "\n".join(src)


def _message_base(schema: Schema) -> tuple[str, str, str | None]:
    """(base class to import, base class expression, response class name or None).

    A request is `Request[ItsResponse]` (Produce: `Request[ProduceResponse | None]`, as acks=0
    gets no answer), so a typed client returns the right response type for each request.
    """
    if schema.type == "request":
        response = schema.name.removesuffix("Request") + "Response"
        typed = f"{response} | None" if schema.name == "ProduceRequest" else response
        return "Request", f'Request["{typed}"]', response
    if schema.type == "response":
        return "Response", "Response", None
    return "ApiMessage", "ApiMessage", None


def module_name(schema: Schema) -> str:
    return snake(schema.name)


def api_key_name(request_name: str) -> str:
    return snake(request_name.removesuffix("Request")).upper()


def _struct_names(schema: Schema) -> list[str]:
    out: dict[str, StructDef] = {}
    _collect(schema, schema.raw["fields"], out)
    return list(out)


def package_init(schemas: list[Schema]) -> str:
    lines = [
        "# Generated by tools/generate_protocol.py. Do not edit.",
        '"""Every client-facing Kafka message class, the ApiKey enum and the api-key tables.',
        "",
        "Nested struct classes whose name is unique across all messages are exported here too;",
        "the others are reachable as class attributes (`FetchResponse.PartitionData`) or from",
        "the message's own module (`krafka.protocol.messages.fetch_response.PartitionData`).",
        "",
        "Each message module is imported when one of its names is first used (PEP 562), and",
        "`REQUESTS` / `RESPONSES` import a class when it is first looked up: a client pays only",
        'for the messages it speaks."""',
        "",
        "from __future__ import annotations",
        "",
        "import importlib",
        "from enum import IntEnum",
        "from typing import TYPE_CHECKING, Any",
        "",
        "from krafka.protocol.api_table import ApiTable",
        "from krafka.protocol.schema import Request, Response",
        "",
        "if TYPE_CHECKING:",
    ]
    counts: dict[str, int] = {}
    for s in schemas:
        for n in _struct_names(s):
            counts[n] = counts.get(n, 0) + 1
    top = {s.name for s in schemas}
    exports: dict[str, str] = {}
    for s in schemas:
        unique = [n for n in _struct_names(s) if counts[n] == 1 and n not in top]
        names = [s.name, *unique]
        exports.update((n, module_name(s)) for n in names)
        module = f"krafka.protocol.messages.{module_name(s)}"
        lines.append(f"    from {module} import {', '.join(names)}")
    reqs = sorted((s for s in schemas if s.type == "request"), key=lambda s: int(s.raw["apiKey"]))
    lines += ["", "", "class ApiKey(IntEnum):", '    """Kafka API keys."""', ""]
    for s in reqs:
        lines.append(f"    {api_key_name(s.name)} = {int(s.raw['apiKey'])}")
    lines += ["", "", "REQUESTS: ApiTable[ApiKey, type[Request[Any]]] = ApiTable(", "    __name__,"]
    lines += ["    {"]
    for s in reqs:
        lines.append(f"        ApiKey.{api_key_name(s.name)}: ({module_name(s)!r}, {s.name!r}),")
    lines += ["    },", ")", "RESPONSES: ApiTable[ApiKey, type[Response]] = ApiTable("]
    lines += ["    __name__,", "    {"]
    for s in reqs:
        resp = s.name.removesuffix("Request") + "Response"
        lines.append(f"        ApiKey.{api_key_name(s.name)}: ({snake(resp)!r}, {resp!r}),")
    lines += ["    },", ")", ""]
    lines.append("_EXPORTS: dict[str, str] = {")
    lines += [f"    {name!r}: {module!r}," for name, module in sorted(exports.items())]
    lines += ["}", ""]
    names = ["ApiKey", "REQUESTS", "RESPONSES", *exports]
    lines += [f"__all__ = {sorted(names)!r}", ""]
    lines += [
        "",
        "def __getattr__(name: str) -> Any:",
        "    try:",
        "        module = _EXPORTS[name]",
        "    except KeyError:",
        '        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None',
        '    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)',
        "    globals()[name] = value",
        "    return value",
        "",
        "",
        "def __dir__() -> list[str]:",
        "    return sorted([*globals(), *_EXPORTS])",
        "",
    ]
    return "\n".join(lines)
