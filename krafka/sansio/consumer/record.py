"""What a consumer hands the application: `ConsumerRecord`s, or raw `FetchedBatch`es."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

from krafka._codec import impl
from krafka.structs import TopicPartition

Header = tuple[str, "bytes | None"]


class ConsumerRecord(NamedTuple):
    """One record as consumed. A named tuple (as aiokafka's and kafka-python's records are
    plain value objects): one is made for every record, so it must be cheap to make. It is an
    immutable value: `headers` is a tuple of (key, value) pairs, `()` when the record has none
    (as aiokafka's), so a record is hashable when its key and value are.

    `timestamp_type` is 0 (CreateTime) or 1 (LogAppendTime); `leader_epoch` is None when the
    batch does not carry one (legacy formats).
    """

    topic: str
    partition: int
    offset: int
    timestamp: int
    timestamp_type: int
    key: Any
    value: Any
    headers: tuple[Header, ...]
    leader_epoch: int | None

    def is_tombstone(self) -> bool:
        """A record with a null value: in a compacted topic, the deletion of its key."""
        return self.value is None


impl.slot_fields(ConsumerRecord)  # `record.value` read as a slot: see `krafka._codec.take`


@dataclass(frozen=True, slots=True)
class FetchedBatch:
    """A partition's record batches exactly as the broker sent them, for bulk decoders
    (`krafka.codec.decode_to_arrow`): no per-record work is done on this path.

    `data` may start before `start` (batches are returned whole) and its trailing partial
    batch is trimmed; the consumer's position moves to `next_offset`. `aborted_transactions`
    are the broker's (producer_id, first_offset) pairs for read_committed filtering.
    """

    partition: TopicPartition
    data: bytes | memoryview
    start: int
    next_offset: int
    high_watermark: int
    last_stable_offset: int
    log_start_offset: int
    aborted_transactions: tuple[tuple[int, int], ...] = ()


__all__ = ["ConsumerRecord", "FetchedBatch", "Header"]
