"""Shared helpers for the codec tests."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any


def record_tuple(r: Any) -> tuple[Any, ...]:
    return (r.offset, r.timestamp, r.key, r.value, [tuple(h) for h in r.headers])


def batch_tuple(b: Any) -> tuple[Any, ...]:
    return (
        b.base_offset, b.magic, b.crc, b.compression, b.timestamp_type, b.is_transactional,
        b.is_control, b.partition_leader_epoch, b.producer_id, b.producer_epoch,
        b.base_sequence, b.attributes, b.batch_length, b.last_offset_delta, b.first_timestamp,
        b.max_timestamp, b.wrapper_timestamp, [record_tuple(r) for r in b.records],
    )  # fmt: skip


def b64(v: str | None) -> bytes | None:
    return None if v is None else base64.b64decode(v)


def load_manifest(testdata: Path) -> list[dict[str, Any]]:
    entries: list[dict[str, Any]] = json.loads((testdata / "corpus" / "manifest.json").read_text())[
        "entries"
    ]
    return entries
