"""What a `ClientCore` tells its embedder: sockets to open or close, and events.

`connections_wanted()` returns `OpenConnection` / `CloseConnection`; `step(now)` returns the
machines' events (outcomes, records ready, rebalances ...), each wrapped in
`MachineEvent(machine, event)` naming the machine that emitted it, plus the core's own:
`RequestDone` / `RequestError` for requests the embedder sent itself (`core.send`),
`CoordinatorFound` / `CoordinatorNotFound` (`core.find_coordinator`), `MetadataUpdated`,
`MetadataFailed`, `Rebootstrapped`, `Authenticated` and `MachineStopped`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from krafka.errors import KrafkaError
from krafka.sansio.actions import Broker, Coordinator, Machine, SendRequest
from krafka.sansio.metadata import MetadataFailed, MetadataUpdated, Rebootstrapped


@dataclass(frozen=True, slots=True)
class OpenConnection:
    """Open a byte stream to `host:port` (TCP, TLS if configured) within `timeout` seconds,
    then report `connection_made(conn_id, now)` or `connection_failed(conn_id, error, now)`."""

    conn_id: int
    host: str
    port: int
    timeout: float


@dataclass(frozen=True, slots=True)
class CloseConnection:
    """Close connection `conn_id`. `abort`: the core gave up on it (a request timed out, the
    handshake failed): reset it (SO_LINGER 0) so bytes still queued never reach the broker."""

    conn_id: int
    abort: bool


@dataclass(frozen=True, slots=True)
class RequestDone:
    """The response to a request the embedder sent with `core.send(sent, now)`."""

    sent: SendRequest[Any]
    response: Any


@dataclass(frozen=True, slots=True)
class RequestError:
    """A request the embedder sent got no response: `error` says why."""

    sent: SendRequest[Any]
    error: KrafkaError


@dataclass(frozen=True, slots=True)
class MachineEvent:
    """`event` (an outcome, records ready, a rebalance step ...) emitted by `machine`: a
    client running several machines (a consumer and its telemetry, admin operations side by
    side) hands each event to whoever owns its machine."""

    machine: Machine
    event: Any


@dataclass(frozen=True, slots=True)
class MachineStopped:
    """`machine` raised; the core dropped it (its requests' answers are discarded)."""

    machine: Machine
    error: KrafkaError


@dataclass(frozen=True, slots=True)
class CoordinatorFound:
    """A lookup asked for with `find_coordinator` found `broker`."""

    coordinator: Coordinator
    broker: Broker


@dataclass(frozen=True, slots=True)
class CoordinatorNotFound:
    """A lookup asked for with `find_coordinator` failed for good (`error` is not retriable)."""

    coordinator: Coordinator
    error: KrafkaError


@dataclass(frozen=True, slots=True)
class Authenticated:
    """A connection to `address` (re-)authenticated with SASL `mechanism` (KIP-368)."""

    address: str
    mechanism: str
    session_lifetime_ms: int
    reauthentication: bool


Want = OpenConnection | CloseConnection

__all__ = [
    "Authenticated",
    "CloseConnection",
    "CoordinatorFound",
    "CoordinatorNotFound",
    "MachineEvent",
    "MachineStopped",
    "MetadataFailed",
    "MetadataUpdated",
    "OpenConnection",
    "Rebootstrapped",
    "RequestDone",
    "RequestError",
    "Want",
]
