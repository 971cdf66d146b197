"""KRAFKA_NO_EXTENSIONS=1 selects the pure-Python twin, which behaves the same."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from krafka._codec import implementations

SCRIPT = """
import sys
from krafka import codec
from krafka._codec import impl
blob = codec.encode_batch([codec.Record(key=b"k", value=b"v", timestamp=1)], compression="lz4")
(batch,) = codec.decode_batches(blob)
print(impl.name, codec.IMPLEMENTATION, type(batch.records[0]).__module__, blob.hex())
"""


def run(env_value: str | None) -> list[str]:
    env = {k: v for k, v in os.environ.items() if k != "KRAFKA_NO_EXTENSIONS"}
    if env_value is not None:
        env["KRAFKA_NO_EXTENSIONS"] = env_value
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT], env=env, cwd=root, capture_output=True, text=True,
        check=True,
    )  # fmt: skip
    return out.stdout.split()


def test_no_extensions_selects_pure_python():
    name, public, module, _blob = run("1")
    assert (name, public, module) == ("pure", "pure", "krafka._codec.types")


@pytest.mark.skipif("compiled" not in implementations(), reason="extensions not built")
def test_default_is_compiled_and_bytes_are_identical():
    compiled = run(None)
    pure = run("1")
    assert compiled[:2] == ["compiled", "compiled"]
    assert compiled[3] == pure[3]


def test_implementations_lists_real_modules_under_no_extensions():
    script = (
        "from krafka._codec import implementations\n"
        "print(sorted((k, v is not None) for k, v in implementations().items()))"
    )
    env = {**os.environ, "KRAFKA_NO_EXTENSIONS": "1"}
    out = subprocess.run(
        [sys.executable, "-c", script], env=env, cwd=Path(__file__).resolve().parents[2],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    assert "None" not in out and "False" not in out
