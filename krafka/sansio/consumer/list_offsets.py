"""ListOffsets as the consumer's resets speak it: one request per leader for the partitions
that need the earliest or latest offset, and the answer read per partition."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Final

from krafka.protocol.messages import ListOffsetsRequest, ListOffsetsResponse
from krafka.protocol.messages.list_offsets_request import ListOffsetsPartition, ListOffsetsTopic
from krafka.sansio.isolation import IsolationLevel
from krafka.structs import TopicPartition

#: v1 answers with one offset (v0's list is not spoken); READ_COMMITTED needs v2.
MIN_VERSION: Final = 1
READ_COMMITTED_MIN_VERSION: Final = 2


@dataclass(frozen=True, slots=True)
class ListedPartition:
    """One partition of a ListOffsets answer."""

    partition: TopicPartition
    error_code: int
    offset: int
    leader_epoch: int | None


def list_offsets_request(
    specs: Mapping[TopicPartition, int], isolation: IsolationLevel
) -> ListOffsetsRequest:
    """Look up `specs` ({partition: -2 earliest | -1 latest}) at one leader."""
    topics: dict[str, list[ListOffsetsPartition]] = {}
    for tp in sorted(specs):
        topics.setdefault(tp.topic, []).append(
            ListOffsetsPartition(partition_index=tp.partition, timestamp=specs[tp])
        )
    return ListOffsetsRequest(
        replica_id=-1,
        isolation_level=int(isolation),
        topics=[ListOffsetsTopic(name=t, partitions=p) for t, p in topics.items()],
    )


def min_version(isolation: IsolationLevel) -> int:
    return READ_COMMITTED_MIN_VERSION if isolation is IsolationLevel.READ_COMMITTED else MIN_VERSION


def listed(response: ListOffsetsResponse) -> Iterator[ListedPartition]:
    """Every partition the answer names."""
    for topic in response.topics:
        for p in topic.partitions:
            epoch = int(getattr(p, "leader_epoch", -1))
            yield ListedPartition(
                TopicPartition(str(topic.name), int(p.partition_index)),
                int(p.error_code),
                int(p.offset),
                epoch if epoch >= 0 else None,
            )


__all__ = ["ListedPartition", "list_offsets_request", "listed", "min_version"]
