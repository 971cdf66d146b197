"""The one contract between a sans-IO state machine and whatever drives it.

Every machine that talks to brokers (the fetcher, transactions, group membership classic and
KIP-848, share groups) speaks it, h11 style:

* **inputs**, each with an explicit `now`: the responses and failures of requests it asked for
  (`on_response(sent, response, now)`, `on_failure(sent, error, now)`), the time passing
  (`next_actions(now)`), and the application's calls (machine-specific methods, also with `now`);
* **outputs**: `next_actions(now)` returns what to do now — `SendRequest`s (a request for a
  `Target`), `RefreshMetadata` and events for the application — and `next_deadline()` says when
  to ask again: None while the machine waits for an input (an answer, an application call),
  never a time already past while there is nothing it can do. `CoordinatorMoved` tells the
  driver that a `Coordinator` target must be looked up again.

After every input the driver calls `next_actions(now)` at once, so what a response causes comes
out with it. The machine never calls back into its driver and the driver never reads the
machine's internals: everything crosses as values. A `SendRequest` object is its own
correlation handle: the driver hands the very same object back with the response or failure.
Operation ids (`Completed`, `Failed`) come from `next_op()`, unique across every machine of the
process.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass
from enum import IntEnum
from typing import Any, Final, Generic, NoReturn, Protocol, TypeVar

from krafka.errors import KrafkaError
from krafka.protocol.schema import Request
from krafka.sansio.connection import Priority

R = TypeVar("R")


@dataclass(frozen=True, slots=True)
class AnyBroker:
    """Any reachable broker (the least loaded connection)."""


@dataclass(frozen=True, slots=True)
class Broker:
    """Broker `node_id`; `host`/`port` when the machine learned them itself (FindCoordinator)."""

    node_id: int
    host: str | None = None
    port: int | None = None


@dataclass(frozen=True, slots=True)
class LeaderOf:
    """The current leader of one partition (the driver resolves it through metadata)."""

    topic: str
    partition: int


class CoordinatorType(IntEnum):
    """FindCoordinator's key type."""

    GROUP = 0
    TRANSACTION = 1
    SHARE = 2


@dataclass(frozen=True, slots=True)
class Coordinator:
    """The coordinator of `key` (a group id, a transactional id, a share group id): the driver
    finds it (FindCoordinator), follows it when it moves, and talks to it on a connection of its
    own, so coordinator traffic never queues behind a long-poll Fetch (as Java's)."""

    key: str
    key_type: CoordinatorType = CoordinatorType.GROUP


Target = AnyBroker | Broker | LeaderOf | Coordinator


@dataclass(frozen=True, slots=True)
class CoordinatorMoved:
    """An answer from the coordinator of `key` said it is not the coordinator any more
    (NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE), possibly where the driver cannot see it (a
    per-partition or per-group code): the driver looks the coordinator up again before the next
    request to `Coordinator(key, key_type)` (Java's markCoordinatorUnknown)."""

    key: str
    key_type: CoordinatorType = CoordinatorType.GROUP


@dataclass(frozen=True, slots=True)
class RefreshMetadata:
    """Ask the driver for fresh metadata about `topics` (None: every topic of the cluster, for
    a pattern subscription). The one way a machine asks; the answer arrives through the
    metadata view the machine was given (and a `metadata_updated(now)` input where it has one).
    """

    topics: frozenset[str] | None = None


_OPS: Final = itertools.count(1)


def next_op() -> int:
    """A new operation id, unique among every machine of the process."""
    return next(_OPS)


@dataclass(frozen=True, slots=True)
class Versioned(Generic[R]):
    """A request whose body depends on the negotiated version (FindCoordinator's batching).

    The driver picks the version for `api_key` on the chosen connection and calls `build`.
    """

    api_key: int
    build: Callable[[int], Request[R]]

    @property
    def API_KEY(self) -> int:
        return self.api_key


@dataclass(frozen=True, slots=True, eq=False)
class SendRequest(Generic[R]):
    """Send `request` to `target` and report the outcome back with this very object.

    `timeout` overrides the request timeout (JoinGroup waits up to the rebalance timeout);
    `priority` None means by API (heartbeats and coordinator lookups go first, on the control
    lane); `max_version` caps negotiation when the machine only speaks older versions;
    `min_version` refuses (UnsupportedVersionError, nothing sent) a broker offering less.
    """

    target: Target
    request: Request[R] | Versioned[R]
    timeout: float | None = None
    priority: Priority | None = None
    max_version: int | None = None
    min_version: int | None = None

    @property
    def api_key(self) -> int:
        return self.request.API_KEY


@dataclass(frozen=True, slots=True)
class Completed:
    """Application operation `op` (an id a machine method returned) finished with `value`."""

    op: int
    value: Any = None

    def result(self) -> Any:
        """`value` (as `Failed.result` raises: one call for either outcome)."""
        return self.value


@dataclass(frozen=True, slots=True)
class Failed:
    """Application operation `op` failed with `error`."""

    op: int
    error: KrafkaError

    def result(self) -> NoReturn:
        """Raises `error` (as `Completed.result` returns the value)."""
        raise self.error


class Machine(Protocol):
    """What a driver needs of any coordinator-facing (or broker-facing) sans-IO machine."""

    def next_actions(self, now: float) -> list[Any]:
        """Everything to do at `now`: `SendRequest`s and events, in order. Drains them."""
        ...

    def on_response(self, sent: SendRequest[Any], response: Any, now: float) -> None:
        """The response to a request this machine asked for."""
        ...

    def on_failure(self, sent: SendRequest[Any], error: KrafkaError, now: float) -> None:
        """That request got no response: connection lost, timed out, or refused locally."""
        ...

    def next_deadline(self) -> float | None:
        """When `next_actions` has something to do even if nothing arrives (None: no timer)."""
        ...


__all__ = [
    "AnyBroker",
    "Broker",
    "Completed",
    "Coordinator",
    "CoordinatorMoved",
    "CoordinatorType",
    "Failed",
    "LeaderOf",
    "Machine",
    "RefreshMetadata",
    "SendRequest",
    "Target",
    "Versioned",
    "next_op",
]
