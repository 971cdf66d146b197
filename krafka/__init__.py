"""krafka: a Kafka client for Python.

Top-level names are imported lazily, so `import krafka.codec` stays light (no anyio).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from krafka.errors import WakeupError
    from krafka.io.admin import AdminClient
    from krafka.io.consumer import (
        CompactedTable,
        CompactedTopicConsumer,
        Consumer,
        ConsumerRecord,
        FetchedBatch,
        TableChange,
    )
    from krafka.io.producer import Producer, RecordMetadata
    from krafka.io.share_consumer import ShareConsumer
    from krafka.sansio.admin import (
        AclBinding,
        AclBindingFilter,
        AclOperation,
        AclPermissionType,
        AlterConfigOp,
        ClientQuotaEntity,
        ClientQuotaFilter,
        ClusterDescription,
        ConfigEntry,
        ConfigResource,
        DelegationToken,
        GroupDescription,
        GroupListing,
        GroupState,
        GroupType,
        ListedOffset,
        MemberDescription,
        NewPartitions,
        NewTopic,
        Node,
        OffsetSpec,
        PatternType,
        ResourceType,
        Results,
        ScramDeletion,
        ScramMechanism,
        ScramUpsertion,
        TopicDescription,
        TopicPartitionInfo,
    )
    from krafka.sansio.group.events import GroupMembershipOperation
    from krafka.sansio.share import AcknowledgementMode, AcknowledgeType, ShareRecord
    from krafka.structs import ConsumerGroupMetadata, OffsetAndMetadata, TopicPartition

__version__ = "0.1.0"

_LAZY: dict[str, str] = {
    "AcknowledgeType": "krafka.sansio.share",
    "AcknowledgementMode": "krafka.sansio.share",
    "AclBinding": "krafka.sansio.admin",
    "AclBindingFilter": "krafka.sansio.admin",
    "AclOperation": "krafka.sansio.admin",
    "AclPermissionType": "krafka.sansio.admin",
    "AdminClient": "krafka.io.admin",
    "AlterConfigOp": "krafka.sansio.admin",
    "ClientQuotaEntity": "krafka.sansio.admin",
    "ClientQuotaFilter": "krafka.sansio.admin",
    "ClusterDescription": "krafka.sansio.admin",
    "ConfigEntry": "krafka.sansio.admin",
    "ConfigResource": "krafka.sansio.admin",
    "CompactedTable": "krafka.io.consumer",
    "CompactedTopicConsumer": "krafka.io.consumer",
    "Consumer": "krafka.io.consumer",
    "ConsumerGroupMetadata": "krafka.structs",
    "ConsumerRecord": "krafka.io.consumer",
    "DelegationToken": "krafka.sansio.admin",
    "FetchedBatch": "krafka.io.consumer",
    "GroupDescription": "krafka.sansio.admin",
    "GroupListing": "krafka.sansio.admin",
    "GroupMembershipOperation": "krafka.sansio.group.events",
    "GroupState": "krafka.sansio.admin",
    "GroupType": "krafka.sansio.admin",
    "ListedOffset": "krafka.sansio.admin",
    "MemberDescription": "krafka.sansio.admin",
    "NewPartitions": "krafka.sansio.admin",
    "NewTopic": "krafka.sansio.admin",
    "Node": "krafka.sansio.admin",
    "OffsetAndMetadata": "krafka.structs",
    "OffsetSpec": "krafka.sansio.admin",
    "PatternType": "krafka.sansio.admin",
    "Producer": "krafka.io.producer",
    "RecordMetadata": "krafka.io.producer",
    "ResourceType": "krafka.sansio.admin",
    "Results": "krafka.sansio.admin",
    "ScramDeletion": "krafka.sansio.admin",
    "ScramMechanism": "krafka.sansio.admin",
    "ScramUpsertion": "krafka.sansio.admin",
    "ShareConsumer": "krafka.io.share_consumer",
    "ShareRecord": "krafka.sansio.share",
    "TableChange": "krafka.io.consumer",
    "TopicDescription": "krafka.sansio.admin",
    "TopicPartition": "krafka.structs",
    "TopicPartitionInfo": "krafka.sansio.admin",
    "WakeupError": "krafka.errors",
}

__all__ = [
    "AcknowledgeType",
    "AcknowledgementMode",
    "AclBinding",
    "AclBindingFilter",
    "AclOperation",
    "AclPermissionType",
    "AdminClient",
    "AlterConfigOp",
    "ClientQuotaEntity",
    "ClientQuotaFilter",
    "ClusterDescription",
    "CompactedTable",
    "CompactedTopicConsumer",
    "ConfigEntry",
    "ConfigResource",
    "Consumer",
    "ConsumerGroupMetadata",
    "ConsumerRecord",
    "DelegationToken",
    "FetchedBatch",
    "GroupDescription",
    "GroupListing",
    "GroupMembershipOperation",
    "GroupState",
    "GroupType",
    "ListedOffset",
    "MemberDescription",
    "NewPartitions",
    "NewTopic",
    "Node",
    "OffsetAndMetadata",
    "OffsetSpec",
    "PatternType",
    "Producer",
    "RecordMetadata",
    "ResourceType",
    "Results",
    "ScramDeletion",
    "ScramMechanism",
    "ScramUpsertion",
    "ShareConsumer",
    "ShareRecord",
    "TableChange",
    "TopicDescription",
    "TopicPartition",
    "TopicPartitionInfo",
    "WakeupError",
    "__version__",
]


def __dir__() -> list[str]:
    """The public names (imported lazily, so not yet in the module's namespace) and the rest."""
    return sorted({*globals(), *__all__})


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'krafka' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
