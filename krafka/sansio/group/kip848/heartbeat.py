"""The ConsumerGroupHeartbeat a KIP-848 member sends: full or minimal (Java's HeartbeatState).

GroupId, MemberId, MemberEpoch and InstanceId go every time. The rest goes when the member
joins, after any failure (the coordinator may have missed the last one, or moved), or when it
changed since it was last sent: RebalanceTimeoutMs, SubscribedTopicNames, SubscribedTopicRegex
(v1; "" removes a pattern), ServerAssignor, RackId, and TopicPartitions — the owned assignment,
re-sent whenever the local assignment (with its local epoch) changed: that is the
acknowledgement of a reconciled assignment. A null field means "unchanged".

Unlike Java, the TopicPartitions of a heartbeat sent while a reconciliation is under way also
name the partitions being reconciled: a full heartbeat (after a lost answer) that left them out
would let the coordinator release them to another member while this one's driver may be taking
them (found by the model test in tests/sansio/group/kip848/test_member_model.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from krafka.protocol.messages import ConsumerGroupHeartbeatRequest
from krafka.sansio.group.membership.assignment import IdPartitions, LocalAssignment, by_topic

#: SubscribedTopicRegex exists from v1 (Kafka 4.0, KIP-848 GA).
REGEX_MIN_VERSION: Final = 1
_TopicPartitions = ConsumerGroupHeartbeatRequest.TopicPartitions


@dataclass(frozen=True, slots=True)
class MemberFields:
    """Everything a full heartbeat would carry, as the member has it now."""

    group_id: str
    member_id: str
    member_epoch: int
    instance_id: str | None
    rack_id: str | None
    rebalance_timeout_ms: int
    topics: frozenset[str]
    pattern: str | None
    server_assignor: str | None
    assignment: LocalAssignment
    #: What TopicPartitions says the member owns: the assignment, plus the partitions of a
    #: reconciliation under way (the driver may hold them already), so that a full heartbeat
    #: mid-reconciliation never lets the coordinator hand them to another member.
    reported: IdPartitions


@dataclass(slots=True)
class SentFields:
    """What the last heartbeat carried of the optional fields (None: not sent since reset)."""

    rebalance_timeout_ms: int = -1
    topics: frozenset[str] | None = None
    pattern: str | None = None
    server_assignor: str | None = None
    rack_id: str | None = None
    assignment: LocalAssignment | None = None
    #: The last build replaced a pattern by names (the empty regex saying so needs v1).
    drops_pattern: bool = False

    def reset(self) -> None:
        self.rebalance_timeout_ms = -1
        self.topics = None
        self.pattern = None
        self.server_assignor = None
        self.rack_id = None
        self.assignment = None

    def build(self, fields: MemberFields, *, full: bool) -> ConsumerGroupHeartbeatRequest:
        """The heartbeat for `fields` (all optional fields when `full`); records what it sent."""
        request = ConsumerGroupHeartbeatRequest(
            group_id=fields.group_id,
            member_id=fields.member_id,
            member_epoch=fields.member_epoch,
            instance_id=fields.instance_id,
        )
        self.drops_pattern = False
        if fields.member_epoch < 0:  # a leave: the identity and the epoch say it all
            return request
        if full or self.rebalance_timeout_ms != fields.rebalance_timeout_ms:
            request.rebalance_timeout_ms = self.rebalance_timeout_ms = fields.rebalance_timeout_ms
        if full or self.topics != fields.topics or self.pattern != fields.pattern:
            # names and regex travel together (librdkafka's coordinator insists on both or
            # neither); an empty regex means "no pattern" to every coordinator
            request.subscribed_topic_names = sorted(fields.topics)
            request.subscribed_topic_regex = fields.pattern if fields.pattern is not None else ""
            self.drops_pattern = self.pattern is not None and fields.pattern is None
            self.topics, self.pattern = fields.topics, fields.pattern
        assignor = fields.server_assignor
        if assignor is not None and (full or self.server_assignor != assignor):
            request.server_assignor = self.server_assignor = assignor
        rack = fields.rack_id
        if rack is not None and (full or self.rack_id != rack):
            request.rack_id = self.rack_id = rack
        if full or self.assignment != fields.assignment:
            request.topic_partitions = [
                _TopicPartitions(topic_id=topic_id, partitions=partitions)
                for topic_id, partitions in by_topic(fields.reported).items()
            ]
            self.assignment = fields.assignment
        return request


def min_version(sent: SentFields, fields: MemberFields) -> int | None:
    """v1 when the member subscribes by pattern (or drops one); any version otherwise."""
    uses_regex = fields.pattern is not None or sent.drops_pattern
    return REGEX_MIN_VERSION if uses_regex else None


__all__ = ["REGEX_MIN_VERSION", "MemberFields", "SentFields", "min_version"]
