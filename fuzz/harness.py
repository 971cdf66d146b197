"""Shared invariant for the fuzz harnesses: parse or raise the decoder's own error type."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from krafka._codec import implementations
from krafka.errors import CorruptRecordError

IMPLS = implementations()
SMALL_CAP = 4 << 20  # keep the fuzzers' memory bounded


def outcome(decode: Callable[[bytes], Any], data: bytes) -> Any:
    try:
        return decode(data)
    except CorruptRecordError:
        return CorruptRecordError


def batches_outcome(data: bytes) -> list[Any]:
    """Decode with every implementation; they must agree."""
    results = []
    for codec in IMPLS.values():
        result = outcome(lambda d, c=codec: _flatten(c.decode_batches(d, True, SMALL_CAP)), data)
        results.append(result)
    if any(r != results[0] for r in results[1:]):
        raise AssertionError(f"implementations disagree on {data!r}")
    return results


def _flatten(batches: list[Any]) -> list[Any]:
    return [
        (b.base_offset, b.magic, b.crc, b.attributes,
         [(r.offset, r.timestamp, r.key, r.value, list(r.headers)) for r in b.records])
        for b in batches
    ]  # fmt: skip
