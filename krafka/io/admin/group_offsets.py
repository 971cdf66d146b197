"""Admin calls on a group's committed offsets: list, alter (reset), delete."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from krafka.io.admin.base import partitions_of, topic_partition
from krafka.io.admin.groups import GroupsAdmin
from krafka.sansio.admin.group_offsets import (
    AlterGroupOffsets,
    DeleteGroupOffsets,
    ListGroupOffsets,
)
from krafka.sansio.admin.results import Results
from krafka.structs import OffsetAndMetadata, TopicPartition


def _offsets(
    offsets: Mapping[Any, OffsetAndMetadata | int],
) -> dict[TopicPartition, OffsetAndMetadata]:
    out: dict[TopicPartition, OffsetAndMetadata] = {}
    for key, value in offsets.items():
        tp = topic_partition(key)
        if isinstance(value, OffsetAndMetadata):
            out[tp] = value
        elif isinstance(value, int) and value >= 0:
            out[tp] = OffsetAndMetadata(value)
        else:
            raise ValueError(f"offset for {tp} must be an OffsetAndMetadata or an int >= 0")
    return out


class GroupOffsetsAdmin(GroupsAdmin):
    async def list_group_offsets(
        self,
        group_id: str,
        partitions: Iterable[TopicPartition] | None = None,
        *,
        require_stable: bool = False,
        timeout: float | None = None,
    ) -> Results[TopicPartition, OffsetAndMetadata | None]:
        """The group's committed offsets, `{partition: OffsetAndMetadata, or None if it has
        none}`: for `partitions`, or (None) every partition it committed. `require_stable`
        waits for pending transactional commits. A group-level failure raises."""
        wanted = None if partitions is None else partitions_of(partitions)
        handler = ListGroupOffsets(wanted, require_stable)
        offsets = await self._run_one(handler, self._group_routing(), group_id, timeout)
        return Results(offsets)

    async def alter_group_offsets(
        self,
        group_id: str,
        offsets: Mapping[TopicPartition, OffsetAndMetadata | int],
        *,
        timeout: float | None = None,
    ) -> Results[TopicPartition, None]:
        """Set the group's committed offsets (to reset where it resumes). The group must be
        empty: one with active members raises `NonEmptyGroupError`."""
        handler = AlterGroupOffsets(_offsets(offsets))
        outcomes = await self._run_one(handler, self._group_routing(), group_id, timeout)
        return Results(outcomes)

    async def delete_group_offsets(
        self,
        group_id: str,
        partitions: Iterable[TopicPartition],
        *,
        timeout: float | None = None,
    ) -> Results[TopicPartition, None]:
        """Forget the group's offsets for partitions of topics it is not subscribed to
        (`GroupSubscribedToTopicError` for the others)."""
        handler = DeleteGroupOffsets(partitions_of(partitions))
        outcomes = await self._run_one(handler, self._group_routing(), group_id, timeout)
        return Results(outcomes)
