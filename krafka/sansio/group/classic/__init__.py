"""The classic group protocol (JoinGroup / SyncGroup / Heartbeat / LeaveGroup), Java's
ConsumerCoordinator as one sans-IO machine.

* `member.GroupMember` — the machine; `core.MemberCore` — the state its parts share, with the
  member state table (`state`);
* `rebalance` (JoinGroup, the leader's assignment, SyncGroup), `liveness` (heartbeats, session
  and poll timeouts, clocked by `heartbeat.HeartbeatClock`), `flows` (prepare a rebalance, apply
  an assignment, leave), `commits` (the member's offset commits);
* `wire`, `consumer_protocol` (subscription and assignment bytes), `error_tables` (Java's
  reading of each error), `leader`, `subscription`;
* `assignors` — range, roundrobin, sticky, cooperative-sticky and the custom assignor protocol.
"""

from krafka.sansio.group.classic.member import GroupMember
from krafka.sansio.group.classic.state import Generation, MemberState

__all__ = ["Generation", "GroupMember", "MemberState"]
