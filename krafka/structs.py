"""Value types every client layer shares: where a record lives, what a group committed, who
a group member is.

`TopicPartition` and `OffsetAndMetadata` are the names Java, kafka-python and aiokafka users
know; the producer's transactions, the consumer and the admin client all key by them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple


class TopicPartition(NamedTuple):
    """One partition of one topic; hashable and ordered (`("orders", 0) < ("orders", 1)`)."""

    topic: str
    partition: int

    def __str__(self) -> str:
        return f"{self.topic}-{self.partition}"


class OffsetAndMetadata(NamedTuple):
    """A committed position: the offset of the *next* record to read, with optional metadata.

    `leader_epoch` is the leader epoch of the last consumed record when known (KIP-320), so a
    consumer resuming from it can detect log truncation.
    """

    offset: int
    metadata: str = ""
    leader_epoch: int | None = None


@dataclass(frozen=True, slots=True)
class ConsumerGroupMetadata:
    """A consumer's group membership, as `Producer.send_offsets_to_transaction` needs it
    (Java's ConsumerGroupMetadata): the broker fences commits from a stale generation."""

    group_id: str
    generation_id: int = -1
    member_id: str = ""
    group_instance_id: str | None = None


__all__ = ["ConsumerGroupMetadata", "OffsetAndMetadata", "TopicPartition"]
