"""OffsetCommit and OffsetFetch in protocol terms, and Java's reading of their errors.

The offsets machinery speaks in partitions and `OffsetAndMetadata`; this module alone knows
the request shapes (OffsetFetch changed to a per-group layout in v8) and classifies the codes
the coordinator answers, as Java's `OffsetCommitResponseHandler` and
`OffsetFetchResponseHandler` do.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any, Final

from krafka.protocol.error_codes import ErrorCode
from krafka.protocol.messages import (
    ApiKey,
    OffsetCommitRequest,
    OffsetCommitResponse,
    OffsetFetchRequest,
    OffsetFetchResponse,
)
from krafka.sansio.actions import Versioned
from krafka.structs import OffsetAndMetadata, TopicPartition

#: OffsetCommit carries the group instance id from v7 (static members need it).
OFFSET_COMMIT_STATIC_MIN_VERSION: Final = 7
_FETCH_GROUPS_VERSION: Final = 8
_FETCH_REQUIRE_STABLE_VERSION: Final = 7
_NO_EPOCH: Final = -1


@dataclass(frozen=True, slots=True)
class CommitIdentity:
    """Who commits: a member's generation, or nobody (a consumer using `assign` and a group id
    commits with generation -1 and no member id)."""

    generation_id: int = -1
    member_id: str = ""
    group_instance_id: str | None = None


class CommitVerdict(Enum):
    """What one OffsetCommit answer means (Java's handler, in its order)."""

    DONE = "done"
    RETRY = "retry"  # COORDINATOR_LOAD_IN_PROGRESS, UNKNOWN_TOPIC_OR_PARTITION: resend later
    COORDINATOR_MOVED = "coordinator-moved"  # find the coordinator again, then resend
    GROUP = "group"  # the member's generation was refused: its owner decides the error
    FAIL = "fail"  # raise the code's error to the caller


_COMMIT_RETRY: Final = frozenset(
    {ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION}
)
_COMMIT_MOVED: Final = frozenset(
    {ErrorCode.COORDINATOR_NOT_AVAILABLE, ErrorCode.NOT_COORDINATOR, ErrorCode.REQUEST_TIMED_OUT}
)
_COMMIT_GROUP: Final = frozenset(
    {
        ErrorCode.FENCED_INSTANCE_ID,
        ErrorCode.REBALANCE_IN_PROGRESS,
        ErrorCode.UNKNOWN_MEMBER_ID,
        ErrorCode.ILLEGAL_GENERATION,
    }
)
_COMMIT_RAISE: Final = frozenset(
    {
        ErrorCode.GROUP_AUTHORIZATION_FAILED,
        ErrorCode.OFFSET_METADATA_TOO_LARGE,
        ErrorCode.INVALID_COMMIT_OFFSET_SIZE,
    }
)
#: Codes an old (v0-v1) OffsetFetch reports per partition that concern the whole group.
_FETCH_GROUP_LEVEL: Final = frozenset(
    {
        ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
        ErrorCode.COORDINATOR_NOT_AVAILABLE,
        ErrorCode.NOT_COORDINATOR,
        ErrorCode.GROUP_AUTHORIZATION_FAILED,
    }
)


def _by_topic(partitions: Iterable[TopicPartition]) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for topic, partition in sorted(partitions):
        out.setdefault(topic, []).append(partition)
    return out


def offset_commit_request(
    group_id: str,
    identity: CommitIdentity,
    offsets: Mapping[TopicPartition, OffsetAndMetadata],
) -> OffsetCommitRequest:
    topic_cls = OffsetCommitRequest.OffsetCommitRequestTopic
    part_cls = topic_cls.OffsetCommitRequestPartition
    topics: dict[str, list[Any]] = {}
    for tp in sorted(offsets):
        om = offsets[tp]
        epoch = _NO_EPOCH if om.leader_epoch is None else om.leader_epoch
        topics.setdefault(tp.topic, []).append(
            part_cls(
                partition_index=tp.partition,
                committed_offset=om.offset,
                committed_leader_epoch=epoch,
                committed_metadata=om.metadata,
            )
        )
    return OffsetCommitRequest(
        group_id=group_id,
        generation_id_or_member_epoch=identity.generation_id,
        member_id=identity.member_id,
        group_instance_id=identity.group_instance_id,
        topics=[topic_cls(name=name, partitions=parts) for name, parts in topics.items()],
    )


def commit_codes(response: OffsetCommitResponse) -> dict[TopicPartition, int]:
    return {
        TopicPartition(topic.name, part.partition_index): int(part.error_code)
        for topic in response.topics
        for part in topic.partitions
    }


def commit_verdict(codes: Mapping[TopicPartition, int]) -> tuple[CommitVerdict, int, set[str]]:
    """(verdict, the deciding code, topics not authorized): the first decisive partition error
    in Java's order; TOPIC_AUTHORIZATION_FAILED is collected over all partitions."""
    unauthorized: set[str] = set()
    for tp, code in sorted(codes.items()):
        if code == ErrorCode.NONE:
            continue
        if code == ErrorCode.TOPIC_AUTHORIZATION_FAILED:
            unauthorized.add(tp.topic)
        elif code in _COMMIT_RAISE:
            return CommitVerdict.FAIL, code, unauthorized
        elif code in _COMMIT_RETRY:
            return CommitVerdict.RETRY, code, unauthorized
        elif code in _COMMIT_MOVED:
            return CommitVerdict.COORDINATOR_MOVED, code, unauthorized
        elif code in _COMMIT_GROUP:
            return CommitVerdict.GROUP, code, unauthorized
        else:
            return CommitVerdict.FAIL, code, unauthorized
    if unauthorized:
        return CommitVerdict.FAIL, ErrorCode.TOPIC_AUTHORIZATION_FAILED, unauthorized
    return CommitVerdict.DONE, ErrorCode.NONE, unauthorized


def offset_fetch_request(
    group_id: str, partitions: Iterable[TopicPartition], require_stable: bool
) -> Versioned[OffsetFetchResponse]:
    by_topic = _by_topic(partitions)

    def build(version: int) -> OffsetFetchRequest:
        stable = require_stable and version >= _FETCH_REQUIRE_STABLE_VERSION
        if version >= _FETCH_GROUPS_VERSION:
            group_cls = OffsetFetchRequest.OffsetFetchRequestGroup
            topics_cls = group_cls.OffsetFetchRequestTopics
            group = group_cls(
                group_id=group_id,
                topics=[topics_cls(name=t, partition_indexes=ps) for t, ps in by_topic.items()],
            )
            return OffsetFetchRequest(groups=[group], require_stable=stable)
        topic_cls = OffsetFetchRequest.OffsetFetchRequestTopic
        return OffsetFetchRequest(
            group_id=group_id,
            topics=[topic_cls(name=t, partition_indexes=ps) for t, ps in by_topic.items()],
            require_stable=stable,
        )

    return Versioned(ApiKey.OFFSET_FETCH, build)


@dataclass(frozen=True, slots=True)
class FetchedOffset:
    offset: int
    leader_epoch: int
    metadata: str | None
    error_code: int

    def committed(self) -> OffsetAndMetadata | None:
        """The committed position, None when the group committed nothing for it."""
        if self.offset < 0:
            return None
        epoch = None if self.leader_epoch < 0 else self.leader_epoch
        return OffsetAndMetadata(self.offset, self.metadata or "", epoch)


def fetch_result(
    response: OffsetFetchResponse, group_id: str
) -> tuple[int, dict[TopicPartition, FetchedOffset]]:
    """(group-level code, per-partition results) of either OffsetFetch layout."""
    out: dict[TopicPartition, FetchedOffset] = {}
    if response.groups:
        group = next((g for g in response.groups if g.group_id == group_id), response.groups[0])
        code = int(group.error_code)
        for topic in group.topics:
            for p in topic.partitions:
                out[TopicPartition(topic.name, p.partition_index)] = FetchedOffset(
                    p.committed_offset, p.committed_leader_epoch, p.metadata, p.error_code
                )
    else:
        code = int(response.error_code)
        for old in response.topics:
            for q in old.partitions:
                out[TopicPartition(old.name, q.partition_index)] = FetchedOffset(
                    q.committed_offset, q.committed_leader_epoch, q.metadata, q.error_code
                )
    if code == ErrorCode.NONE:
        code = next((f.error_code for f in out.values() if f.error_code in _FETCH_GROUP_LEVEL), 0)
    return code, out


__all__ = [
    "OFFSET_COMMIT_STATIC_MIN_VERSION",
    "CommitIdentity",
    "CommitVerdict",
    "FetchedOffset",
    "commit_codes",
    "commit_verdict",
    "fetch_result",
    "offset_commit_request",
    "offset_fetch_request",
]
