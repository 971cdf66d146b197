"""`commitOffsetsToGroup`: a streaming query's progress committed to a Kafka consumer group.

Spark's Kafka source keeps its offsets in the query's checkpoint only, so the tools that watch
consumer lag (`krafka lag`, Kafka's `kafka-consumer-groups`, lag exporters) see nothing of it
(SPARK-27549). With this option, each micro-batch Spark commits has its end offsets committed
to the named group too, by the driver, as a group with no members (the Admin API's
OffsetCommit: the group must have no active members, as for `kafka-consumer-groups
--reset-offsets`). The checkpoint stays the truth a restarted query resumes from; the group is
a report of how far the query got.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from krafka.structs import OffsetAndMetadata, TopicPartition

#: What the commits carry as metadata, for whoever lists the group's offsets.
METADATA = "krafka-spark"


class GroupProgress:
    """Commits end offsets to `group` through one admin client kept open until `close()`."""

    def __init__(self, group: str, admin_config: Mapping[str, str]) -> None:
        self.group = group
        self.admin_config = dict(admin_config)
        self._admin: Any = None
        self._committed: dict[TopicPartition, int] = {}

    def commit(self, offsets: Mapping[TopicPartition, int]) -> None:
        """Commit `offsets` (the next offset to read of each partition) unless they were the
        last committed; a failure raises."""
        if not offsets or all(self._committed.get(tp) == o for tp, o in offsets.items()):
            return
        if self._admin is None:
            from krafka.sync import AdminClient

            self._admin = AdminClient.from_config(self.admin_config)
        wanted = {tp: OffsetAndMetadata(offset, METADATA) for tp, offset in offsets.items()}
        self._admin.alter_group_offsets(self.group, wanted).raise_for_errors()
        self._committed.update(offsets)

    def close(self) -> None:
        admin, self._admin = self._admin, None
        if admin is not None:
            admin.close()


__all__ = ["GroupProgress"]
