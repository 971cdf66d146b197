"""The consumer's partition arguments checked in the application's call: a wrong type is a
`TypeError` naming the call and the argument there, never a value that reaches the engine and
fails later in the background (or as Python's own message about `TopicPartition.__new__`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from krafka.structs import OffsetAndMetadata, TopicPartition


def partition_list(call: str, partitions: object) -> list[TopicPartition]:
    """`partitions` (an iterable of `TopicPartition` or `(topic, partition)` pairs) as a list;
    a single partition, a topic name or an item of another shape raises `TypeError`."""
    if isinstance(partitions, TopicPartition):
        raise TypeError(
            f"{call}(partitions) takes an iterable of TopicPartition, not a single one: "
            f"{call}([{partitions!r}])"
        )
    if isinstance(partitions, str | bytes) or not isinstance(partitions, Iterable):
        raise TypeError(
            f"{call}(partitions) takes an iterable of TopicPartition, not "
            f"{type(partitions).__name__} ({partitions!r})"
            + (
                _subscribe_hint(partitions)
                if isinstance(partitions, str) and call == "assign"
                else ""
            )
        )
    return [topic_partition(call, item) for item in partitions]


def topic_partition(call: str, item: object, argument: str = "partitions") -> TopicPartition:
    """`item` as a `TopicPartition` with an int partition (a `(topic, partition)` pair is
    accepted); anything else raises `TypeError` naming `call` and its `argument`."""
    where = f"{call}({argument})"
    if isinstance(item, str):
        raise TypeError(
            f"{where}: {item!r} is a topic name, not a TopicPartition"
            + (_subscribe_hint(item) if call == "assign" else "")
        )
    if not isinstance(item, tuple) or len(item) != 2:
        raise TypeError(
            f"{where}: a TopicPartition(topic, partition), not {type(item).__name__} ({item!r})"
        )
    topic, partition = item
    if isinstance(partition, bool) or not isinstance(partition, int):
        raise TypeError(
            f"{where}: the partition of {topic!r} is an int, not "
            f"{type(partition).__name__} ({partition!r})"
        )
    return TopicPartition(topic, partition)


def offset_argument(call: str, offset: object) -> int:
    """`offset` if it is an int (the engine refuses a negative one)."""
    if isinstance(offset, bool) or not isinstance(offset, int):
        raise TypeError(f"{call}(offset) is an int, not {type(offset).__name__} ({offset!r})")
    return offset


def offsets_argument(call: str, offsets: object) -> dict[TopicPartition, OffsetAndMetadata]:
    """`offsets` (a mapping of `TopicPartition` to an int offset or `OffsetAndMetadata`) with
    every value an `OffsetAndMetadata`; a wrong key or value raises `TypeError`."""
    if not isinstance(offsets, Mapping):
        raise TypeError(
            f"{call}(offsets) is a mapping of TopicPartition to an offset, not "
            f"{type(offsets).__name__} ({offsets!r:.60})"
        )
    checked: dict[TopicPartition, OffsetAndMetadata] = {}
    for key, value in offsets.items():
        tp = topic_partition(call, key, "offsets")
        given = value.offset if isinstance(value, OffsetAndMetadata) else value
        if isinstance(given, bool) or not isinstance(given, int):
            raise TypeError(
                f"{call}(offsets): the offset of {tp} is an int (or OffsetAndMetadata), not "
                f"{type(given).__name__} ({given!r})"
            )
        checked[tp] = value if isinstance(value, OffsetAndMetadata) else OffsetAndMetadata(given)
    return checked


def _subscribe_hint(topic: str) -> str:
    return (
        f": assign([TopicPartition({topic!r}, 0)]) reads one partition; "
        f"subscribe([{topic!r}]) with a group_id reads them all"
    )


__all__ = ["offset_argument", "offsets_argument", "partition_list", "topic_partition"]
