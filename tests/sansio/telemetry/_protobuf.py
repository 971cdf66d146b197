"""A minimal protobuf reader for tests: enough to read an OTLP payload back."""

from __future__ import annotations

from typing import Any


def read_message(data: bytes) -> dict[int, list[Any]]:
    """Fields of one protobuf message: number -> raw values (ints, 8-byte or nested bytes)."""
    fields: dict[int, list[Any]] = {}
    i = 0
    while i < len(data):
        key, i = _varint(data, i)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, i = _varint(data, i)
        elif wire == 1:
            value, i = data[i : i + 8], i + 8
        else:
            assert wire == 2
            size, i = _varint(data, i)
            value, i = data[i : i + size], i + size
        fields.setdefault(number, []).append(value)
    return fields


def _varint(data: bytes, i: int) -> tuple[int, int]:
    shift = value = 0
    while True:
        byte = data[i]
        i += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, i
