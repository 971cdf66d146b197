"""kcat-style output templates for `krafka consume --format`.

    %k key    %v value    %t topic    %p partition    %o offset    %T timestamp (ms)
    %h headers (k=v,k2=v2)    %K key length    %S value length    %% a percent sign
    \\n newline    \\t tab    \\r carriage return    \\\\ backslash

Keys, values and header values are written as their raw bytes (a null one as nothing, its
length as -1). A template that does not end with a newline gets one, so each record is one
line: `--format '%k:%v'`. The template is compiled once into parts, so formatting a record
is a join of bytes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Final

Part = bytes | Callable[[Any], bytes]

_ESCAPES: Final = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\"}


def _text(value: object) -> bytes:
    return str(value).encode()


def _headers(record: Any) -> bytes:
    return b",".join(k.encode() + b"=" + (v or b"") for k, v in record.headers)


def _length(data: bytes | None) -> bytes:
    return b"-1" if data is None else _text(len(data))


FIELDS: Final[dict[str, Callable[[Any], bytes]]] = {
    "k": lambda r: r.key or b"",
    "v": lambda r: r.value or b"",
    "t": lambda r: r.topic.encode(),
    "p": lambda r: _text(r.partition),
    "o": lambda r: _text(r.offset),
    "T": lambda r: _text(r.timestamp),
    "h": _headers,
    "K": lambda r: _length(r.key),
    "S": lambda r: _length(r.value),
}


def compile_template(template: str) -> list[Part]:
    """The parts of `template`; `ValueError` naming an unknown placeholder or escape."""
    parts: list[Part] = []
    literal: list[str] = []
    i = 0
    while i < len(template):
        c = template[i]
        nxt = template[i + 1] if i + 1 < len(template) else ""
        if c == "%":
            if nxt == "%":
                literal.append("%")
            elif nxt in FIELDS:
                if literal:
                    parts.append("".join(literal).encode())
                    literal = []
                parts.append(FIELDS[nxt])
            else:
                raise ValueError(f"unknown placeholder %{nxt} in --format (known: "
                                 + " ".join(f"%{f}" for f in FIELDS) + " %%)")  # fmt: skip
            i += 2
        elif c == "\\" and nxt in _ESCAPES:
            literal.append(_ESCAPES[nxt])
            i += 2
        else:
            literal.append(c)
            i += 1
    text = "".join(literal)
    if not text.endswith("\n"):
        text += "\n"
    parts.append(text.encode())
    return parts


def render(parts: Sequence[Part], record: Any) -> bytes:
    """One record through a compiled template."""
    return b"".join(p if isinstance(p, bytes) else p(record) for p in parts)


__all__ = ["FIELDS", "compile_template", "render"]
