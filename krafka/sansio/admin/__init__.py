"""The admin client's sans-IO core: one `AdminOperation` machine per call, a `Routing` placing
each item (topic, group, partition ...) on its broker, and one `Handler` per Kafka API that
builds the requests and reads the answers into per-item outcomes. Run an operation in a
`ClientCore` (`core.add(operation)`; `krafka.AdminClient` attaches one per call to its client's
core, `krafka.io.attached`) or script it with `krafka.testing.conversation.Conversation`.

Result types and the values users pass in (NewTopic, ConfigResource, AclBinding ...) live in
the family modules and are re-exported here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from krafka.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from krafka.sansio.admin.acls import (
        AclBinding,
        AclBindingFilter,
        AclOperation,
        AclPermissionType,
        PatternType,
        ResourceType,
    )
    from krafka.sansio.admin.cluster import ClusterDescription, LogDirDescription, Node, ReplicaInfo
    from krafka.sansio.admin.configs import (
        AlterConfigOp,
        AlterConfigOpType,
        ConfigEntry,
        ConfigResource,
        ConfigResourceType,
        ConfigSource,
        ConfigSynonym,
        ConfigType,
    )
    from krafka.sansio.admin.delegation_tokens import DelegationToken
    from krafka.sansio.admin.group_description import GroupDescription, MemberDescription
    from krafka.sansio.admin.groups import GroupListing, GroupState, GroupType
    from krafka.sansio.admin.offsets import IsolationLevel, ListedOffset, OffsetSpec
    from krafka.sansio.admin.operation import AdminOperation, Call, Handler
    from krafka.sansio.admin.quotas import (
        ClientQuotaEntity,
        ClientQuotaFilter,
        QuotaFilterComponent,
        QuotaMatch,
    )
    from krafka.sansio.admin.results import Results
    from krafka.sansio.admin.scram import (
        ScramCredentialInfo,
        ScramDeletion,
        ScramMechanism,
        ScramUpsertion,
    )
    from krafka.sansio.admin.topics import (
        CreatedTopic,
        NewPartitions,
        NewTopic,
        TopicDescription,
        TopicPartitionInfo,
    )
    from krafka.sansio.admin.transactions import (
        ProducerState,
        TransactionDescription,
        TransactionListing,
        TransactionState,
    )

__getattr__, __dir__ = lazy_exports(
    globals(),
    {
        "AclBinding": "krafka.sansio.admin.acls",
        "AclBindingFilter": "krafka.sansio.admin.acls",
        "AclOperation": "krafka.sansio.admin.acls",
        "AclPermissionType": "krafka.sansio.admin.acls",
        "PatternType": "krafka.sansio.admin.acls",
        "ResourceType": "krafka.sansio.admin.acls",
        "ClusterDescription": "krafka.sansio.admin.cluster",
        "LogDirDescription": "krafka.sansio.admin.cluster",
        "Node": "krafka.sansio.admin.cluster",
        "ReplicaInfo": "krafka.sansio.admin.cluster",
        "AlterConfigOp": "krafka.sansio.admin.configs",
        "AlterConfigOpType": "krafka.sansio.admin.configs",
        "ConfigEntry": "krafka.sansio.admin.configs",
        "ConfigResource": "krafka.sansio.admin.configs",
        "ConfigResourceType": "krafka.sansio.admin.configs",
        "ConfigSource": "krafka.sansio.admin.configs",
        "ConfigSynonym": "krafka.sansio.admin.configs",
        "ConfigType": "krafka.sansio.admin.configs",
        "DelegationToken": "krafka.sansio.admin.delegation_tokens",
        "GroupDescription": "krafka.sansio.admin.group_description",
        "MemberDescription": "krafka.sansio.admin.group_description",
        "GroupListing": "krafka.sansio.admin.groups",
        "GroupState": "krafka.sansio.admin.groups",
        "GroupType": "krafka.sansio.admin.groups",
        "IsolationLevel": "krafka.sansio.admin.offsets",
        "ListedOffset": "krafka.sansio.admin.offsets",
        "OffsetSpec": "krafka.sansio.admin.offsets",
        "AdminOperation": "krafka.sansio.admin.operation",
        "Call": "krafka.sansio.admin.operation",
        "Handler": "krafka.sansio.admin.operation",
        "ClientQuotaEntity": "krafka.sansio.admin.quotas",
        "ClientQuotaFilter": "krafka.sansio.admin.quotas",
        "QuotaFilterComponent": "krafka.sansio.admin.quotas",
        "QuotaMatch": "krafka.sansio.admin.quotas",
        "Results": "krafka.sansio.admin.results",
        "ScramCredentialInfo": "krafka.sansio.admin.scram",
        "ScramDeletion": "krafka.sansio.admin.scram",
        "ScramMechanism": "krafka.sansio.admin.scram",
        "ScramUpsertion": "krafka.sansio.admin.scram",
        "CreatedTopic": "krafka.sansio.admin.topics",
        "NewPartitions": "krafka.sansio.admin.topics",
        "NewTopic": "krafka.sansio.admin.topics",
        "TopicDescription": "krafka.sansio.admin.topics",
        "TopicPartitionInfo": "krafka.sansio.admin.topics",
        "ProducerState": "krafka.sansio.admin.transactions",
        "TransactionDescription": "krafka.sansio.admin.transactions",
        "TransactionListing": "krafka.sansio.admin.transactions",
        "TransactionState": "krafka.sansio.admin.transactions",
    },
)

__all__ = [
    "AclBinding",
    "AclBindingFilter",
    "AclOperation",
    "AclPermissionType",
    "AdminOperation",
    "AlterConfigOp",
    "AlterConfigOpType",
    "Call",
    "ClientQuotaEntity",
    "ClientQuotaFilter",
    "ClusterDescription",
    "ConfigEntry",
    "ConfigResource",
    "ConfigResourceType",
    "ConfigSource",
    "ConfigSynonym",
    "ConfigType",
    "CreatedTopic",
    "DelegationToken",
    "GroupDescription",
    "GroupListing",
    "GroupState",
    "GroupType",
    "Handler",
    "IsolationLevel",
    "ListedOffset",
    "LogDirDescription",
    "MemberDescription",
    "NewPartitions",
    "NewTopic",
    "Node",
    "OffsetSpec",
    "PatternType",
    "ProducerState",
    "QuotaFilterComponent",
    "QuotaMatch",
    "ReplicaInfo",
    "ResourceType",
    "Results",
    "ScramCredentialInfo",
    "ScramDeletion",
    "ScramMechanism",
    "ScramUpsertion",
    "TopicDescription",
    "TopicPartitionInfo",
    "TransactionDescription",
    "TransactionListing",
    "TransactionState",
]
