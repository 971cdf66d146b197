"""The consumer protocol's bytes inside a classic group: a member's subscription (JoinGroup
metadata) and assignment (SyncGroup), each an int16 version followed by that version's body.

Only what describing a group needs: a newer version than ours is read with our newest schema
(its extra fields are skipped, as Java's ConsumerProtocol does), and bytes that are not the
consumer protocol give None instead of failing the description.
"""

from __future__ import annotations

import struct
from typing import TypeVar

from krafka.errors import KrafkaError
from krafka.protocol.messages import ConsumerProtocolAssignment, ConsumerProtocolSubscription
from krafka.protocol.schema import ApiMessage
from krafka.structs import TopicPartition

M = TypeVar("M", bound=ApiMessage)


def _decode(cls: type[M], data: bytes) -> M | None:
    if len(data) < 2:
        return None
    (version,) = struct.unpack_from(">h", data)
    if version < 0:
        return None
    try:
        message, _ = cls.decode_prefix(data, min(version, cls.MAX_VERSION), 2)
    except KrafkaError:
        return None
    return message


def decode_assignment(data: bytes | None) -> tuple[TopicPartition, ...] | None:
    """The partitions of a member's assignment, sorted; () for none, None if unreadable."""
    if not data:
        return ()
    message = _decode(ConsumerProtocolAssignment, bytes(data))
    if message is None:
        return None
    return tuple(
        sorted(
            TopicPartition(str(tp.topic), int(p))
            for tp in message.assigned_partitions
            for p in tp.partitions
        )
    )


def decode_subscription(data: bytes | None) -> tuple[str, ...] | None:
    """The topics a member subscribed to, sorted; None if unreadable."""
    if not data:
        return ()
    message = _decode(ConsumerProtocolSubscription, bytes(data))
    if message is None:
        return None
    return tuple(sorted(str(t) for t in message.topics))


__all__ = ["decode_assignment", "decode_subscription"]
