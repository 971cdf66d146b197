"""A group's committed offsets: list them (OffsetFetch), set them (OffsetCommit as an admin,
generation -1, like Java's alterConsumerGroupOffsets) and delete them (OffsetDelete).

The item of these calls is the group (one request to its coordinator); the value is the
per-partition outcome. A group whose members are active refuses an admin's commit (its
coordinator answers UNKNOWN_MEMBER_ID, ILLEGAL_GENERATION, REBALANCE_IN_PROGRESS or a stale
epoch for every partition): that becomes one `NonEmptyGroupError` for the group.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from krafka.errors import KrafkaError, NonEmptyGroupError, UnsupportedVersionError
from krafka.protocol.error_codes import ErrorCode
from krafka.protocol.messages import (
    ApiKey,
    OffsetCommitRequest,
    OffsetCommitResponse,
    OffsetDeleteRequest,
    OffsetDeleteResponse,
    OffsetFetchRequest,
    OffsetFetchResponse,
)
from krafka.protocol.messages.offset_commit_request import (
    OffsetCommitRequestPartition,
    OffsetCommitRequestTopic,
)
from krafka.protocol.messages.offset_delete_request import (
    OffsetDeleteRequestPartition,
    OffsetDeleteRequestTopic,
)
from krafka.protocol.messages.offset_fetch_request import (
    OffsetFetchRequestGroup,
    OffsetFetchRequestTopic,
    OffsetFetchRequestTopics,
)
from krafka.sansio.actions import Versioned
from krafka.sansio.admin.operation import Call, Handler
from krafka.sansio.admin.outcome import (
    COORDINATOR_MOVED,
    Done,
    Fail,
    ItemResult,
    Remap,
    Retry,
    error_from,
    for_code,
)
from krafka.sansio.admin.routing import Target
from krafka.structs import OffsetAndMetadata, TopicPartition

_GROUPS_VERSION: Final = 8
_REQUIRE_STABLE_VERSION: Final = 7
_ALL_TOPICS_VERSION: Final = 2
_LEADER_EPOCH_VERSION: Final = 6
#: What a coordinator answers an admin commit (generation -1) to a group with live members.
_ACTIVE_GROUP: Final = frozenset(
    {
        ErrorCode.UNKNOWN_MEMBER_ID,
        ErrorCode.ILLEGAL_GENERATION,
        ErrorCode.REBALANCE_IN_PROGRESS,
        ErrorCode.STALE_MEMBER_EPOCH,
        ErrorCode.FENCED_MEMBER_EPOCH,
    }
)

PartitionOffsets = dict[TopicPartition, "OffsetAndMetadata | KrafkaError | None"]


def _by_topic(partitions: Sequence[TopicPartition]) -> dict[str, list[int]]:
    topics: dict[str, list[int]] = {}
    for tp in partitions:
        topics.setdefault(tp.topic, []).append(tp.partition)
    return topics


def _group_code(codes: Sequence[int], group: str, what: str) -> ItemResult | None:
    """The outcome for the whole group when a partition's code concerns the group: its
    coordinator moved or is loading, or the group refuses an admin commit."""
    for code in codes:
        if code in COORDINATOR_MOVED:
            return Remap(error_from(code, f"{what} for group {group!r}"))
        if code == ErrorCode.COORDINATOR_LOAD_IN_PROGRESS:
            return Retry(error_from(code, f"{what} for group {group!r}"))
    return None


class ListGroupOffsets(Handler[str]):
    """A group's committed offsets, for some partitions or (None) every one it has."""

    what = "list group offsets"

    def __init__(self, partitions: Sequence[TopicPartition] | None, require_stable: bool) -> None:
        self.partitions = None if partitions is None else list(partitions)
        self.require_stable = require_stable

    def describe(self, key: str) -> str:
        return f"group {key!r}"

    def requests(self, target: Target, keys: Sequence[str]) -> list[Call[str]]:
        return [self._call(group) for group in keys]

    def _call(self, group: str) -> Call[str]:
        topics = None if self.partitions is None else _by_topic(self.partitions)
        stable = self.require_stable

        def build(version: int) -> OffsetFetchRequest:
            if stable and version < _REQUIRE_STABLE_VERSION:
                raise UnsupportedVersionError(
                    f"OffsetFetch v{version} cannot require stable offsets (needs v7, Kafka 2.5)"
                )
            if version >= _GROUPS_VERSION:
                wanted = (
                    None
                    if topics is None
                    else [
                        OffsetFetchRequestTopics(name=t, partition_indexes=p)
                        for t, p in topics.items()
                    ]
                )
                entry = OffsetFetchRequestGroup(
                    group_id=group, member_id=None, member_epoch=-1, topics=wanted
                )
                return OffsetFetchRequest(groups=[entry], require_stable=stable)
            listed = (
                None
                if topics is None
                else [
                    OffsetFetchRequestTopic(name=t, partition_indexes=p) for t, p in topics.items()
                ]
            )
            return OffsetFetchRequest(
                group_id=group,
                topics=listed,
                require_stable=stable and version >= _REQUIRE_STABLE_VERSION,
            )

        minimum = _ALL_TOPICS_VERSION if topics is None else None
        return Call(Versioned(ApiKey.OFFSET_FETCH, build), (group,), min_version=minimum)

    def on_response(
        self, call: Call[str], target: Target, response: Any
    ) -> Mapping[str, ItemResult]:
        assert isinstance(response, OffsetFetchResponse)
        (group,) = call.keys
        topics: Sequence[Any]
        if response.groups:
            entry = next((g for g in response.groups if g.group_id == group), response.groups[0])
            code, topics = int(entry.error_code), entry.topics
        else:
            code, topics = int(response.error_code), response.topics
        what = f"list offsets of group {group!r}"
        outcome = for_code(code, what, moved=COORDINATOR_MOVED)
        if outcome is not None:
            return {group: outcome}
        codes = [int(p.error_code) for t in topics for p in t.partitions]
        outcome = _group_code(codes, group, "list offsets")
        if outcome is None and ErrorCode.UNSTABLE_OFFSET_COMMIT in codes:
            outcome = Retry(error_from(ErrorCode.UNSTABLE_OFFSET_COMMIT, what))
        if outcome is not None:
            return {group: outcome}
        offsets: PartitionOffsets = {}
        for t in topics:
            for p in t.partitions:
                tp = TopicPartition(str(t.name), int(p.partition_index))
                offsets[tp] = _committed(p, tp, group)
        return {group: Done(dict(sorted(offsets.items())))}


