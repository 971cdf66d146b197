"""`Routed`: one request on its way through a `ClientCore`, from the machine (or embedder)
that asked for it to the connection that carries it, and back."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, Any

from krafka.sansio.actions import Machine, SendRequest
from krafka.sansio.connection import Priority

if TYPE_CHECKING:
    from krafka.sansio.client.links import Link


class Waiting(Enum):
    """What a request not yet on a connection waits for."""

    NOTHING = "nothing"
    METADATA = "metadata"  # a partition's leader or a broker's address
    COORDINATOR = "coordinator"  # FindCoordinator
    CONNECTION = "connection"  # its connection's setup
    BACKOFF = "backoff"  # a coordinator that was loading


@dataclass(slots=True, eq=False)
class Routed:
    """`sent` and its bookkeeping; `owner` None means the embedder's own request (or, with
    `lookup`, a FindCoordinator the core sends for its `Coordinator` targets)."""

    sent: SendRequest[Any]
    owner: Machine | None
    priority: Priority
    #: When waiting for a leader, a coordinator or a loading coordinator gives up.
    deadline: float
    #: Resends left after its connection dropped (read-only APIs only).
    retries: int
    #: `sent.api_key`, read once (routing looks at it at every step).
    api_key: int
    lookup: bool = False
    waiting: Waiting = Waiting.NOTHING
    #: The metadata round whose outcome decides a request waiting for metadata.
    round: int = 0
    #: Coordinator answers that said "loading" so far (spaces the resends).
    loading: int = 0
    resend_at: float = 0.0
    link: Link | None = None


__all__ = ["Routed", "Waiting"]
