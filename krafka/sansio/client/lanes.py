"""Lanes: which of a broker's connections a request takes.

Kafka answers the requests of one connection in order, so a request waits for every request
sent before it on its connection. Each broker therefore gets up to three kinds of connection:

* DATA (up to `connections_per_broker`): Produce, Fetch, ListOffsets, admin requests;
* CONTROL (one): Metadata, FindCoordinator, classic heartbeats, ApiVersions - short requests
  that must not wait behind a large Produce, a long-poll Fetch or a JoinGroup held for a
  rebalance;
* COORDINATOR (one): the requests only a coordinator answers (commits, offset fetches, joins,
  KIP-848 and share heartbeats, transaction markers), as Java's coordinator connection, so a
  commit never waits behind a long-poll Fetch.
"""

from __future__ import annotations

from enum import Enum
from typing import Final

from krafka.protocol import ApiKey
from krafka.sansio.connection import Priority


class Lane(Enum):
    DATA = "data"
    CONTROL = "control"
    COORDINATOR = "coordinator"

    @property
    def shared(self) -> bool:
        """Several connections may serve it (`connections_per_broker`)."""
        return self is Lane.DATA


#: Requests that take the control lane and the HIGH priority queue.
HIGH_PRIORITY_APIS: Final = frozenset(
    {ApiKey.METADATA, ApiKey.FIND_COORDINATOR, ApiKey.HEARTBEAT, ApiKey.API_VERSIONS}
)
#: Requests only a coordinator answers: the coordinator lane (a classic Heartbeat stays on the
#: control lane: it must not wait behind a JoinGroup the broker holds for a rebalance).
COORDINATOR_APIS: Final = frozenset(
    {
        ApiKey.OFFSET_COMMIT,
        ApiKey.OFFSET_FETCH,
        ApiKey.OFFSET_DELETE,
        ApiKey.JOIN_GROUP,
        ApiKey.SYNC_GROUP,
        ApiKey.LEAVE_GROUP,
        ApiKey.DESCRIBE_GROUPS,
        ApiKey.DELETE_GROUPS,
        ApiKey.CONSUMER_GROUP_HEARTBEAT,
        ApiKey.CONSUMER_GROUP_DESCRIBE,
        ApiKey.SHARE_GROUP_HEARTBEAT,
        ApiKey.SHARE_GROUP_DESCRIBE,
        ApiKey.ADD_PARTITIONS_TO_TXN,
        ApiKey.ADD_OFFSETS_TO_TXN,
        ApiKey.END_TXN,
        ApiKey.TXN_OFFSET_COMMIT,
    }
)
#: Read-only requests that are safe to resend after a connection dropped.
RETRY_SAFE_APIS: Final = frozenset(
    {
        ApiKey.METADATA,
        ApiKey.FIND_COORDINATOR,
        ApiKey.FETCH,
        ApiKey.LIST_OFFSETS,
        ApiKey.OFFSET_FETCH,
        ApiKey.API_VERSIONS,
        ApiKey.DESCRIBE_CONFIGS,
        ApiKey.DESCRIBE_GROUPS,
        ApiKey.LIST_GROUPS,
        ApiKey.DESCRIBE_CLUSTER,
    }
)
#: Requests whose order on the wire matters: always one connection per broker, in call order.
ORDERED_APIS: Final = frozenset({ApiKey.PRODUCE})


def priority_for(api_key: int, priority: Priority | None) -> Priority:
    """A request's own `priority` if given, else HIGH for the control APIs."""
    if priority is not None:
        return priority
    return Priority.HIGH if api_key in HIGH_PRIORITY_APIS else Priority.NORMAL


def lane_of(api_key: int, priority: Priority) -> Lane:
    """Coordinator requests their own lane, HIGH priority the control lane, the rest DATA."""
    if api_key in COORDINATOR_APIS:
        return Lane.COORDINATOR
    return Lane.CONTROL if priority is Priority.HIGH else Lane.DATA


__all__ = [
    "COORDINATOR_APIS",
    "HIGH_PRIORITY_APIS",
    "ORDERED_APIS",
    "RETRY_SAFE_APIS",
    "Lane",
    "lane_of",
    "priority_for",
]