def _committed(p: Any, tp: TopicPartition, group: str) -> OffsetAndMetadata | KrafkaError | None:
    code = int(p.error_code)
    if code != ErrorCode.NONE:
        return error_from(code, f"committed offset of {tp} in group {group!r}")
    offset = int(p.committed_offset)
    if offset < 0:
        return None
    epoch = int(p.committed_leader_epoch)
    return OffsetAndMetadata(offset, p.metadata or "", epoch if epoch >= 0 else None)


class AlterGroupOffsets(Handler[str]):
    """Commit offsets for a group as an admin (only an empty group accepts them)."""

    what = "alter group offsets"

    def __init__(self, offsets: Mapping[TopicPartition, OffsetAndMetadata]) -> None:
        self.offsets = dict(offsets)

    def describe(self, key: str) -> str:
        return f"group {key!r}"

    def requests(self, target: Target, keys: Sequence[str]) -> list[Call[str]]:
        return [self._call(group) for group in keys]

    def _call(self, group: str) -> Call[str]:
        offsets = self.offsets

        def build(version: int) -> OffsetCommitRequest:
            topics: dict[str, list[OffsetCommitRequestPartition]] = {}
            for tp, om in offsets.items():
                epoch = om.leader_epoch if om.leader_epoch is not None else -1
                topics.setdefault(tp.topic, []).append(
                    OffsetCommitRequestPartition(
                        partition_index=tp.partition,
                        committed_offset=om.offset,
                        committed_leader_epoch=epoch if version >= _LEADER_EPOCH_VERSION else -1,
                        committed_metadata=om.metadata,
                    )
                )
            return OffsetCommitRequest(
                group_id=group,
                generation_id_or_member_epoch=-1,
                member_id="",
                group_instance_id=None,
                topics=[OffsetCommitRequestTopic(name=t, partitions=p) for t, p in topics.items()],
            )

        return Call(Versioned(ApiKey.OFFSET_COMMIT, build), (group,), min_version=1)

    def on_response(
        self, call: Call[str], target: Target, response: Any
    ) -> Mapping[str, ItemResult]:
        assert isinstance(response, OffsetCommitResponse)
        (group,) = call.keys
        results = {
            TopicPartition(str(t.name), int(p.partition_index)): int(p.error_code)
            for t in response.topics
            for p in t.partitions
        }
        codes = list(results.values())
        outcome = _group_code(codes, group, "alter offsets")
        if outcome is not None:
            return {group: outcome}
        if codes and all(c in _ACTIVE_GROUP for c in codes):
            name = ErrorCode(codes[0]).name
            return {
                group: Fail(
                    NonEmptyGroupError(
                        f"group {group!r} has active members: stop its consumers before "
                        f"altering its offsets (the coordinator answered {name})"
                    )
                )
            }
        outcomes: dict[TopicPartition, KrafkaError | None] = {
            tp: (
                None
                if code == ErrorCode.NONE
                else error_from(code, f"alter offset of {tp} in group {group!r}")
            )
            for tp, code in results.items()
        }
        return {group: Done(outcomes)}


class DeleteGroupOffsets(Handler[str]):
    """Delete a group's committed offsets for some partitions (of topics it no longer reads)."""

    what = "delete group offsets"

    def __init__(self, partitions: Sequence[TopicPartition]) -> None:
        self.partitions = list(partitions)

    def describe(self, key: str) -> str:
        return f"group {key!r}"

    def requests(self, target: Target, keys: Sequence[str]) -> list[Call[str]]:
        topics = [
            OffsetDeleteRequestTopic(
                name=t, partitions=[OffsetDeleteRequestPartition(partition_index=p) for p in ps]
            )
            for t, ps in _by_topic(self.partitions).items()
        ]
        return [Call(OffsetDeleteRequest(group_id=g, topics=topics), (g,)) for g in keys]

    def on_response(
        self, call: Call[str], target: Target, response: Any
    ) -> Mapping[str, ItemResult]:
        assert isinstance(response, OffsetDeleteResponse)
        (group,) = call.keys
        code = int(response.error_code)
        outcome = for_code(code, f"delete offsets of group {group!r}", moved=COORDINATOR_MOVED)
        if outcome is not None:
            return {group: outcome}
        outcomes: dict[TopicPartition, KrafkaError | None] = {}
        for t in response.topics:
            for p in t.partitions:
                tp = TopicPartition(str(t.name), int(p.partition_index))
                pcode = int(p.error_code)
                outcomes[tp] = (
                    None
                    if pcode == ErrorCode.NONE
                    else error_from(pcode, f"delete offset of {tp} in group {group!r}")
                )
        return {group: Done(outcomes)}


__all__ = ["AlterGroupOffsets", "DeleteGroupOffsets", "ListGroupOffsets"]
