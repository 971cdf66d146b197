"""What a Fetch asks of one partition (Java's `FetchRequest.PartitionData`)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class PartitionFetchData:
    """One partition's part of a Fetch; fetch sessions send it again only when it changed."""

    fetch_offset: int
    log_start_offset: int
    max_bytes: int
    current_leader_epoch: int = -1
    last_fetched_epoch: int = -1


__all__ = ["PartitionFetchData"]
