"""What `Producer.send_offsets_to_transaction` accepts, normalised for the transaction machine.

Users pass what their consumer gave them: `{TopicPartition: OffsetAndMetadata}` (or plain
offsets, or `(topic, partition)` keys, kafka-python style) and `consumer.group_metadata()` (or
just a group id).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from krafka.structs import ConsumerGroupMetadata, OffsetAndMetadata, TopicPartition


def group_metadata_of(value: ConsumerGroupMetadata | str) -> ConsumerGroupMetadata:
    """A consumer's group metadata, or a bare group id (generation -1: no fencing)."""
    if isinstance(value, ConsumerGroupMetadata):
        return value
    if isinstance(value, str):
        return ConsumerGroupMetadata(value)
    raise TypeError(
        f"group_metadata must be a consumer's group_metadata() or a group id, not {value!r}"
    )


def normalize_offsets(offsets: Mapping[Any, Any]) -> dict[TopicPartition, OffsetAndMetadata]:
    """`{TopicPartition | (topic, partition) | peer's TopicPartition: OffsetAndMetadata | int}`
    -> typed pairs."""
    out: dict[TopicPartition, OffsetAndMetadata] = {}
    for key, value in offsets.items():
        if isinstance(key, tuple):
            topic, partition = key
        else:  # confluent-kafka's and kafka-python's TopicPartition objects
            topic, partition = key.topic, key.partition
        tp = TopicPartition(str(topic), int(partition))
        if isinstance(value, OffsetAndMetadata):
            out[tp] = value
        elif isinstance(value, int):
            out[tp] = OffsetAndMetadata(value)
        else:
            raise TypeError(f"offset for {tp} must be an OffsetAndMetadata or an int: {value!r}")
    return out
