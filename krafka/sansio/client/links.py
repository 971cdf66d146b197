"""The connections of a `ClientCore`: one `Link` per socket, grouped per broker address and lane.

A link is wanted (WAITING for its address's reconnect backoff), then CONNECTING (the embedder
opens the transport), HANDSHAKING (ApiVersions, SASL), READY, and finally CLOSED. Requests
for a link that is not ready wait on it and go out in order once it is. Setup is bounded by
`connect_timeout`: a retriable failure is retried with exponential backoff and jitter within
it; a refusal (bad credentials, an untrusted certificate) is not, and while the backoff lasts
a new request to that address fails at once with the same error instead of reconnecting.
"""

from __future__ import annotations

import itertools
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from enum import Enum

from krafka.errors import AuthenticationError, KafkaTimeoutError, KrafkaError
from krafka.sansio.backoff import Backoff
from krafka.sansio.client.config import ClientConfig
from krafka.sansio.client.events import CloseConnection, OpenConnection, Want
from krafka.sansio.client.lanes import Lane
from krafka.sansio.client.routed import Routed
from krafka.sansio.connection import BrokerConnection

Address = tuple[str, int]


class LinkState(Enum):
    WAITING = "waiting"
    CONNECTING = "connecting"
    HANDSHAKING = "handshaking"
    READY = "ready"
    CLOSED = "closed"


#: States in which the embedder holds a socket for the link.
_OPEN = frozenset({LinkState.CONNECTING, LinkState.HANDSHAKING, LinkState.READY})


@dataclass(slots=True, eq=False)
class Link:
    """One connection (socket) to one broker address, on one lane."""

    conn_id: int
    address: Address
    lane: Lane
    state: LinkState
    #: WAITING: when to open; CONNECTING/HANDSHAKING: when this attempt started.
    since: float
    #: The setup (with its reconnect attempts) fails past this time.
    give_up_at: float
    machine: BrokerConnection | None = None
    waiting: deque[Routed] = field(default_factory=deque)
    in_flight: dict[int, Routed] = field(default_factory=dict)
    last_active: float = 0.0

    @property
    def where(self) -> str:
        return f"{self.address[0]}:{self.address[1]}"

    @property
    def load(self) -> int:
        machine = self.machine
        if machine is not None and self.state is LinkState.READY:
            return machine.load
        return len(self.waiting)

    @property
    def ready(self) -> bool:
        return self.state is LinkState.READY


@dataclass(slots=True)
class _Bucket:
    backoff: Backoff
    #: The last setup's non-retriable error, raised again at once while the backoff lasts.
    refusal: KrafkaError | None = None
    lanes: dict[Lane, list[Link]] = field(default_factory=dict)


