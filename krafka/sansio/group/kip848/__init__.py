"""The KIP-848 consumer group protocol (ConsumerGroupHeartbeat; the coordinator assigns), on the
membership base shared with share groups (`krafka.sansio.group.membership`).

* `member.ConsumerMember` — the machine (Java's ConsumerMembershipManager and
  ConsumerHeartbeatRequestManager);
* `heartbeat` — what each heartbeat carries (full or only what changed).
"""

from krafka.sansio.group.kip848.member import ConsumerMember

__all__ = ["ConsumerMember"]
