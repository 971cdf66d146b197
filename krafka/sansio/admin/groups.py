"""Groups: their types and states, listing them (ListGroups on every broker) and deleting them
(DeleteGroups, batched per coordinator)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any, Final

from krafka.errors import UnsupportedVersionError
from krafka.protocol.messages import (
    ApiKey,
    DeleteGroupsRequest,
    DeleteGroupsResponse,
    ListGroupsRequest,
    ListGroupsResponse,
)
from krafka.sansio.actions import Versioned
from krafka.sansio.admin.operation import Call, Handler
from krafka.sansio.admin.outcome import (
    COORDINATOR_MOVED,
    NOTHING_MOVES,
    Done,
    ItemResult,
    for_code,
)
from krafka.sansio.admin.routing import Target

_STATES_FILTER_VERSION: Final = 4
_TYPES_FILTER_VERSION: Final = 5


class GroupType(Enum):
    """A group's protocol: classic (JoinGroup/SyncGroup), consumer (KIP-848), share (KIP-932),
    streams (KIP-1071)."""

    UNKNOWN = "unknown"
    CLASSIC = "classic"
    CONSUMER = "consumer"
    SHARE = "share"
    STREAMS = "streams"

    @classmethod
    def parse(cls, text: str | GroupType) -> GroupType:
        if isinstance(text, GroupType):
            return text
        try:
            return cls(text.strip().lower())
        except ValueError:
            return cls.UNKNOWN


class GroupState(Enum):
    """A group's state as its coordinator names it (classic and KIP-848 states together)."""

    UNKNOWN = "Unknown"
    PREPARING_REBALANCE = "PreparingRebalance"
    COMPLETING_REBALANCE = "CompletingRebalance"
    STABLE = "Stable"
    DEAD = "Dead"
    EMPTY = "Empty"
    ASSIGNING = "Assigning"
    RECONCILING = "Reconciling"
    NOT_READY = "NotReady"

    @classmethod
    def parse(cls, text: str | GroupState) -> GroupState:
        """Case-insensitive, like Java's `GroupState.parse`; unknown names are UNKNOWN."""
        if isinstance(text, GroupState):
            return text
        folded = text.replace("_", "").lower()
        return next((s for s in cls if s.value.lower() == folded), cls.UNKNOWN)


@dataclass(frozen=True, slots=True)
class GroupListing:
    """A group as ListGroups reports it (state from Kafka 2.6 brokers, type from 3.8)."""

    group_id: str
    protocol_type: str
    state: GroupState | None = None
    type: GroupType | None = None

    @property
    def is_simple_consumer_group(self) -> bool:
        """A group used only to store offsets (no members ever joined)."""
        return self.protocol_type == "" and self.type in (None, GroupType.CLASSIC)


class ListGroups(Handler[int]):
    """Each broker (an item) lists the groups it coordinates, filtered by state and type."""

    what = "list groups"

    def __init__(self, states: Iterable[GroupState], types: Iterable[GroupType]) -> None:
        self.states = sorted({s.value for s in states})
        self.types = sorted({t.value for t in types})

    def describe(self, key: int) -> str:
        return f"broker {key}"

    def requests(self, target: Target, keys: Sequence[int]) -> list[Call[int]]:
        states, types = self.states, self.types

        def build(version: int) -> ListGroupsRequest:
            if states and version < _STATES_FILTER_VERSION:
                raise UnsupportedVersionError(
                    f"ListGroups v{version} cannot filter by state (needs v4, Kafka 2.6)"
                )
            return ListGroupsRequest(
                states_filter=states if version >= _STATES_FILTER_VERSION else [],
                types_filter=types if version >= _TYPES_FILTER_VERSION else [],
            )

        return [Call(Versioned(ApiKey.LIST_GROUPS, build), (k,)) for k in keys]

    def on_response(
        self, call: Call[int], target: Target, response: Any
    ) -> Mapping[int, ItemResult]:
        assert isinstance(response, ListGroupsResponse)
        (broker,) = call.keys
        code = int(response.error_code)
        outcome = for_code(code, f"list groups on broker {broker}", moved=NOTHING_MOVES)
        if outcome is not None:
            return {broker: outcome}
        listings = [_listing(g) for g in response.groups]
        if self.types:  # brokers before v5 list classic groups only, and cannot filter by type
            listings = [g for g in listings if g.type is not None and g.type.value in self.types]
        return {broker: Done(tuple(listings))}


def _listing(group: Any) -> GroupListing:
    state = GroupState.parse(group.group_state) if group.group_state else None
    kind = GroupType.parse(group.group_type) if group.group_type else GroupType.CLASSIC
    return GroupListing(str(group.group_id), str(group.protocol_type), state, kind)


class DeleteGroups(Handler[str]):
    """Delete groups (only empty ones can be), batched per coordinator."""

    what = "delete groups"

    def describe(self, key: str) -> str:
        return f"group {key!r}"

    def requests(self, target: Target, keys: Sequence[str]) -> list[Call[str]]:
        return [Call(DeleteGroupsRequest(groups_names=list(keys)), tuple(keys))]

    def on_response(
        self, call: Call[str], target: Target, response: Any
    ) -> Mapping[str, ItemResult]:
        assert isinstance(response, DeleteGroupsResponse)
        out: dict[str, ItemResult] = {}
        for r in response.results:
            group = str(r.group_id)
            code = int(r.error_code)
            what = f"delete group {group!r}"
            out[group] = for_code(code, what, moved=COORDINATOR_MOVED) or Done(None)
        return out


__all__ = [
    "DeleteGroups",
    "GroupListing",
    "GroupState",
    "GroupType",
    "ListGroups",
]
