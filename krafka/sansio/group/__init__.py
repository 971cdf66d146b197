"""Classic consumer groups (JoinGroup / SyncGroup / Heartbeat), sans-IO.

`GroupMember` is the member machine (`krafka.sansio.actions.Machine`); run it with
`MachineDriver`. What its driver (the io Consumer) does:

* **Calls**, each with `now`: `subscribe(topics | re.Pattern)`; `poll()` at every application
  poll (restarts max_poll_interval; a rebalance only *starts* there; a due auto-commit is asked
  for there); `update_metadata({topic: partitions}, racks=...)` with the driver's whole topic
  view (at start, after `RefreshMetadata`, on refreshes); `commit(offsets)`,
  `fetch_committed(partitions)` and `leave(reason=CLOSE | UNSUBSCRIBE)` return operation ids
  answered by `Completed` / `Failed`; `listener_done(step, offsets=None)` answers a step.
* **Steps** (one outstanding at a time; the member waits for the answer):
  `CommitPositions` (answer with the consumed positions of `partitions`; if
  `pending_revocation`, stop returning their records first), `RevokePartitions` /
  `LosePartitions` (run the listener; then drop those partitions: positions, buffered records,
  pause flags), `AssignPartitions` (set the assignment to `assignment` before running
  `on_partitions_assigned(added)`; `retained` keep their state; `added` need positions:
  `fetch_committed`, then `initial_offsets` / `auto_offset_reset`).
* **Notices**: `GroupFailed(error)` (raise it from the next poll), `RefreshMetadata(topics)`,
  `AutoCommitDone(offsets, error)`.
* **Reads**: `assignment()`, `group_metadata()`, `state`, `generation`, `closed`.

`assignors` holds the partition assignors (`PartitionAssignor`, `assignors_for`) and
`consumer_protocol` the subscription and assignment bytes they speak. `OffsetClient` and
`StandaloneOffsets` commit and fetch offsets for a consumer that assigns its partitions itself
but names a group.
"""

from krafka.sansio.actions import RefreshMetadata
from krafka.sansio.group.config import GroupConfig
from krafka.sansio.group.events import (
    AssignPartitions,
    AutoCommitDone,
    CommitPositions,
    CommitReason,
    GroupFailed,
    LosePartitions,
    RevokePartitions,
    Step,
)
from krafka.sansio.group.member import GroupMember, LeaveReason
from krafka.sansio.group.offsets import CommitPolicy, OffsetClient, StandaloneCommits
from krafka.sansio.group.standalone import StandaloneOffsets
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
    "OffsetClient",
    "RefreshMetadata",
    "RevokePartitions",
    "StandaloneCommits",
    "StandaloneOffsets",
    "Step",
]
