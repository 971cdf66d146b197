"""`krafka produce` as a subprocess against Tansu, read back by librdkafka."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from _cli import assert_one_error_line, read_back, run_cli
from _members import unique

from krafka.cli.produce import LineSplitter, record_of

pytestmark = [pytest.mark.timeout(120)]


@pytest.mark.broker
def test_stdin_lines_with_keys_and_headers(broker: Any) -> None:
    b, topic = broker.bootstrap_servers, unique("cli-produce")
    run_cli("-b", b, "topics", "create", topic, "--partitions", "1")
    done = run_cli(
        "-b", b, "produce", topic, "--key-separator", ":", "--header", "src=cli",
        "--header", "n=1", "--compression", "zstd",
        input="k1:v1\nk2:v:2\r\n:empty key\nk4:\n",
    )  # fmt: skip
    assert done.returncode == 0, done
    assert done.stderr.startswith(f"Produced 4 records to {topic} (")
    records = read_back(b, topic, 4)
    assert [(r.key(), r.value()) for r in records] == [
        (b"k1", b"v1"), (b"k2", b"v:2"), (b"", b"empty key"), (b"k4", b""),
    ]  # fmt: skip
    assert all(r.headers() == [("src", b"cli"), ("n", b"1")] for r in records)


@pytest.mark.broker
def test_file_input_and_key_routing(broker: Any, tmp_path: Path) -> None:
    b, topic = broker.bootstrap_servers, unique("cli-produce-file")
    run_cli("-b", b, "topics", "create", topic, "--partitions", "3")
    path = tmp_path / "lines.txt"
    path.write_bytes(b"".join(b"key-%d\tvalue-%d\n" % (i % 7, i) for i in range(5000)))
    done = run_cli("-b", b, "produce", topic, "--file", str(path), "--key-separator", "\t")
    assert done.returncode == 0, done
    assert done.stderr.startswith(f"Produced 5000 records to {topic} (")
    records = read_back(b, topic, 5000, partitions=3)
    assert sorted(int(r.value()[6:]) for r in records) == list(range(5000))
    for key in {r.key() for r in records}:  # one partition per key (murmur2, as Java's)
        assert len({r.partition() for r in records if r.key() == key}) == 1


@pytest.mark.broker
def test_a_line_without_separator_fails_naming_it(broker: Any) -> None:
    b, topic = broker.bootstrap_servers, unique("cli-produce-bad")
    done = run_cli("-b", b, "produce", topic, "--key-separator", "=", input="a=1\nno separator\n")
    assert_one_error_line(done, "line 2", "'='")


def test_line_splitting() -> None:
    splitter = LineSplitter()
    assert splitter.feed(b"a\r\nb") == [b"a"]
    assert splitter.feed(b"c\n\nd") == [b"bc", b""]
    assert splitter.end() == [b"d"] and splitter.end() == []
    assert record_of(b"k::v", b"::", 1) == (b"k", b"v")
    assert record_of(b"value", None, 1) == (None, b"value")
