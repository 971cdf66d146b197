"""The classic group requests a member sends: JoinGroup, SyncGroup, Heartbeat, LeaveGroup.

Static members (a `group_instance_id`) need the versions that carry it (JoinGroup v5,
SyncGroup v3, Heartbeat v3): a broker offering less is refused locally (`min_version`) rather
than silently treating the member as dynamic. LeaveGroup is built for the negotiated version:
one member id up to v2, the batched `members` form from v3.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final

from krafka.protocol.messages import (
    ApiKey,
    HeartbeatRequest,
    JoinGroupRequest,
    JoinGroupResponse,
    LeaveGroupRequest,
    LeaveGroupResponse,
    SyncGroupRequest,
)
from krafka.protocol.messages.leave_group_request import MemberIdentity
from krafka.sansio.actions import Versioned
from krafka.sansio.group.classic.consumer_protocol import PROTOCOL_TYPE
from krafka.sansio.group.classic.state import Generation
from krafka.sansio.group.config import GroupConfig

#: Java adds this to the rebalance timeout for JoinGroup's own request timeout.
JOIN_GROUP_TIMEOUT_LAPSE: Final = 5.0
MAX_REASON: Final = 255
JOIN_GROUP_STATIC_MIN_VERSION: Final = 5
SYNC_GROUP_STATIC_MIN_VERSION: Final = 3
HEARTBEAT_STATIC_MIN_VERSION: Final = 3
_LEAVE_GROUP_BATCHED: Final = 3


def _ms(seconds: float) -> int:
    return min(int(seconds * 1000), 2**31 - 1)


def _reason(reason: str) -> str:
    return reason[:MAX_REASON]


def join_group_request(
    config: GroupConfig,
    generation: Generation,
    protocols: Sequence[tuple[str, bytes]],
    reason: str,
) -> JoinGroupRequest:
    return JoinGroupRequest(
        group_id=config.group_id,
        session_timeout_ms=_ms(config.session_timeout),
        rebalance_timeout_ms=_ms(config.rebalance_timeout_s),
        member_id=generation.member_id,
        group_instance_id=config.group_instance_id,
        protocol_type=PROTOCOL_TYPE,
        protocols=[
            JoinGroupRequest.JoinGroupRequestProtocol(name=name, metadata=metadata)
            for name, metadata in protocols
        ],
        reason=_reason(reason),
    )


def join_group_timeout(config: GroupConfig) -> float:
    """JoinGroup may wait for the whole rebalance on the broker."""
    return max(config.request_timeout, config.rebalance_timeout_s + JOIN_GROUP_TIMEOUT_LAPSE)


def sync_group_request(
    config: GroupConfig, generation: Generation, assignments: Mapping[str, bytes]
) -> SyncGroupRequest:
    return SyncGroupRequest(
        group_id=config.group_id,
        generation_id=generation.generation_id,
        member_id=generation.member_id,
        group_instance_id=config.group_instance_id,
        protocol_type=PROTOCOL_TYPE,
        protocol_name=generation.protocol_name,
        assignments=[
            SyncGroupRequest.SyncGroupRequestAssignment(member_id=member, assignment=data)
            for member, data in sorted(assignments.items())
        ],
    )


def heartbeat_request(config: GroupConfig, generation: Generation) -> HeartbeatRequest:
    return HeartbeatRequest(
        group_id=config.group_id,
        generation_id=generation.generation_id,
        member_id=generation.member_id,
        group_instance_id=config.group_instance_id,
    )


def leave_group_request(
    config: GroupConfig, member_id: str, reason: str
) -> Versioned[LeaveGroupResponse]:
    """The member's LeaveGroup; a static member's names its group instance id too (v3+), as
    Java's does when told to leave (KIP-1092's LEAVE_GROUP)."""
    group_id = config.group_id
    instance_id = config.group_instance_id

    def build(version: int) -> LeaveGroupRequest:
        if version < _LEAVE_GROUP_BATCHED:
            return LeaveGroupRequest(group_id=group_id, member_id=member_id)
        identity = MemberIdentity(
            member_id=member_id, group_instance_id=instance_id, reason=_reason(reason)
        )
        return LeaveGroupRequest(group_id=group_id, members=[identity])

    return Versioned(ApiKey.LEAVE_GROUP, build)


def leave_group_code(response: LeaveGroupResponse) -> int:
    """The top-level code, else the (single) member's code (v3+)."""
    if response.error_code:
        return int(response.error_code)
    return next((int(m.error_code) for m in response.members if m.error_code), 0)


def is_leader(response: JoinGroupResponse) -> bool:
    return bool(response.member_id) and response.leader == response.member_id


def static_min_version(config: GroupConfig, version: int) -> int | None:
    return version if config.is_static else None


__all__ = [
    "HEARTBEAT_STATIC_MIN_VERSION",
    "JOIN_GROUP_STATIC_MIN_VERSION",
    "PROTOCOL_TYPE",
    "SYNC_GROUP_STATIC_MIN_VERSION",
    "heartbeat_request",
    "is_leader",
    "join_group_request",
    "join_group_timeout",
    "leave_group_code",
    "leave_group_request",
    "static_min_version",
    "sync_group_request",
]
