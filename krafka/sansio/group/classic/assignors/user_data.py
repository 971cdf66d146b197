"""The user data Java's sticky assignors put in a subscription, so members of Java, librdkafka,
kafka-python and krafka read each other's.

- `sticky` (eager, Java's `StickyAssignor`): `previous_assignment: [{topic: string,
  partitions: [int32]}]` then `generation: int32` (V1; V0 has no generation). Strings carry an
  int16 length, arrays an int32 count, all big-endian. Java writes V1 and reads V1, then V0.
- `cooperative-sticky` (Java's `CooperativeStickyAssignor`): a single `generation: int32`.

The decoders are strict (a `RemoteProtocolError` names what failed); the assignors treat
unreadable user data as Java does (no previous assignment, generation -1).
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from krafka.errors import RemoteProtocolError
from krafka.sansio.group.classic.assignors._java import hash_map_order
from krafka.structs import TopicPartition

_INT16: Final = struct.Struct(">h")
_INT32: Final = struct.Struct(">i")


@dataclass(frozen=True, slots=True)
class StickyUserData:
    """A sticky member's previous assignment and its generation (None in V0 user data)."""

    previous_assignment: tuple[TopicPartition, ...]
    generation: int | None


def _grouped(partitions: Sequence[TopicPartition]) -> dict[str, list[int]]:
    """Partitions per topic, topics in the order Java's `groupPartitionsByTopic` map yields
    them (so the bytes equal Java's)."""
    by_topic: dict[str, list[int]] = {}
    for topic, partition in partitions:
        by_topic.setdefault(topic, []).append(partition)
    return {topic: by_topic[topic] for topic in hash_map_order(by_topic)}


def encode_sticky_user_data(partitions: Sequence[TopicPartition], generation: int) -> bytes:
    """V1 sticky user data: the partitions grouped by topic, then the generation."""
    by_topic = _grouped(partitions)
    out = [_INT32.pack(len(by_topic))]
    for topic, numbers in by_topic.items():
        name = topic.encode()
        out.append(_INT16.pack(len(name)) + name + _INT32.pack(len(numbers)))
        out.append(struct.pack(f">{len(numbers)}i", *numbers))
    out.append(_INT32.pack(generation))
    return b"".join(out)


class _Reader:
    __slots__ = ("_data", "_pos", "_what")

    def __init__(self, data: bytes, what: str) -> None:
        self._data = data
        self._pos = 0
        self._what = what

    def _take(self, size: int, field: str) -> bytes:
        if size > len(self._data) - self._pos:
            raise RemoteProtocolError(
                f"{self._what}: {field} needs {size} bytes at offset {self._pos}, "
                f"{len(self._data) - self._pos} remain"
            )
        chunk = self._data[self._pos : self._pos + size]
        self._pos += size
        return chunk

    def int16(self, field: str) -> int:
        value: int = _INT16.unpack(self._take(2, field))[0]
        return value

    def int32(self, field: str) -> int:
        value: int = _INT32.unpack(self._take(4, field))[0]
        return value

    def count(self, field: str, item_size: int) -> int:
        count = self.int32(field)
        if count < 0:
            raise RemoteProtocolError(f"{self._what}: {field} has negative length {count}")
        if count * item_size > len(self._data) - self._pos:
            raise RemoteProtocolError(
                f"{self._what}: {field} of {count} items exceeds the "
                f"{len(self._data) - self._pos} remaining bytes"
            )
        return count

    def string(self, field: str) -> str:
        length = self.int16(field)
        if length < 0:
            raise RemoteProtocolError(f"{self._what}: {field} has negative length {length}")
        return self._take(length, field).decode("utf-8", "replace")


def _read_previous_assignment(reader: _Reader) -> tuple[TopicPartition, ...]:
    out: list[TopicPartition] = []
    for i in range(reader.count("previous_assignment", 6)):
        topic = reader.string(f"previous_assignment[{i}].topic")
        field = f"previous_assignment[{i}].partitions"
        for _ in range(reader.count(field, 4)):
            out.append(TopicPartition(topic, reader.int32(field)))
    return tuple(out)


def decode_sticky_user_data(data: bytes) -> StickyUserData:
    """Read V1 sticky user data, else V0 (no generation); trailing bytes are ignored, as in
    Java. Raises `RemoteProtocolError` if neither layout fits."""
    try:
        reader = _Reader(data, "sticky assignor user data")
        partitions = _read_previous_assignment(reader)
        return StickyUserData(partitions, reader.int32("generation"))
    except RemoteProtocolError:
        reader = _Reader(data, "sticky assignor user data (V0)")
        return StickyUserData(_read_previous_assignment(reader), None)


def encode_cooperative_sticky_user_data(generation: int) -> bytes:
    return _INT32.pack(generation)


def decode_cooperative_sticky_user_data(data: bytes) -> int:
    """The generation in cooperative-sticky user data (trailing bytes ignored, as in Java)."""
    return _Reader(data, "cooperative-sticky assignor user data").int32("generation")


__all__ = [
    "StickyUserData",
    "decode_cooperative_sticky_user_data",
    "decode_sticky_user_data",
    "encode_cooperative_sticky_user_data",
    "encode_sticky_user_data",
]
