"""Which records a reader sees (Fetch, ListOffsets, share groups): the one `IsolationLevel`."""

from __future__ import annotations

from enum import IntEnum


class IsolationLevel(IntEnum):
    """READ_UNCOMMITTED sees every record; READ_COMMITTED stops at the last stable offset and
    skips aborted transactions."""

    READ_UNCOMMITTED = 0
    READ_COMMITTED = 1

    @classmethod
    def parse(cls, value: IsolationLevel | str | int) -> IsolationLevel:
        """A level, its name in any case (`"read_committed"`), or its wire number."""
        if isinstance(value, str):
            return cls[value.strip().upper()]
        return cls(value)


__all__ = ["IsolationLevel"]
