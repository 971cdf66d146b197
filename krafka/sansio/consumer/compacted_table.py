"""`CompactedTable`: a key -> latest value view of a compacted topic, from consumer records.

Kafka-agnostic (it only reads `key`, `value` and `is_tombstone()` of the records it is given),
so it composes with any consumer: grouped, standalone or manually assigned. A record with a
null value (a tombstone) deletes its key; keyless records are skipped (compacted topics
require keys). `apply` reports each change as a `TableChange`; `ingest` applies without
building them (initial scans).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from krafka.sansio.consumer.record import ConsumerRecord

_MISSING: Any = object()


@dataclass(frozen=True, slots=True)
class TableChange:
    """What one record did to the table: `old_value` None for an insert, `new_value` None for
    a delete."""

    key: Any
    old_value: Any
    new_value: Any

    def is_insert(self) -> bool:
        return self.old_value is None and self.new_value is not None

    def is_update(self) -> bool:
        return self.old_value is not None and self.new_value is not None

    def is_delete(self) -> bool:
        return self.new_value is None


class CompactedTable(Mapping[Any, Any]):
    """The latest value of every live key. A read-only mapping; equality compares entries only
    (not the processing counters)."""

    __slots__ = ("_entries", "records_processed", "tombstones_processed")

    def __init__(self) -> None:
        self._entries: dict[Any, Any] = {}
        self.records_processed = 0
        self.tombstones_processed = 0

    def apply(self, records: Iterable[ConsumerRecord]) -> list[TableChange]:
        """Apply `records` in order; the changes they made (a tombstone for an absent key and
        keyless records change nothing)."""
        changes: list[TableChange] = []
        entries = self._entries
        for record in records:
            key = record.key
            if key is None:
                continue
            self.records_processed += 1
            value = record.value
            if value is None:
                self.tombstones_processed += 1
                old = entries.pop(key, _MISSING)
                if old is not _MISSING:
                    changes.append(TableChange(key, old, None))
                continue
            old = entries.get(key)
            entries[key] = value
            changes.append(TableChange(key, old, value))
        return changes

    def ingest(self, records: Iterable[ConsumerRecord]) -> None:
        """Apply `records` without reporting changes."""
        entries = self._entries
        for record in records:
            key = record.key
            if key is None:
                continue
            self.records_processed += 1
            if record.value is None:
                self.tombstones_processed += 1
                entries.pop(key, None)
            else:
                entries[key] = record.value

    def __getitem__(self, key: Any) -> Any:
        return self._entries[key]

    def __iter__(self) -> Iterator[Any]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, CompactedTable):
            return self._entries == other._entries
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"CompactedTable({len(self._entries)} keys)"

    def snapshot(self) -> dict[Any, Any]:
        """A copy of the entries (a plain dict)."""
        return dict(self._entries)

    def copy(self) -> CompactedTable:
        """A full copy, counters included."""
        table = CompactedTable()
        table._entries = dict(self._entries)
        table.records_processed = self.records_processed
        table.tombstones_processed = self.tombstones_processed
        return table

    def clear(self) -> None:
        """Remove every entry and reset the counters (after a rebalance, for example)."""
        self._entries.clear()
        self.records_processed = self.tombstones_processed = 0


__all__ = ["CompactedTable", "TableChange"]