class Links:
    """Every link of one core, and the choice of link for a request."""

    def __init__(self, config: ClientConfig, rand: Callable[[], float]) -> None:
        self._config = config
        self._rand = rand
        self._ids = itertools.count(1)
        self._buckets: dict[Address, _Bucket] = {}
        self.by_id: dict[int, Link] = {}
        self.wanted: list[Want] = []

    def __iter__(self) -> Iterator[Link]:
        return iter(list(self.by_id.values()))

    def ready(self, lane: Lane | None = None) -> list[Link]:
        """Ready links, on one lane or on all."""
        return [
            link
            for link in self.by_id.values()
            if link.ready and (lane is None or link.lane == lane)
        ]

    # -- choosing -------------------------------------------------------------------------------

    def choose(self, address: Address, lane: Lane, ordered: bool, now: float) -> Link:
        """The link a request to `address` on `lane` goes to, opening one if needed.

        `ordered` always answers the lane's first link (requests through it keep their order).
        Otherwise an idle ready link, else a new one while the lane has room, else the least
        loaded. Raises the address's refusal while its backoff lasts."""
        bucket = self._bucket(address)
        links = bucket.lanes.setdefault(lane, [])
        if links and ordered:
            return links[0]
        if links and not ordered:
            best = min(links, key=_load_order)
            limit = self._config.connections_per_broker if lane.shared else 1
            if (best.ready and best.load == 0) or len(links) >= limit:
                return best
        return self._open(bucket, address, lane, now)

    def fallback(self, address: Address, lane: Lane) -> Link | None:
        """The least loaded ready link to `address` on `lane` (when a new one failed)."""
        bucket = self._buckets.get(address)
        links = [] if bucket is None else [x for x in bucket.lanes.get(lane, ()) if x.ready]
        return min(links, key=lambda x: x.load, default=None)

    def _open(self, bucket: _Bucket, address: Address, lane: Lane, now: float) -> Link:
        backoff = bucket.backoff
        if backoff.wait_time(now) > 0 and bucket.refusal is not None:
            raise again(bucket.refusal)
        start = max(now, backoff.retry_at)
        link = Link(
            next(self._ids),
            address,
            lane,
            LinkState.WAITING,
            since=start,
            give_up_at=start + self._config.connect_timeout,
        )
        bucket.lanes[lane].append(link)
        self.by_id[link.conn_id] = link
        return link

    # -- lifecycle ------------------------------------------------------------------------------

    def due(self, now: float) -> None:
        """Waiting links whose backoff ended: ask the embedder to open them."""
        for link in self.by_id.values():
            if link.state is LinkState.WAITING and link.since <= now:
                link.state = LinkState.CONNECTING
                link.since = now
                timeout = max(0.0, link.give_up_at - now)
                self.wanted.append(OpenConnection(link.conn_id, *link.address, timeout))

    def succeeded(self, link: Link, now: float) -> None:
        bucket = self._bucket(link.address)
        bucket.backoff.succeeded()
        bucket.refusal = None
        link.state = LinkState.READY
        link.last_active = now

    def setup_failed(self, link: Link, error: KrafkaError, now: float) -> Link | None:
        """A link failed before it was ready. Returns the link trying again (it takes over the
        waiting requests) when the error is retriable and time is left, else None."""
        self.close(link, abort=True)
        bucket = self._bucket(link.address)
        retry_at = bucket.backoff.failed(now, self._rand)
        bucket.refusal = None if error.retriable else error
        if not error.retriable or bucket.backoff.exhausted or retry_at >= link.give_up_at:
            return None
        retry = Link(
            next(self._ids),
            link.address,
            link.lane,
            LinkState.WAITING,
            since=retry_at,
            give_up_at=link.give_up_at,
            waiting=link.waiting,
        )
        link.waiting = deque()
        bucket.lanes.setdefault(link.lane, []).append(retry)
        self.by_id[retry.conn_id] = retry
        return retry

    def close(self, link: Link, *, abort: bool) -> None:
        """Forget `link`; the embedder closes its socket if it has one."""
        if link.state is LinkState.CLOSED:
            return
        if link.state in _OPEN:
            self.wanted.append(CloseConnection(link.conn_id, abort))
        link.state = LinkState.CLOSED
        self.by_id.pop(link.conn_id, None)
        bucket = self._buckets.get(link.address)
        if bucket is not None:
            lane = bucket.lanes.get(link.lane)
            if lane is not None and link in lane:
                lane.remove(link)

    def reconnect_wait(self, address: Address, now: float) -> float:
        """Seconds before `address` may be connected to again (0: a link to it is ready, or
        no failure holds it back)."""
        bucket = self._buckets.get(address)
        if bucket is None or any(x.ready for lane in bucket.lanes.values() for x in lane):
            return 0.0
        return bucket.backoff.wait_time(now)

    def abandon(self, link: Link, now: float) -> None:
        """Give up a link still being set up that no request waits for any more (they ran
        out of time): closed, and its address backs off as after a failed setup."""
        self.close(link, abort=True)
        self._bucket(link.address).backoff.failed(now, self._rand)

    def forget_address(self, address: Address) -> list[Link]:
        """Drop an address with its backoff (KIP-899 rebootstrap); returns its links."""
        bucket = self._buckets.pop(address, None)
        return [] if bucket is None else [x for lane in bucket.lanes.values() for x in lane]

    def _bucket(self, address: Address) -> _Bucket:
        bucket = self._buckets.get(address)
        if bucket is None:
            bucket = self._buckets[address] = _Bucket(Backoff(self._config.reconnect_backoff))
        return bucket


def _load_order(link: Link) -> tuple[int, int]:
    """Ready links first among equally loaded ones."""
    return (link.load, 0 if link.ready else 1)


def again(refusal: KrafkaError) -> KrafkaError:
    """The refusal once more: a broker that refused this client is not asked again before its
    backoff ends, and the caller learns why at once instead of waiting for it (as Java)."""
    try:
        error = type(refusal)(str(refusal))
    except TypeError:  # an error class with other arguments: the same one again
        return refusal
    error.__cause__ = refusal.__cause__
    return error


def located(error: KrafkaError, where: str) -> KrafkaError:
    """An authentication error (from the SASL exchange, which knows no addresses) naming the
    broker that refused; a request timeout naming the broker that did not answer."""
    if isinstance(error, AuthenticationError | KafkaTimeoutError) and where not in str(error):
        result = type(error)(f"{where}: {error}")
        result.__cause__ = error.__cause__
        return result
    return error


__all__ = ["Address", "Link", "LinkState", "Links", "again", "located"]
