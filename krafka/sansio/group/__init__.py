"""Consumer groups, sans-IO: the group protocols a consumer can join, and committed offsets.

* `classic/` — JoinGroup / SyncGroup members (`GroupMember`) and their partition assignors
  (`classic.assignors`: range, roundrobin, sticky, cooperative-sticky, custom ones);
* `kip848/` — KIP-848 members (`ConsumerMember`, ConsumerGroupHeartbeat: the coordinator
  assigns);
* `membership/` — the base KIP-848 and share-group (KIP-932) members share: liveness,
  heartbeat timer, the state table, reconciliation;
* `offsets/` — OffsetCommit / OffsetFetch (`OffsetClient`, `StandaloneOffsets` for a consumer
  that assigns its partitions itself but names a group);
* `config.GroupConfig` and `events` (listener steps and notices), shared by both protocols.

Members speak the `krafka.sansio.actions` contract; every request goes to
`Coordinator(group_id)`. What a driver (the consumer engine, `krafka.sansio.consumer.engine`)
does with them:

* **Calls**, each with `now`: `subscribe(topics | re.Pattern)`; `poll(now)` at every
  application poll (restarts max_poll_interval; a rebalance only *starts* there);
  `update_metadata` (classic: partition counts) or `update_topic_ids` (KIP-848);
  `commit(offsets)`, `fetch_committed(partitions)` and `leave(reason=CLOSE | UNSUBSCRIBE)`
  return operation ids answered by `Completed` / `Failed`; `listener_done(step, now, ...)`
  answers a step.
* **Steps** (one outstanding at a time; the member waits for the answer):
  `CommitPositions` (answer with the consumed positions of `partitions`; if
  `pending_revocation`, stop returning their records first), `RevokePartitions` /
  `LosePartitions` (run the listener; then drop those partitions), `AssignPartitions` (set the
  assignment to `assignment` before running `on_partitions_assigned(added)`).
* **Notices**: `GroupFailed(error)` (raise it from the next poll), `RefreshMetadata(topics)`,
  `AutoCommitDone(offsets, error, sent)`, `PendingRevocation(partitions)` (KIP-848).
"""

from krafka.sansio.actions import RefreshMetadata
from krafka.sansio.group.classic.assignors import (
    Assignment,
    Cluster,
    PartitionAssignor,
    RebalanceProtocol,
    Subscription,
    assignors_for,
)
from krafka.sansio.group.classic.member import GroupMember
from krafka.sansio.group.classic.state import Generation, MemberState
from krafka.sansio.group.config import GroupConfig
from krafka.sansio.group.events import (
    AssignPartitions,
    AutoCommitDone,
    CommitPositions,
    CommitReason,
    GroupFailed,
    GroupMembershipOperation,
    LeaveReason,
    LosePartitions,
    PendingRevocation,
    RevokePartitions,
    Step,
)
from krafka.sansio.group.kip848.member import ConsumerMember
from krafka.sansio.group.membership.member import Membership
from krafka.sansio.group.membership.state import MembershipState
from krafka.sansio.group.offsets.client import CommitPolicy, OffsetClient, StandaloneCommits
from krafka.sansio.group.offsets.standalone import StandaloneOffsets

__all__ = [
    "AssignPartitions",
    "Assignment",
    "AutoCommitDone",
    "Cluster",
    "CommitPolicy",
    "CommitPositions",
    "CommitReason",
    "ConsumerMember",
    "Generation",
    "GroupConfig",
    "GroupFailed",
    "GroupMember",
    "GroupMembershipOperation",
    "LeaveReason",
    "LosePartitions",
    "MemberState",
    "Membership",
    "MembershipState",
    "OffsetClient",
    "PartitionAssignor",
    "PendingRevocation",
    "RebalanceProtocol",
    "RefreshMetadata",
    "RevokePartitions",
    "StandaloneCommits",
    "StandaloneOffsets",
    "Step",
    "Subscription",
    "assignors_for",
]
