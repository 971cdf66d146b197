"""Cluster metadata: the view (`ClusterMetadata`: brokers, topics, partitions, leaders, ids)
and the machine keeping it fresh (`MetadataMachine`: refresh on age, on request, on stale
errors, with backoff; KIP-899 rebootstrap)."""

from krafka.sansio.metadata.cluster import (
    BrokerInfo,
    ClusterMetadata,
    MetadataConfig,
    PartitionInfo,
    RefreshReason,
    TopicInfo,
    parse_bootstrap,
)
from krafka.sansio.metadata.machine import (
    BOOTSTRAP_NODE,
    METADATA_MAX_VERSION,
    MetadataFailed,
    MetadataMachine,
    MetadataUpdated,
    Rebootstrapped,
    none_answered,
)

__all__ = [
    "BOOTSTRAP_NODE",
    "METADATA_MAX_VERSION",
    "BrokerInfo",
    "ClusterMetadata",
    "MetadataConfig",
    "MetadataFailed",
    "MetadataMachine",
    "MetadataUpdated",
    "PartitionInfo",
    "Rebootstrapped",
    "RefreshReason",
    "TopicInfo",
    "none_answered",
    "parse_bootstrap",
]
