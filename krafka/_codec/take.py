"""A consumer's records made from a batch (pure-Python twins of `_records.consumer_records` and
`_take.slot_fields`).

`consumer_records` decodes one entry (a v2 batch or a legacy message) into one `record_type`
tuple per record, `(topic, partition, offset, timestamp, timestamp_type, key, value, headers,
leader_epoch)`: the batch's timestamp type as 0 or 1, its leader epoch (None when it has none),
the headers as a tuple of (key, value) pairs (the shared `()` when the record has none).
The compiled twin makes them straight from the batch's bytes, with no `Record` in between.

`slot_fields(cls)` makes a NamedTuple's field reads cheap; the compiled twin turns them into
slot reads, here they stay as they are (the same objects are read either way).
"""

from __future__ import annotations

from typing import Any, TypeVar

from krafka._codec.batches import decode_entry
from krafka._codec.types import BatchHeader

T = TypeVar("T")


def consumer_records(
    buf: bytes | bytearray | memoryview,
    header: BatchHeader,
    check_crc: bool,
    max_decompressed_size: int,
    topic: str,
    partition: int,
    record_type: type,
) -> list[Any]:
    batch = decode_entry(buf, header, check_crc, max_decompressed_size)
    tstype = int(batch.timestamp_type or 0)
    epoch = batch.partition_leader_epoch
    if epoch is not None and epoch < 0:
        epoch = None
    new = tuple.__new__
    return [
        new(record_type, (topic, partition, r.offset, r.timestamp, tstype, r.key, r.value,
                          tuple(r.headers), epoch))
        for r in batch.records
    ]  # fmt: skip


def slot_fields(cls: type[T]) -> type[T]:
    """`cls` as it is: plain Python has no cheaper field read than a NamedTuple's own."""
    if not issubclass(cls, tuple):
        raise TypeError(f"{cls.__name__} is not a tuple type without instance slots or dict")
    return cls


__all__ = ["consumer_records", "slot_fields"]
