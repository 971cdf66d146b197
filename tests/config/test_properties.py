"""Java `.properties` files: the format of `java.util.Properties.load`."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from krafka.config.properties import load_properties, parse_properties
from krafka.errors import ConfigError


def test_separators_comments_continuations_and_escapes() -> None:
    text = (
        "# a comment\n"
        "! another\n"
        "\n"
        "bootstrap.servers=b1:9092,b2:9092\n"
        "  security.protocol : SASL_SSL\n"
        "sasl.mechanism SCRAM-SHA-512\n"
        "sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required \\\n"
        '    username="alice" \\\n'
        '    password="s3cr=t";\n'
        "key\\=with\\:colon = v\\tal\\u00e9\n"
        "empty=\n"
        "path=C:\\\\dir\\\\file\n"
        "client.id=first\n"
        "client.id=second\n"
    )
    assert parse_properties(text) == {
        "bootstrap.servers": "b1:9092,b2:9092",
        "security.protocol": "SASL_SSL",
        "sasl.mechanism": "SCRAM-SHA-512",
        "sasl.jaas.config": "org.apache.kafka.common.security.scram.ScramLoginModule required "
        'username="alice" password="s3cr=t";',
        "key=with:colon": "v\talé",
        "empty": "",
        "path": "C:\\dir\\file",
        "client.id": "second",
    }


def test_java_round_trip_of_plain_pairs(tmp_path: Path) -> None:
    path = tmp_path / "client.properties"
    path.write_text("a=1\nb = two words \n", encoding="utf-8")
    assert load_properties(path) == {"a": "1", "b": "two words "}
    with pytest.raises(ConfigError, match="cannot read properties file"):
        load_properties(tmp_path / "missing.properties")


def test_only_java_line_terminators_end_a_line() -> None:
    """U+2028, U+2029, U+0085, `\\v` and the file separators are ordinary characters to Java."""
    odd = "\u2028\u2029\x85\x0b\x1c\x1d\x1e"
    assert parse_properties(f"a=x{odd}y\r\nb=2\rc=3") == {"a": f"x{odd}y", "b": "2", "c": "3"}


@given(
    st.dictionaries(
        st.from_regex(r"[a-z][a-z0-9.]{0,20}", fullmatch=True),
        st.text(st.characters(blacklist_categories=("Cs", "Cc")), max_size=30),
    )
)
def test_escaped_values_read_back(pairs: dict[str, str]) -> None:
    def escape(value: str) -> str:
        out = value.replace("\\", "\\\\")
        return ("\\" + out) if out.startswith((" ", "\t")) else out

    text = "".join(f"{k}={escape(v)}\n" for k, v in pairs.items())
    assert parse_properties(text) == pairs
