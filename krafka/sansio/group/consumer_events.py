"""Notices only a KIP-848 member gives; its listener steps and other notices are the classic
member's (`krafka.sansio.group.events`), so one driver serves both protocols."""

from __future__ import annotations

from dataclasses import dataclass

from krafka.structs import TopicPartition


@dataclass(frozen=True, slots=True)
class PendingRevocation:
    """Notice: `partitions` are about to be revoked (an auto-commit and `RevokePartitions`
    follow). Stop handing out their records now, so their positions cannot move past the
    commit (Java's markPendingRevocationToPauseFetching)."""

    partitions: frozenset[TopicPartition]


__all__ = ["PendingRevocation"]
