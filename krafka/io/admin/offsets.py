"""Admin calls on partition offsets: look them up, delete records before them."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from krafka.io.admin.base import AdminBase, partitions_of, topic_partition
from krafka.sansio.admin.offsets import (
    DeleteRecords,
    IsolationLevel,
    ListedOffset,
    ListOffsets,
    OffsetSpec,
    spec_of,
)
from krafka.sansio.admin.results import Results
from krafka.sansio.admin.routing import ToLeaders
from krafka.structs import TopicPartition


class OffsetsAdmin(AdminBase):
    async def list_offsets(
        self,
        partitions: Mapping[TopicPartition, OffsetSpec | int | str] | Iterable[TopicPartition],
        spec: OffsetSpec | int | str = OffsetSpec.LATEST,
        *,
        isolation_level: IsolationLevel | str = IsolationLevel.READ_UNCOMMITTED,
        timeout: float | None = None,
    ) -> Results[TopicPartition, ListedOffset | None]:
        """Offsets at each partition's leader: `{partition: spec}`, or partitions all looked up
        with `spec` (`OffsetSpec.EARLIEST`, `LATEST`, `MAX_TIMESTAMP`, or a timestamp in ms).
        None for a timestamp no record reaches. `READ_COMMITTED` gives the last stable offset
        as latest."""
        if isinstance(partitions, Mapping):
            specs = {topic_partition(k): spec_of(v) for k, v in partitions.items()}
        else:
            specs = dict.fromkeys(partitions_of(partitions), spec_of(spec))
        if isinstance(isolation_level, str):
            isolation_level = IsolationLevel[isolation_level.strip().upper()]
        handler = ListOffsets(specs, IsolationLevel(isolation_level))
        return Results(await self._run(handler, ToLeaders(), specs, timeout))

    async def delete_records(
        self, offsets: Mapping[Any, int], *, timeout: float | None = None
    ) -> Results[TopicPartition, int]:
        """Delete each partition's records before an offset (-1: all of them, up to the high
        watermark): `{partition: its new low watermark}`."""
        wanted = {topic_partition(k): int(v) for k, v in offsets.items()}
        handler = DeleteRecords(wanted, self._timeout_ms)
        return Results(await self._run(handler, ToLeaders(), wanted, timeout))
