"""Reading Java `.properties` files (`client.properties` for `--command-config`).

The format of `java.util.Properties.load`: `key=value`, `key: value` or `key value`; `#` and
`!` start comment lines; a line ending in an odd number of backslashes continues on the next
(leading blanks of the continuation dropped); `\\t \\n \\r \\f \\uXXXX` are escapes and a
backslash before any other character stands for that character (so `\\=` and `\\:` put those
in a key). Later keys win, as in Java.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from typing import Final

from krafka.errors import ConfigError

_ESCAPES: Final = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}
_ESCAPE: Final = re.compile(r"\\(u[0-9A-Fa-f]{4}|.)", re.DOTALL)
_BLANK: Final = " \t\f"
#: Java's line terminators; `str.splitlines` would also break at U+2028, U+0085, `\v` and more.
_LINE_END: Final = re.compile(r"\r\n|\r|\n")


def parse_properties(text: str) -> dict[str, str]:
    """The properties of a `.properties` document, in order (a later key replaces an earlier)."""
    out: dict[str, str] = {}
    for line in _logical_lines(text):
        key, value = _split(line)
        out[_unescape(key)] = _unescape(value)
    return out


def load_properties(path: str | os.PathLike[str]) -> dict[str, str]:
    """`parse_properties` of a file (UTF-8, as Java 9+ reads them); `ConfigError` if unreadable."""
    try:
        with open(path, encoding="utf-8") as f:
            return parse_properties(f.read())
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read properties file {os.fspath(path)!r}: {exc}") from exc


def _logical_lines(text: str) -> Iterator[str]:
    pending: list[str] = []
    for raw in _LINE_END.split(text):
        line = raw.lstrip(_BLANK)
        if not pending and (not line or line[0] in "#!"):
            continue
        trailing = len(line) - len(line.rstrip("\\"))
        if trailing % 2:
            pending.append(line[:-1])
            continue
        pending.append(line)
        yield "".join(pending)
        pending = []
    if pending:
        yield "".join(pending)


def _split(line: str) -> tuple[str, str]:
    """Key and value: the key ends at the first unescaped `=`, `:` or blank."""
    i = 0
    while i < len(line):
        c = line[i]
        if c == "\\":
            i += 2
            continue
        if c in "=:" or c in _BLANK:
            break
        i += 1
    key, rest = line[:i], line[i:].lstrip(_BLANK)
    if rest[:1] in ("=", ":"):
        rest = rest[1:].lstrip(_BLANK)
    return key, rest


def _unescape(text: str) -> str:
    def replace(match: re.Match[str]) -> str:
        escaped = match.group(1)
        if len(escaped) == 5:
            return chr(int(escaped[1:], 16))
        return _ESCAPES.get(escaped, escaped)

    return _ESCAPE.sub(replace, text)


__all__ = ["load_properties", "parse_properties"]
