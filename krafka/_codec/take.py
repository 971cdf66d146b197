"""Turning decoded records into a consumer's records in bulk (pure-Python twin of `_take.pyx`).

`take_records` walks `records` (a batch's decoded `Record`s) from `index`, skips those below
`min_offset`, stops before `stop_offset` (>= 0: the last stable offset under read_committed)
or after `limit` records, and appends one `record_type` tuple per record to `out`:
`(topic, partition, offset, timestamp, timestamp_type, key, value, headers, leader_epoch)`.
Returns `(index, taken, next_offset, stopped)`: where to resume, how many were appended, the
offset after the last one appended (-1 if none), and whether `stop_offset` was reached.

`slot_fields(cls)` makes a NamedTuple's field reads cheap; the compiled twin turns them into
slot reads, here they stay as they are (the same objects are read either way).
"""

from __future__ import annotations

from typing import Any, TypeVar

T = TypeVar("T")


def take_records(
    records: list[Any],
    index: int,
    limit: int,
    min_offset: int,
    stop_offset: int,
    topic: str,
    partition: int,
    timestamp_type: int,
    leader_epoch: int | None,
    record_type: type,
    out: list[Any],
) -> tuple[int, int, int, bool]:
    new = tuple.__new__
    taken, next_offset, n = 0, -1, len(records)
    while index < n and taken < limit:
        rec = records[index]
        offset = rec.offset
        if offset < min_offset:
            index += 1
            continue
        if 0 <= stop_offset <= offset:
            return index, taken, next_offset, True
        out.append(
            new(
                record_type,
                (
                    topic,
                    partition,
                    offset,
                    rec.timestamp,
                    timestamp_type,
                    rec.key,
                    rec.value,
                    rec.headers,
                    leader_epoch,
                ),
            )
        )
        index += 1
        taken += 1
        next_offset = offset + 1
    return index, taken, next_offset, False


def slot_fields(cls: type[T]) -> type[T]:
    """`cls` as it is: plain Python has no cheaper field read than a NamedTuple's own."""
    if not issubclass(cls, tuple):
        raise TypeError(f"{cls.__name__} is not a tuple type without instance slots or dict")
    return cls


__all__ = ["slot_fields", "take_records"]
