"""ShareFetch and ShareAcknowledge requests built from a session's fields and settlements, and
their answers read back into per-partition results."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from krafka.protocol.messages import ShareAcknowledgeRequest, ShareFetchRequest
from krafka.sansio.group.membership.assignment import IdPartition
from krafka.sansio.share.acknowledgements import AcknowledgeType, ack_batches
from krafka.sansio.share.session import SessionRequest
from krafka.structs import TopicPartition

Acks = dict[int, int]
#: KIP-1222's RENEW (and IsRenewAck) exist from v2 of both APIs.
RENEW_MIN_VERSION: Final = 2
_FetchTopic = ShareFetchRequest.FetchTopic
_AckTopic = ShareAcknowledgeRequest.AcknowledgeTopic


@dataclass(frozen=True, slots=True)
class FetchLimits:
    max_wait_ms: int
    min_bytes: int
    max_bytes: int
    max_records: int
    batch_size: int


def has_renew(acks: Mapping[TopicPartition, Acks]) -> bool:
    return any(AcknowledgeType.RENEW in a.values() for a in acks.values())


def fetch_request(
    group_id: str,
    member_id: str,
    session: SessionRequest,
    acks: Mapping[IdPartition, Acks],
    limits: FetchLimits,
) -> ShareFetchRequest:
    partitions: dict[uuid.UUID, dict[int, Any]] = {}
    for topic_id, index in sorted(session.named | set(acks)):
        batches = [
            ShareFetchRequest.FetchTopic.FetchPartition.AcknowledgementBatch(
                first_offset=b.first, last_offset=b.last, acknowledge_types=list(b.types)
            )
            for b in ack_batches(acks.get((topic_id, index), {}))
        ]
        partitions.setdefault(topic_id, {})[index] = _FetchTopic.FetchPartition(
            partition_index=index, acknowledgement_batches=batches
        )
    forgotten: dict[uuid.UUID, list[int]] = {}
    for topic_id, index in sorted(session.forgotten):
        forgotten.setdefault(topic_id, []).append(index)
    return ShareFetchRequest(
        group_id=group_id,
        member_id=member_id,
        share_session_epoch=session.epoch,
        max_wait_ms=limits.max_wait_ms,
        min_bytes=limits.min_bytes,
        max_bytes=limits.max_bytes,
        max_records=limits.max_records,
        batch_size=limits.batch_size,
        topics=[
            _FetchTopic(topic_id=t, partitions=list(p.values())) for t, p in partitions.items()
        ],
        forgotten_topics_data=[
            ShareFetchRequest.ForgottenTopic(topic_id=t, partitions=p) for t, p in forgotten.items()
        ],
    )


def acknowledge_request(
    group_id: str, member_id: str, epoch: int, acks: Mapping[IdPartition, Acks]
) -> ShareAcknowledgeRequest:
    topics: dict[uuid.UUID, list[Any]] = {}
    renew = False
    for (topic_id, index), offsets in sorted(acks.items()):
        renew = renew or AcknowledgeType.RENEW in offsets.values()
        batches = [
            _AckTopic.AcknowledgePartition.AcknowledgementBatch(
                first_offset=b.first, last_offset=b.last, acknowledge_types=list(b.types)
            )
            for b in ack_batches(offsets)
        ]
        topics.setdefault(topic_id, []).append(
            _AckTopic.AcknowledgePartition(partition_index=index, acknowledgement_batches=batches)
        )
    return ShareAcknowledgeRequest(
        group_id=group_id,
        member_id=member_id,
        share_session_epoch=epoch,
        is_renew_ack=renew,
        topics=[_AckTopic(topic_id=t, partitions=p) for t, p in topics.items()],
    )


def partitions_of(
    response: Any, name_of: Callable[[uuid.UUID], str | None]
) -> list[tuple[TopicPartition, Any]]:
    """Every partition entry of a ShareFetch/ShareAcknowledge response whose topic is known."""
    out: list[tuple[TopicPartition, Any]] = []
    for topic in response.responses or ():
        name = name_of(topic.topic_id)
        if name is None:
            continue
        for part in topic.partitions or ():
            out.append((TopicPartition(name, int(part.partition_index)), part))
    return out


__all__ = [
    "RENEW_MIN_VERSION",
    "FetchLimits",
    "acknowledge_request",
    "fetch_request",
    "has_renew",
    "partitions_of",
]
