"""kcat-style `--format` templates."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from krafka.cli.template import compile_template, render


@dataclass
class Rec:
    topic: str = "orders"
    partition: int = 2
    offset: int = 41
    timestamp: int = 1700000000000
    key: bytes | None = b"k1"
    value: bytes | None = b"v\x00\xff"
    headers: list[tuple[str, bytes | None]] = field(
        default_factory=lambda: [("a", b"1"), ("b", None)]
    )


def test_placeholders_escapes_and_the_trailing_newline() -> None:
    parts = compile_template(r"%t/%p@%o %T\t%k=%v|%h|%K,%S 100%%")
    assert render(parts, Rec()) == (b"orders/2@41 1700000000000\tk1=v\x00\xff|a=1,b=|2,3 100%\n")
    assert render(compile_template("%v"), Rec(value=None)) == b"\n"
    assert render(compile_template(r"%k\n"), Rec()) == b"k1\n"
    assert render(compile_template("%K %S"), Rec(key=None, value=b"")) == b"-1 0\n"
    assert render(compile_template(r"a\\b"), Rec()) == b"a\\b\n"


def test_unknown_placeholders_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown placeholder %x"):
        compile_template("%x")
    with pytest.raises(ValueError, match="unknown placeholder %"):
        compile_template("100%")
