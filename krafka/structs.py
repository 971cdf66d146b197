"""Value types every client layer shares: where a record lives and what a group committed.

`TopicPartition` and `OffsetAndMetadata` are the names Java, kafka-python and aiokafka users
know; the producer's transactions, the consumer and the admin client all key by them.
"""

from __future__ import annotations

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


__all__ = ["OffsetAndMetadata", "TopicPartition"]
