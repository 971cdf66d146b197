"""The consumer protocol's JoinGroup metadata and SyncGroup assignment bytes (Java's
`ConsumerProtocol`): an int16 version, then a ConsumerProtocolSubscription or
ConsumerProtocolAssignment of that version (0-3, not flexible).

Subscription v1 added owned partitions (KIP-429), v2 their generation (KIP-792), v3 the
member's rack (KIP-881); Assignment versions only follow Subscription's. A newer version than
ours is read with our newest layout and trailing bytes are ignored, as Java does (fields are
only ever appended). Like Java, topics and owned partitions are written sorted. Bytes that do
not parse raise `RemoteProtocolError` naming the field.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable
from typing import Final

from krafka.errors import RemoteProtocolError
from krafka.protocol.messages import ConsumerProtocolAssignment, ConsumerProtocolSubscription
from krafka.sansio.group.classic.assignors.assignor import NO_GENERATION, Assignment, Subscription
from krafka.structs import TopicPartition

PROTOCOL_TYPE: Final = "consumer"
LATEST_VERSION: Final = ConsumerProtocolSubscription.MAX_VERSION
_VERSION: Final = struct.Struct(">h")


def _grouped(partitions: Iterable[TopicPartition]) -> dict[str, list[int]]:
    """Partitions per topic, topics in first-seen order (Java's assignment layout)."""
    out: dict[str, list[int]] = {}
    for topic, partition in partitions:
        out.setdefault(topic, []).append(partition)
    return out


def _check_version(version: int) -> None:
    if not 0 <= version <= LATEST_VERSION:
        raise ValueError(f"consumer protocol version {version} is not 0-{LATEST_VERSION}")


def encode_subscription(subscription: Subscription, version: int = LATEST_VERSION) -> bytes:
    _check_version(version)
    owned = _grouped(sorted(set(subscription.owned_partitions)))
    body = ConsumerProtocolSubscription(
        topics=sorted(set(subscription.topics)),
        user_data=subscription.user_data,
        owned_partitions=[
            ConsumerProtocolSubscription.TopicPartition(topic=t, partitions=ps)
            for t, ps in owned.items()
        ],
        generation_id=max(subscription.generation_id, NO_GENERATION),
        rack_id=subscription.rack_id,
    )
    return _VERSION.pack(version) + body.encode(version)


def encode_assignment(assignment: Assignment, version: int = LATEST_VERSION) -> bytes:
    _check_version(version)
    body = ConsumerProtocolAssignment(
        assigned_partitions=[
            ConsumerProtocolAssignment.TopicPartition(topic=t, partitions=ps)
            for t, ps in _grouped(assignment.partitions).items()
        ],
        user_data=assignment.user_data,
    )
    return _VERSION.pack(version) + body.encode(version)


def _version(data: bytes, what: str) -> int:
    if len(data) < _VERSION.size:
        raise RemoteProtocolError(
            f"consumer protocol {what} of {len(data)} bytes has no version header"
        )
    version: int = _VERSION.unpack_from(data)[0]
    if version < 0:
        raise RemoteProtocolError(f"consumer protocol {what} has unsupported version {version}")
    return min(version, LATEST_VERSION)


def decode_subscription(data: bytes, group_instance_id: str | None = None) -> Subscription:
    """A member's JoinGroup metadata; `group_instance_id` comes from the JoinGroup member."""
    version = _version(data, "subscription")
    body, _ = ConsumerProtocolSubscription.decode_prefix(data, version, _VERSION.size)
    return Subscription(
        topics=tuple(body.topics),
        user_data=body.user_data,
        owned_partitions=tuple(
            TopicPartition(t.topic, p) for t in body.owned_partitions for p in t.partitions
        ),
        generation_id=max(body.generation_id, NO_GENERATION),
        rack_id=body.rack_id or None,
        group_instance_id=group_instance_id,
    )


def decode_assignment(data: bytes) -> Assignment:
    """A member's SyncGroup assignment."""
    version = _version(data, "assignment")
    body, _ = ConsumerProtocolAssignment.decode_prefix(data, version, _VERSION.size)
    return Assignment(
        partitions=tuple(
            TopicPartition(t.topic, p) for t in body.assigned_partitions for p in t.partitions
        ),
        user_data=body.user_data,
    )


__all__ = [
    "LATEST_VERSION",
    "PROTOCOL_TYPE",
    "decode_assignment",
    "decode_subscription",
    "encode_assignment",
    "encode_subscription",
]
