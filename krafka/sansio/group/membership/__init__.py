"""What a KIP-848 consumer-group member and a KIP-932 share-group member share.

* `member.Membership` — the base machine: member id and epoch, heartbeats and their errors,
  the poll interval (liveness), fencing, leaving;
* `state` — the member states and the table of which may follow which;
* `heartbeat_timer` — when the next heartbeat goes;
* `flows` — reconciling a target assignment and releasing partitions, step by step;
* `assignment` — assignments by topic id and their resolution into names.
"""

from krafka.sansio.group.membership.member import Membership
from krafka.sansio.group.membership.state import MembershipState

__all__ = ["Membership", "MembershipState"]
