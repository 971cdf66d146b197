"""Describing groups of every kind — classic, consumer (KIP-848) and share (KIP-932) — without
being told which kind a group is.

Each group is asked with DescribeGroups first (most groups are classic, and every broker has
it); a coordinator that answers GROUP_ID_NOT_FOUND or "Dead" for it (how Kafka 4 answers for a
group of another kind, or none) has it asked again with ConsumerGroupDescribe, then with
ShareGroupDescribe — the fallback on GROUP_ID_NOT_FOUND that Java's describeConsumerGroups
does, in the other order. An API the broker lacks skips to the next. Requests are batched per
coordinator and per API.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any, Final

from krafka.errors import KrafkaError, UnsupportedVersionError
from krafka.protocol.error_codes import ErrorCode
from krafka.protocol.messages import (
    ApiKey,
    ConsumerGroupDescribeRequest,
    ConsumerGroupDescribeResponse,
    DescribeGroupsRequest,
    DescribeGroupsResponse,
    ShareGroupDescribeRequest,
    ShareGroupDescribeResponse,
)
from krafka.sansio.actions import Broker, Versioned
from krafka.sansio.admin.acls import AclOperation, authorized_operations
from krafka.sansio.admin.cluster import Node
from krafka.sansio.admin.groups import GroupState, GroupType
from krafka.sansio.admin.member_data import decode_assignment, decode_subscription
from krafka.sansio.admin.operation import Call, Handler
from krafka.sansio.admin.outcome import (
    COORDINATOR_MOVED,
    Done,
    Fail,
    ItemResult,
    Resend,
    error_from,
    for_code,
    for_failure,
)
from krafka.sansio.admin.routing import Target
from krafka.structs import TopicPartition

_AUTHORIZED_OPERATIONS_VERSION: Final = 3


@dataclass(frozen=True, slots=True)
class MemberDescription:
    """One member of a group. `assignment` is what it owns now (sorted); a KIP-848 member also
    has the `target_assignment` the coordinator is moving it to, and a `member_epoch`."""

    member_id: str
    client_id: str
    client_host: str
    group_instance_id: str | None = None
    assignment: tuple[TopicPartition, ...] = ()
    target_assignment: tuple[TopicPartition, ...] | None = None
    subscribed_topics: tuple[str, ...] = ()
    subscribed_topic_regex: str | None = None
    member_epoch: int | None = None
    rack: str | None = None


@dataclass(frozen=True, slots=True)
class GroupDescription:
    """A group: its kind, state, coordinator and members with their assignments. `assignor`
    is the classic group's protocol (`range`, `cooperative-sticky` ...) or the KIP-848 and
    share group's server-side assignor; epochs are KIP-848 / KIP-932 only."""

    group_id: str
    type: GroupType
    state: GroupState
    protocol_type: str
    assignor: str
    coordinator: Node | None
    members: tuple[MemberDescription, ...] = ()
    group_epoch: int | None = None
    assignment_epoch: int | None = None
    authorized_operations: frozenset[AclOperation] | None = None

    @property
    def is_simple_consumer_group(self) -> bool:
        return self.type is GroupType.CLASSIC and self.protocol_type == ""


class _Api(Enum):
    CLASSIC = 0
    CONSUMER = 1
    SHARE = 2


_ORDER: Final = (_Api.CLASSIC, _Api.CONSUMER, _Api.SHARE)
#: Why a broker with none of the three APIs cannot describe a group (each one it lacks
#: raised in turn; naming only the last would send the reader after share groups).
_NO_DESCRIBE_API: Final = (
    "broker does not support DESCRIBE_GROUPS, CONSUMER_GROUP_DESCRIBE or SHARE_GROUP_DESCRIBE"
)


@dataclass(slots=True)
class _Progress:
    api: _Api = _Api.CLASSIC
    not_found: bool = False
    unsupported: bool = False


