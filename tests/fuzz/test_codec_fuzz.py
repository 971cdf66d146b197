"""Short hypothesis-driven fuzzing of every codec decoder (the default suite runs a brief pass).

Invariant: decode or raise CorruptRecordError, and both implementations agree. Mark `slow` runs
many more examples (`pytest -m slow tests/fuzz`).
"""

from __future__ import annotations

import struct
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "fuzz"))
from harness import batches_outcome

from krafka._codec import implementations
from krafka.codec import encode_batch

SHORT = settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
LONG = settings(max_examples=20_000, deadline=None, suppress_health_check=list(HealthCheck))
IMPL = implementations()["pure"]
VALID = encode_batch(
    [IMPL.Record(key=b"k%d" % i, value=b"v" * i, headers=[("h", b"x")], timestamp=i)
     for i in range(5)],
    "gzip",
)  # fmt: skip


@st.composite
def mutated_batches(draw: st.DrawFn) -> bytes:
    """A valid batch with a few bytes overwritten, the CRC fixed up half of the time."""
    blob = bytearray(VALID)
    for _ in range(draw(st.integers(1, 6))):
        blob[draw(st.integers(0, len(blob) - 1))] = draw(st.integers(0, 255))
    if draw(st.booleans()):
        from krafka._codec.crc import crc32c

        struct.pack_into(">I", blob, 17, crc32c(memoryview(blob)[21:]))
    return bytes(blob[: draw(st.integers(0, len(blob)))])


def check(data: bytes) -> None:
    batches_outcome(data)


@SHORT
@given(st.binary(max_size=512))
def test_random_bytes(data: bytes) -> None:
    check(data)


@SHORT
@given(mutated_batches())
def test_mutated_batches(data: bytes) -> None:
    check(data)


@pytest.mark.slow
@LONG
@given(st.one_of(st.binary(max_size=2048), mutated_batches()))
def test_long_fuzz(data: bytes) -> None:
    check(data)
