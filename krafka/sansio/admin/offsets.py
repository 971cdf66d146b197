"""Partition offsets: look them up (ListOffsets: earliest, latest, by timestamp, max
timestamp) and delete records before an offset (DeleteRecords). Both go to each partition's
leader, one request per leader."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import IntEnum
from typing import Any, Final

from krafka.protocol.messages import (
    DeleteRecordsRequest,
    DeleteRecordsResponse,
    ListOffsetsRequest,
    ListOffsetsResponse,
)
from krafka.protocol.messages.delete_records_request import (
    DeleteRecordsPartition,
    DeleteRecordsTopic,
)
from krafka.protocol.messages.list_offsets_request import ListOffsetsPartition, ListOffsetsTopic
from krafka.sansio.admin.operation import Call, Handler
from krafka.sansio.admin.outcome import LEADER_MOVED, Done, ItemResult, for_code
from krafka.sansio.admin.routing import Target
from krafka.sansio.isolation import IsolationLevel
from krafka.structs import TopicPartition


class OffsetSpec(IntEnum):
    """Which offset to look up (a plain int >= 0 is a timestamp in ms: the first offset whose
    record's timestamp is at or after it)."""

    LATEST = -1
    EARLIEST = -2
    MAX_TIMESTAMP = -3  # the record with the largest timestamp (Kafka 3.0, KIP-734)
    EARLIEST_LOCAL = -4  # the first offset still on the broker's disk (tiered storage)
    LATEST_TIERED = -5  # the last offset moved to tiered storage


#: The ListOffsets version each special lookup needs (v0's answer shape is not spoken).
_SPEC_VERSION: Final[Mapping[int, int]] = {
    OffsetSpec.MAX_TIMESTAMP: 7,
    OffsetSpec.EARLIEST_LOCAL: 8,
    OffsetSpec.LATEST_TIERED: 9,
}
_ISOLATION_VERSION: Final = 2


@dataclass(frozen=True, slots=True)
class ListedOffset:
    """An offset found by ListOffsets, with the timestamp of its record (-1 when the lookup
    was not by time) and its leader epoch when the broker knows it."""

    offset: int
    timestamp: int = -1
    leader_epoch: int | None = None


def spec_of(value: OffsetSpec | int | str) -> int:
    """An `OffsetSpec`, its name (`"earliest"`), or a timestamp in ms (>= 0)."""
    if isinstance(value, str):
        return int(OffsetSpec[value.strip().upper()])
    if int(value) < OffsetSpec.LATEST_TIERED:
        raise ValueError(f"not an offset spec or timestamp: {value!r}")
    return int(value)


class ListOffsets(Handler[TopicPartition]):
    what = "list offsets"

    def __init__(self, specs: Mapping[TopicPartition, int], isolation: IsolationLevel) -> None:
        self.specs = specs
        self.isolation = isolation

    def describe(self, key: TopicPartition) -> str:
        return f"partition {key}"

    def requests(
        self, target: Target, keys: Sequence[TopicPartition]
    ) -> list[Call[TopicPartition]]:
        floor = _ISOLATION_VERSION if self.isolation is IsolationLevel.READ_COMMITTED else 1
        by_version: dict[int, list[TopicPartition]] = {}
        for tp in keys:
            needed = max(floor, _SPEC_VERSION.get(self.specs[tp], 1))
            by_version.setdefault(needed, []).append(tp)
        return [self._call(tps, version) for version, tps in sorted(by_version.items())]

    def _call(self, partitions: list[TopicPartition], min_version: int) -> Call[TopicPartition]:
        topics: dict[str, list[ListOffsetsPartition]] = {}
        for tp in partitions:
            topics.setdefault(tp.topic, []).append(
                ListOffsetsPartition(partition_index=tp.partition, timestamp=self.specs[tp])
            )
        request = ListOffsetsRequest(
            replica_id=-1,
            isolation_level=int(self.isolation),
            topics=[ListOffsetsTopic(name=t, partitions=p) for t, p in topics.items()],
        )
        return Call(request, tuple(partitions), min_version=min_version)

    def on_response(
        self, call: Call[TopicPartition], target: Target, response: Any
    ) -> Mapping[TopicPartition, ItemResult]:
        assert isinstance(response, ListOffsetsResponse)
        out: dict[TopicPartition, ItemResult] = {}
        for t in response.topics:
            for p in t.partitions:
                tp = TopicPartition(str(t.name), int(p.partition_index))
                code = int(p.error_code)
                outcome = for_code(code, f"list offsets of {tp}", moved=LEADER_MOVED)
                out[tp] = outcome or Done(_listed(p))
        return out


def _listed(p: Any) -> ListedOffset | None:
    """None when no record matches a lookup by time."""
    offset = int(p.offset)
    if offset < 0:
        return None
    epoch = int(p.leader_epoch)
    return ListedOffset(offset, int(p.timestamp), epoch if epoch >= 0 else None)


class DeleteRecords(Handler[TopicPartition]):
    """Delete every record before an offset (-1: the high watermark, i.e. all of them); the
    value is the partition's new low watermark."""

    what = "delete records"

    def __init__(self, offsets: Mapping[TopicPartition, int], timeout_ms: int) -> None:
        self.offsets = offsets
        self.timeout_ms = timeout_ms

    def describe(self, key: TopicPartition) -> str:
        return f"partition {key}"

    def requests(
        self, target: Target, keys: Sequence[TopicPartition]
    ) -> list[Call[TopicPartition]]:
        topics: dict[str, list[DeleteRecordsPartition]] = {}
        for tp in keys:
            topics.setdefault(tp.topic, []).append(
                DeleteRecordsPartition(partition_index=tp.partition, offset=self.offsets[tp])
            )
        request = DeleteRecordsRequest(
            topics=[DeleteRecordsTopic(name=t, partitions=p) for t, p in topics.items()],
            timeout_ms=self.timeout_ms,
        )
        return [Call(request, tuple(keys))]

    def on_response(
        self, call: Call[TopicPartition], target: Target, response: Any
    ) -> Mapping[TopicPartition, ItemResult]:
        assert isinstance(response, DeleteRecordsResponse)
        out: dict[TopicPartition, ItemResult] = {}
        for t in response.topics:
            for p in t.partitions:
                tp = TopicPartition(str(t.name), int(p.partition_index))
                code = int(p.error_code)
                outcome = for_code(code, f"delete records of {tp}", moved=LEADER_MOVED)
                out[tp] = outcome or Done(int(p.low_watermark))
        return out


__all__ = [
    "DeleteRecords",
    "IsolationLevel",
    "ListOffsets",
    "ListedOffset",
    "OffsetSpec",
    "spec_of",
]