class DescribeGroups(Handler[str]):
    what = "describe groups"

    def __init__(self, include_authorized_operations: bool) -> None:
        self.authorized = include_authorized_operations
        self._progress: dict[str, _Progress] = {}

    def describe(self, key: str) -> str:
        return f"group {key!r}"

    def _state(self, group: str) -> _Progress:
        return self._progress.setdefault(group, _Progress())

    def requests(self, target: Target, keys: Sequence[str]) -> list[Call[str]]:
        by_api: dict[_Api, list[str]] = {}
        for key in keys:
            by_api.setdefault(self._state(key).api, []).append(key)
        return [self._call(api, groups) for api, groups in by_api.items()]

    def _call(self, api: _Api, groups: list[str]) -> Call[str]:
        authorized = self.authorized
        if api is _Api.CONSUMER:
            request: Any = ConsumerGroupDescribeRequest(
                group_ids=groups, include_authorized_operations=authorized
            )
        elif api is _Api.SHARE:
            request = ShareGroupDescribeRequest(
                group_ids=groups, include_authorized_operations=authorized
            )
        else:

            def build(version: int) -> DescribeGroupsRequest:
                return DescribeGroupsRequest(
                    groups=groups,
                    include_authorized_operations=(
                        authorized and version >= _AUTHORIZED_OPERATIONS_VERSION
                    ),
                )

            request = Versioned(ApiKey.DESCRIBE_GROUPS, build)
        return Call(request, tuple(groups))

    def on_failure(self, call: Call[str], error: KrafkaError) -> Mapping[str, ItemResult]:
        if not isinstance(error, UnsupportedVersionError):
            return dict.fromkeys(call.keys, for_failure(error))
        out: dict[str, ItemResult] = {}
        for group in call.keys:
            self._state(group).unsupported = True
            out[group] = self._next(group)
        return out

    def _next(self, group: str) -> ItemResult:
        """Ask `group` with the next API; when none is left, it does not exist (or the broker
        has none of the APIs)."""
        progress = self._state(group)
        index = _ORDER.index(progress.api) + 1
        if index < len(_ORDER):
            progress.api = _ORDER[index]
            return Resend()
        if progress.not_found or not progress.unsupported:
            return Fail(error_from(ErrorCode.GROUP_ID_NOT_FOUND, f"describe group {group!r}"))
        return Fail(UnsupportedVersionError(_NO_DESCRIBE_API), whole=True)

    def on_response(
        self, call: Call[str], target: Target, response: Any
    ) -> Mapping[str, ItemResult]:
        coordinator = _node(target)
        out: dict[str, ItemResult] = {}
        for described in response.groups:
            group = str(described.group_id)
            code = int(described.error_code)
            missing = code == ErrorCode.GROUP_ID_NOT_FOUND or (
                code == ErrorCode.NONE
                and isinstance(response, DescribeGroupsResponse)
                and GroupState.parse(described.group_state) is GroupState.DEAD
            )
            if missing:
                self._state(group).not_found = True
                out[group] = self._next(group)
                continue
            message = getattr(described, "error_message", None)
            outcome = for_code(code, f"describe group {group!r}", message, moved=COORDINATOR_MOVED)
            out[group] = outcome or Done(self._description(response, described, coordinator))
        return out

    def _description(self, response: Any, group: Any, coordinator: Node | None) -> GroupDescription:
        operations = authorized_operations(int(group.authorized_operations))
        if not self.authorized:
            operations = None
        if isinstance(response, DescribeGroupsResponse):
            return _classic(group, coordinator, operations)
        kind = (
            GroupType.CONSUMER
            if isinstance(response, ConsumerGroupDescribeResponse)
            else GroupType.SHARE
        )
        assert isinstance(response, ConsumerGroupDescribeResponse | ShareGroupDescribeResponse)
        return GroupDescription(
            group_id=str(group.group_id),
            type=kind,
            state=GroupState.parse(group.group_state),
            protocol_type="consumer" if kind is GroupType.CONSUMER else "share",
            assignor=str(group.assignor_name),
            coordinator=coordinator,
            members=tuple(_member(m) for m in group.members),
            group_epoch=int(group.group_epoch),
            assignment_epoch=int(group.assignment_epoch),
            authorized_operations=operations,
        )


def _node(target: Target) -> Node | None:
    if isinstance(target, Broker) and target.host is not None and target.port is not None:
        return Node(target.node_id, target.host, target.port)
    return None


def _classic(group: Any, coordinator: Node | None, operations: Any) -> GroupDescription:
    consumer = group.protocol_type == "consumer"
    members = tuple(
        MemberDescription(
            member_id=str(m.member_id),
            client_id=str(m.client_id),
            client_host=str(m.client_host),
            group_instance_id=m.group_instance_id,
            assignment=(decode_assignment(m.member_assignment) or ()) if consumer else (),
            subscribed_topics=(decode_subscription(m.member_metadata) or ()) if consumer else (),
        )
        for m in group.members
    )
    return GroupDescription(
        group_id=str(group.group_id),
        type=GroupType.CLASSIC,
        state=GroupState.parse(group.group_state),
        protocol_type=str(group.protocol_type),
        assignor=str(group.protocol_data),
        coordinator=coordinator,
        members=members,
        authorized_operations=operations,
    )


def _partitions(assignment: Any) -> tuple[TopicPartition, ...]:
    return tuple(
        sorted(
            TopicPartition(str(t.topic_name), int(p))
            for t in assignment.topic_partitions
            for p in t.partitions
        )
    )


def _member(member: Any) -> MemberDescription:
    target = getattr(member, "target_assignment", None)
    return MemberDescription(
        member_id=str(member.member_id),
        client_id=str(member.client_id),
        client_host=str(member.client_host),
        group_instance_id=getattr(member, "instance_id", None),
        assignment=_partitions(member.assignment),
        target_assignment=None if target is None else _partitions(target),
        subscribed_topics=tuple(sorted(str(t) for t in member.subscribed_topic_names)),
        subscribed_topic_regex=getattr(member, "subscribed_topic_regex", None),
        member_epoch=int(member.member_epoch),
        rack=member.rack_id,
    )


__all__ = ["DescribeGroups", "GroupDescription", "MemberDescription"]
