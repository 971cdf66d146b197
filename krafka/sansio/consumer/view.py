"""What the consumer reads of the cluster metadata: pure lookups, no side effects.

The driver's metadata (`krafka.sansio.metadata.ClusterMetadata` today) is handed to the
engine when it is made; the engine asks for fresher metadata only with `RefreshMetadata` and
learns it arrived through `metadata_updated(now)`.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any, Protocol

from krafka.sansio.metadata import PartitionInfo


class MetadataView(Protocol):
    """Leaders, partition counts, topic ids and topic errors, as last refreshed."""

    @property
    def partition_counts(self) -> Mapping[str, int]:
        """topic -> number of partitions, for every topic known."""
        ...

    @property
    def topic_errors(self) -> Mapping[str, int]:
        """topic -> the error of the last answer about it that carried no partitions."""
        ...

    def partition(self, topic: str, partition: int) -> PartitionInfo | None: ...

    def broker(self, node_id: int) -> Any | None: ...

    def topic_id(self, topic: str) -> uuid.UUID | None: ...


__all__ = ["MetadataView"]
