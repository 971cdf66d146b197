"""Classic consumer groups (JoinGroup / SyncGroup / Heartbeat), sans-IO.

`GroupMember` is the member machine; `events` lists what it asks of its driver; `OffsetClient`
commits and fetches offsets (also for consumers that assign partitions themselves).
"""

from krafka.sansio.group.config import GroupConfig
from krafka.sansio.group.events import (
    AssignPartitions,
    AutoCommitDone,
    CommitPositions,
    CommitReason,
    GroupFailed,
    LosePartitions,
    MetadataNeeded,
    RevokePartitions,
    Step,
)
from krafka.sansio.group.member import GroupMember, LeaveReason
from krafka.sansio.group.offsets import CommitPolicy, OffsetClient, StandaloneCommits
from krafka.sansio.group.state import Generation, MemberState

__all__ = [
    "AssignPartitions",
    "AutoCommitDone",
    "CommitPolicy",
    "CommitPositions",
    "CommitReason",
    "Generation",
    "GroupConfig",
    "GroupFailed",
    "GroupMember",
    "LeaveReason",
    "LosePartitions",
    "MemberState",
    "MetadataNeeded",
    "OffsetClient",
    "RevokePartitions",
    "StandaloneCommits",
    "Step",
]
