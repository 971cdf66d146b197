"""The admin client's sans-IO core: one `AdminOperation` machine per call, a `Routing` placing
each item (topic, group, partition ...) on its broker, and one `Handler` per Kafka API that
builds the requests and reads the answers into per-item outcomes. Run an operation in a
`ClientCore` (`core.add(operation)`; `krafka.AdminClient` attaches one per call to its client's
core, `krafka.io.attached`) or script it with `krafka.testing.conversation.Conversation`.

Result types and the values users pass in (NewTopic, ConfigResource, AclBinding ...) live in
the family modules and are re-exported here.
"""

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
