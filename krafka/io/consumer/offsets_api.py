"""Offset lookups a consumer offers without touching its positions (Java's
beginningOffsets / endOffsets / offsetsForTimes), through the admin client's ListOffsets:
one request per partition leader, retried when leaders move."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from krafka.errors import KrafkaError
from krafka.sansio.admin.offsets import IsolationLevel, ListedOffset, OffsetSpec
from krafka.structs import TopicPartition

if TYPE_CHECKING:
    from krafka.io.admin import AdminClient
    from krafka.io.client import KafkaClient


class OffsetLookups:
    """Mixed into `Consumer`; needs `_client`, `_admin` (None until the first lookup) and
    `settings` (`read_committed`, the timeouts)."""

    _client: KafkaClient
    _admin: AdminClient | None
    settings: Any

    async def beginning_offsets(
        self, partitions: Iterable[TopicPartition], *, timeout: float | None = None
    ) -> dict[TopicPartition, int]:
        """The first offset still in each partition's log."""
        found = await self._lookup(
            {TopicPartition(*tp): OffsetSpec.EARLIEST for tp in partitions}, timeout
        )
        return {tp: v.offset if v is not None else 0 for tp, v in found.items()}

    async def end_offsets(
        self, partitions: Iterable[TopicPartition], *, timeout: float | None = None
    ) -> dict[TopicPartition, int]:
        """The offset after each partition's last record (the last stable offset under
        read_committed)."""
        found = await self._lookup(
            {TopicPartition(*tp): OffsetSpec.LATEST for tp in partitions}, timeout
        )
        return {tp: v.offset if v is not None else 0 for tp, v in found.items()}

    async def offsets_for_times(
        self, timestamps: Mapping[TopicPartition, int], *, timeout: float | None = None
    ) -> dict[TopicPartition, ListedOffset | None]:
        """For each partition, the first record at or after the timestamp (ms): its offset and
        timestamp, or None when no record is that recent."""
        specs = {TopicPartition(*tp): int(ts) for tp, ts in timestamps.items()}
        for tp, ts in specs.items():
            if ts < 0:
                raise ValueError(f"timestamp for {tp} must be >= 0, got {ts}")
        return await self._lookup(specs, timeout)

    async def _lookup(
        self, specs: Mapping[TopicPartition, int], timeout: float | None
    ) -> dict[TopicPartition, ListedOffset | None]:
        if not specs:
            return {}
        isolation = (
            IsolationLevel.READ_COMMITTED
            if self.settings.read_committed
            else IsolationLevel.READ_UNCOMMITTED
        )
        admin = await self._lookups_admin()
        results = await admin.list_offsets(specs, isolation_level=isolation, timeout=timeout)
        out: dict[TopicPartition, ListedOffset | None] = {}
        for tp, value in results.items():
            if isinstance(value, KrafkaError):
                raise value
            out[tp] = value
        return out

    async def _lookups_admin(self) -> AdminClient:
        """The admin calls the lookups run through, on this consumer's connections; made on the
        first lookup, so a consumer that never looks offsets up never loads the admin client."""
        if self._admin is None:
            from krafka.io.admin import AdminClient

            self._admin = AdminClient(
                client=self._client,
                request_timeout=self.settings.request_timeout,
                default_api_timeout=self.settings.default_api_timeout,
            )
            await self._admin.start()
        return self._admin


__all__ = ["OffsetLookups"]
