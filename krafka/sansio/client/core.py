"""`ClientCore`: everything above one broker connection, without I/O (see the package guide)."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from krafka.errors import (
    InvalidStateError,
    KafkaConnectionError,
    KafkaTimeoutError,
    KrafkaError,
    UnsupportedVersionError,
    error_for_code,
)
from krafka.protocol import ApiKey
from krafka.protocol.error_codes import ErrorCode
from krafka.protocol.schema import Struct
from krafka.sansio.actions import (
    AnyBroker,
    Broker,
    Coordinator,
    CoordinatorMoved,
    LeaderOf,
    Machine,
    RefreshMetadata,
    SendRequest,
    Versioned,
)
from krafka.sansio.client.config import ClientConfig
from krafka.sansio.client.coordinators import Coordinators
from krafka.sansio.client.events import (
    Authenticated,
    CoordinatorFound,
    CoordinatorNotFound,
    MachineEvent,
    MachineStopped,
    RequestDone,
    RequestError,
    Want,
)
from krafka.sansio.client.lanes import (
    ORDERED_APIS,
    RETRY_SAFE_APIS,
    Lane,
    lane_of,
    priority_for,
)
from krafka.sansio.client.links import Address, Link, Links, LinkState, located
from krafka.sansio.client.observer import LinkObserver
from krafka.sansio.client.routed import Routed, Waiting
from krafka.sansio.client.stats import ConnectionStats
from krafka.sansio.codes import COORDINATOR_MOVED_CODES
from krafka.sansio.connection import BrokerConnection, ConnectionState, Priority
from krafka.sansio.events import (
    Authenticated as ConnectionAuthenticated,
)
from krafka.sansio.events import (
    ConnectionClosed,
    ConnectionReady,
    Event,
    RequestFailed,
    ResponseReceived,
)
from krafka.sansio.framing import SIZE_PREFIX
from krafka.sansio.metadata import (
    ClusterMetadata,
    MetadataFailed,
    MetadataMachine,
    MetadataUpdated,
    Rebootstrapped,
)

#: What `_run` acts on besides `SendRequest`; anything else is an event for the embedder.
_CORE_ACTIONS = (CoordinatorMoved, RefreshMetadata, MetadataUpdated, MetadataFailed, Rebootstrapped)

#: Link states before READY: the link's own time (backoff end, setup limit) or a waiting
#: request's deadline is what comes next.
_SETTING_UP = (LinkState.WAITING, LinkState.CONNECTING, LinkState.HANDSHAKING)


class ClientCore:
    """Connections, routing, versions, metadata and machines of one client, sans-IO."""

    def __init__(
        self,
        config: ClientConfig,
        *,
        now: float = 0.0,
        rand: Callable[[], float] = random.random,
    ) -> None:
        self.config = config
        self.metadata = MetadataMachine(
            config.bootstrap,
            config.metadata,
            allow_auto_topic_creation=config.allow_auto_topic_creation,
            now=now,
            rand=rand,
            request_timeout=config.request_timeout,
            reconnect_wait=lambda address, at: self._links.reconnect_wait(address, at),
        )
        self._rand = rand
        self._links = Links(config, rand)
        self._coordinators = Coordinators(config.coordinator_backoff, rand)
        self._machines: list[Machine] = []
        self._members: set[int] = set()
        self._parked: list[Routed] = []
        self._resends: list[Routed] = []
        self._events: list[Any] = []
        self._stirred = False
        self._closed = False
        self._now = now
        self._observer = LinkObserver(lambda: self.metadata.cluster)

    # -- the embedder's API ---------------------------------------------------------------------

    @property
    def cluster(self) -> ClusterMetadata:
        """The read-only metadata view machines look leaders and partitions up in."""
        return self.metadata.cluster

    def add(self, machine: Machine) -> None:
        """Run `machine` (its requests are routed, its answers handed back, its events
        returned by `step`) until `remove(machine)`."""
        if id(machine) not in self._members:
            self._machines.append(machine)
            self._members.add(id(machine))
            self._stirred = True

    def remove(self, machine: Machine) -> None:
        """Stop running `machine`; answers to its requests still under way are dropped."""
        if id(machine) in self._members:
            self._members.discard(id(machine))
            self._machines.remove(machine)

    def send(self, sent: SendRequest[Any], now: float) -> None:
        """Send a request of the embedder's own; its outcome comes from `step` as
        `RequestDone(sent, response)` or `RequestError(sent, error)`."""
        self._now = now
        self._submit(sent, None, now)

    def refresh_metadata(
        self,
        topics: Iterable[str] | None,
        now: float,
        *,
        all_topics: bool = False,
        timeout: float | None = None,
    ) -> int:
        """Ask for a metadata refresh (see `MetadataMachine.request`), within `timeout` seconds
        when given; returns the round whose `MetadataUpdated` / `MetadataFailed` answers it."""
        self._stirred = True
        return self.metadata.request(topics, now, all_topics=all_topics, timeout=timeout)

    def update_seed_brokers(self, servers: Sequence[tuple[str, int]]) -> None:
        """Replace the bootstrap servers the next KIP-899 rebootstrap starts from."""
        self.metadata.update_bootstrap(servers)

    def find_coordinator(self, coordinator: Coordinator, now: float) -> Broker | None:
        """The coordinator's broker if known; otherwise it is looked up (with backoff) until
        `CoordinatorFound` or, for an error retrying cannot fix, `CoordinatorNotFound`."""
        found = self._coordinators.target(coordinator)
        if found is None:
            self._coordinators.want(coordinator)
            self._stirred = True
        return found

    def coordinator_error(self, coordinator: Coordinator) -> KrafkaError | None:
        """The last error looking `coordinator` up (None: none, or found since)."""
        return self._coordinators.link(coordinator).last_error

    def forget_coordinator(self, coordinator: Coordinator) -> None:
        """`coordinator` moved (an answer said so): look it up again before the next request."""
        self._coordinators.link(coordinator).mark_unknown()

    def note_use(self, topic: str, now: float) -> None:
        """`topic` is in use: keep its metadata refreshed."""
        self._stirred = True
        self.metadata.note_use(topic, now)

    def report_error(self, code: int, topic: str | None = None) -> None:
        """A response carried `code` (stale metadata, REBOOTSTRAP_REQUIRED, a moved
        coordinator): refresh, rebootstrap, or look coordinators up again."""
        self._stirred = True
        self.metadata.on_error(code, topic)
        if code in COORDINATOR_MOVED_CODES:
            self._coordinators.forget_all()

    def step(self, now: float) -> list[Any]:
        """Expire what is due, run every machine (again while answers or routing gave them
        new input), route their requests; returns the events since the last step: each event
        a machine emitted as `MachineEvent(machine, event)`, the core's own as they are."""
        self._now = now
        if self._closed:
            return self._step_closed(now)
        self._expire(now)
        self._stirred = True
        while self._stirred:
            self._stirred = False
            self._run(self.metadata, now)
            for machine in list(self._machines):
                if id(machine) in self._members:
                    self._run(machine, now)
            for sent in self._coordinators.lookups(now):
                self._submit(sent, None, now, lookup=True)
        self._links.due(now)
        events, self._events = self._events, []
        return events

    def _step_closed(self, now: float) -> list[Any]:
        """Once closed: the machines run once more (what they ask for fails at once, so they
        can settle their operations); no metadata, no timers."""
        for machine in list(self._machines):
            self._run(machine, now)
        events, self._events = self._events, []
        return events

    def connections_wanted(self) -> list[Want]:
        """Sockets to open (`OpenConnection`) and to close (`CloseConnection`), drained."""
        wanted, self._links.wanted = self._links.wanted, []
        return wanted

    def connection_made(self, conn_id: int, now: float) -> None:
        """The transport of `conn_id` is up (TCP, and TLS if any)."""
        link = self._links.by_id.get(conn_id)
        if link is None or link.state is not LinkState.CONNECTING:
            return
        link.state = LinkState.HANDSHAKING
        link.machine = BrokerConnection(self.config.connection_config(link.address[0]), now=now)
        self._observer.made(link, now)

    def connection_failed(self, conn_id: int, error: KrafkaError, now: float) -> None:
        """Opening `conn_id` failed (refused, unreachable, TLS, too slow)."""
        link = self._links.by_id.get(conn_id)
        if link is not None and link.state is LinkState.CONNECTING:
            self._setup_failed(link, error, now)

    def connection_lost(self, conn_id: int, error: KrafkaError, now: float) -> None:
        """The transport of `conn_id` broke (reset, TLS error, a failed write)."""
        link = self._links.by_id.get(conn_id)
        if link is None:
            return
        if link.machine is None:
            self.connection_failed(conn_id, error, now)
            return
        self._handle(link, link.machine.connection_lost(error), now)

    def receive_data(self, conn_id: int, data: bytes | bytearray | memoryview, now: float) -> None:
        """Bytes read from `conn_id`; `b""` when the peer closed it."""
        link = self._links.by_id.get(conn_id)
        if link is None or link.machine is None:
            return
        link.last_active = now
        self._observer.read(link, len(data), now)
        self._handle(link, link.machine.receive_data(data, now), now)

    def receive_frames(self, conn_id: int, payloads: list[bytes | bytearray], now: float) -> None:
        """Whole frames read from `conn_id` by a transport that splits them itself (their
        payloads, without size prefixes)."""
        link = self._links.by_id.get(conn_id)
        if link is None or link.machine is None:
            return
        link.last_active = now
        self._observer.read(link, sum(len(p) for p in payloads) + SIZE_PREFIX * len(payloads), now)
        self._handle(link, link.machine.receive_frames(payloads, now), now)

    def data_to_send(self, conn_id: int) -> bytes:
        """Bytes to write to `conn_id` now (possibly none)."""
        link = self._links.by_id.get(conn_id)
        if link is None or link.machine is None:
            return b""
        data = link.machine.data_to_send()
        if data:
            self._observer.written(link, len(data))
        return data

    def has_data_to_send(self, conn_id: int) -> bool:
        """Whether `data_to_send(conn_id)` has bytes now (a driver wakes only those writers)."""
        link = self._links.by_id.get(conn_id)
        return link is not None and link.machine is not None and link.machine.has_data_to_send

    def writes_pending(self) -> bool:
        """Whether any connection has bytes its writer has not taken yet."""
        return any(
            link.machine is not None and link.machine.has_data_to_send
            for link in self._links.by_id.values()
        )

    def next_deadline(self) -> float | None:
        """When `step` has something to do if nothing else happens (None: nothing timed, and
        always once closed)."""
        if self._closed:
            return None
        due = self._machines_deadline(self.metadata.next_deadline())
        for link in self._links.by_id.values():
            at = self._link_deadline(link)
            if at is not None and (due is None or at < due):
                due = at
        if self._parked or self._resends:
            due = self._routed_deadline(due)
        at = self._coordinators.next_deadline()
        return at if at is not None and (due is None or at < due) else due

    def _machines_deadline(self, due: float | None) -> float | None:
        """The earliest of `due` and the machines' deadlines."""
        for machine in list(self._machines):
            try:
                at = machine.next_deadline()
            except Exception as exc:
                self._crashed(machine, exc)
                at = self._now  # its MachineStopped waits in the next step
            if at is not None and (due is None or at < due):
                due = at
        return due

    def _routed_deadline(self, due: float | None) -> float | None:
        """The earliest of `due` and the core's own waiting requests' times (metadata, a
        loading coordinator's resend)."""
        for routed in self._parked:
            if due is None or routed.deadline < due:
                due = routed.deadline
        for routed in self._resends:
            if due is None or routed.resend_at < due:
                due = routed.resend_at
        return due

    def close(self, now: float) -> None:
        """Fail every request, close every connection (the embedder closes the sockets)."""
        self._closed = True
        closed = KafkaConnectionError("client closed")
        waiting = self._parked + self._resends + self._coordinators.drain()
        self._parked, self._resends = [], []
        for link in self._links:
            waiting += link.waiting
            link.waiting.clear()
            self._close_link(link, now)
        for routed in waiting:
            self._fail(routed, closed, now)

    # -- inspection -----------------------------------------------------------------------------

    @property
    def stats(self) -> ConnectionStats:
        """Per-connection metrics (Java's connection group and node metrics)."""
        return self._observer.stats

    def connections(self, lane: Lane | None = None) -> list[BrokerConnection]:
        """The ready connections' state machines (for tests and metrics)."""
        return [x.machine for x in self._links.ready(lane) if x.machine is not None]

    def negotiated_version(self, api_key: int, address: Address | None = None) -> int | None:
        """The version `api_key` requests use on a ready connection (to `address`), or None
        while there is none; raises `UnsupportedVersionError` if the broker lacks the API."""
        for link in self._links.ready():
            if (address is None or link.address == address) and link.machine is not None:
                return link.machine.version_for(api_key)
        return None

    # -- machines -------------------------------------------------------------------------------

    def _run(self, machine: Machine, now: float) -> None:
        try:
            actions = machine.next_actions(now)
        except Exception as exc:
            self._crashed(machine, exc)
            return
        for action in actions:
            if isinstance(action, SendRequest):
                self._submit(action, machine, now)
            elif isinstance(action, _CORE_ACTIONS):
                self._act(action, now)
            elif machine is self.metadata:
                self._events.append(action)
            else:
                self._events.append(MachineEvent(machine, action))

    def _act(self, action: Any, now: float) -> None:
        """One of the `_CORE_ACTIONS` a machine returned."""
        if isinstance(action, CoordinatorMoved):
            self.forget_coordinator(Coordinator(action.key, action.key_type))
        elif isinstance(action, RefreshMetadata):
            self._refresh_for(action, now)
        elif isinstance(action, MetadataUpdated):
            self._metadata_answered(action.round, None, now)
            self._events.append(action)
        elif isinstance(action, MetadataFailed):
            self._metadata_answered(action.round, action.error, now)
            self._events.append(action)
        elif isinstance(action, Rebootstrapped):
            self._rebootstrapped(action, now)
            self._events.append(action)

    def _refresh_for(self, action: RefreshMetadata, now: float) -> None:
        """A machine's `RefreshMetadata`: the metadata machine runs again in this step only if
        a round may start now (one under way, or backoff, answers it later). A machine asking
        at every step (waiting for a leader) must not keep the step running for ever."""
        everything = action.topics is None
        self.metadata.request(action.topics, now, all_topics=everything)
        due = self.metadata.next_deadline()
        if due is not None and due <= now:
            self._stirred = True

    def _crashed(self, machine: Machine, exc: Exception) -> None:
        if machine is self.metadata:
            raise exc
        self.remove(machine)
        error = KrafkaError(f"{type(machine).__name__} raised {exc!r}")
        error.__cause__ = exc
        self._events.append(MachineStopped(machine, error))

    def _deliver(self, routed: Routed, response: Any, now: float) -> None:
        owner = routed.owner
        if routed.lookup:
            self._lookup_answered(routed.sent, response, None, now)
        elif owner is None:
            self._events.append(RequestDone(routed.sent, response))
        elif id(owner) in self._members or owner is self.metadata:
            self._stirred = True
            try:
                owner.on_response(routed.sent, response, now)
            except Exception as exc:
                self._crashed(owner, exc)

    def _fail(self, routed: Routed, error: KrafkaError, now: float) -> None:
        owner = routed.owner
        if routed.lookup:
            self._lookup_answered(routed.sent, None, error, now)
        elif owner is None:
            self._events.append(RequestError(routed.sent, error))
        elif id(owner) in self._members or owner is self.metadata:
            self._stirred = True
            try:
                owner.on_failure(routed.sent, error, now)
            except Exception as exc:
                self._crashed(owner, exc)

    # -- routing --------------------------------------------------------------------------------

    def _submit(
        self, sent: SendRequest[Any], owner: Machine | None, now: float, *, lookup: bool = False
    ) -> None:
        api_key = sent.api_key
        priority = priority_for(api_key, sent.priority)
        retries = self.config.retries if api_key in RETRY_SAFE_APIS else 0
        timeout = self.config.request_timeout if sent.timeout is None else sent.timeout
        routed = Routed(sent, owner, priority, now + timeout, retries, api_key, lookup=lookup)
        if self._closed:
            self._fail(routed, InvalidStateError("client is closed"), now)
            return
        self._route(routed, now)

    def _route(self, routed: Routed, now: float) -> None:
        routed.waiting = Waiting.NOTHING
        target = routed.sent.target
        if isinstance(target, Broker):
            address: Address | None = self._broker_address(target)
        elif isinstance(target, AnyBroker):
            self._to_any(routed, now)
            return
        elif isinstance(target, Coordinator):
            found = self._coordinators.target(target)
            if found is None:
                self._coordinators.park(target, routed)
                self._stirred = True
                return
            address = (str(found.host), int(found.port or 0))
        else:
            address = self._leader_address(target, routed, now)
        if address is None:
            self._wait_for_metadata(routed, now)
            return
        self._to_address(routed, address, lane_of(routed.api_key, routed.priority), now)

    def _to_any(self, routed: Routed, now: float) -> None:
        lane = lane_of(routed.api_key, routed.priority)
        ordered = routed.api_key in ORDERED_APIS
        live = self._links.ready(lane)
        if live and not ordered:
            self._enqueue(min(live, key=lambda x: x.load), routed, now)
            return
        addresses = [(h, p) for _, h, p in self.cluster.addresses()]
        index = int(self._rand() * len(addresses)) % len(addresses)
        address = min(addresses) if ordered else addresses[index]
        self._to_address(routed, address, lane, now)

    def _to_address(self, routed: Routed, address: Address, lane: Lane, now: float) -> None:
        ordered = routed.api_key in ORDERED_APIS
        try:
            link = self._links.choose(address, lane, ordered, now)
        except KrafkaError as exc:
            self._fail(routed, exc, now)
            return
        self._enqueue(link, routed, now)

    def _broker_address(self, target: Broker) -> Address | None:
        if target.host is not None and target.port is not None:
            return (target.host, target.port)
        broker = self.cluster.broker(target.node_id)
        return None if broker is None else broker.address

    def _leader_address(self, target: LeaderOf, routed: Routed, now: float) -> Address | None:
        self.metadata.note_use(target.topic, now)
        node = self.cluster.leader(target.topic, target.partition)
        broker = None if node is None else self.cluster.broker(node)
        return None if broker is None else broker.address

    def _enqueue(self, link: Link, routed: Routed, now: float) -> None:
        if link.ready:
            self._put_on(link, routed, now)
        else:
            routed.waiting = Waiting.CONNECTION
            link.waiting.append(routed)

    def _put_on(self, link: Link, routed: Routed, now: float) -> None:
        """Queue `routed` on a ready link, built for the version negotiated there."""
        conn = link.machine
        assert conn is not None
        sent = routed.sent
        try:
            body, version = _build(sent, routed.api_key, conn, link)
            cid = conn.send_request(
                body, now, timeout=sent.timeout, version=version, priority=routed.priority
            )
        except KrafkaError as exc:
            self._fail(routed, exc, now)
            return
        routed.waiting = Waiting.NOTHING
        routed.link = link
        link.in_flight[cid] = routed
        link.last_active = now
        self._observer.sent(link, cid, routed.api_key, version, conn.request_size, now)
        self._handle(link, conn.drain_events(), now)

    # -- waiting for metadata -------------------------------------------------------------------

    def _wait_for_metadata(self, routed: Routed, now: float) -> None:
        target = routed.sent.target
        topics = [target.topic] if isinstance(target, LeaderOf) else []
        routed.round = self.metadata.request(topics, now)
        routed.waiting = Waiting.METADATA
        self._parked.append(routed)
        self._stirred = True

    def _metadata_answered(self, round: int, error: KrafkaError | None, now: float) -> None:
        decided = [r for r in self._parked if r.round <= round]
        self._parked = [r for r in self._parked if r.round > round]
        for routed in decided:
            if error is not None:
                self._fail(routed, error, now)
                continue
            final = self._unroutable(routed)
            if final is not None:
                self._fail(routed, final, now)
            else:
                self._route(routed, now)
        for machine in list(self._machines):  # a failed round too: they look, and ask again
            updated = getattr(machine, "metadata_updated", None)
            if updated is not None:
                self._stirred = True
                try:
                    updated(now)
                except Exception as exc:
                    self._crashed(machine, exc)

    def _unroutable(self, routed: Routed) -> KrafkaError | None:
        """Why a request that waited for metadata cannot wait any longer, if it cannot."""
        target = routed.sent.target
        cluster = self.cluster
        if isinstance(target, Broker):
            if cluster.broker(target.node_id) is None:
                return KafkaConnectionError(
                    f"broker {target.node_id} is not in the cluster metadata"
                )
            return None
        assert isinstance(target, LeaderOf)
        topic = target.topic
        code = cluster.topic_errors.get(topic, ErrorCode.NONE)
        if code == ErrorCode.NONE or cluster.topic_pending(topic):
            return None
        if code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION:
            if self.config.allow_auto_topic_creation:
                return None
            return _no_leader(cluster, target)
        return error_for_code(code, f"metadata for topic {topic!r}")

    def _rebootstrapped(self, event: Rebootstrapped, now: float) -> None:
        """KIP-899: drop the old brokers' connections; coordinators are looked up again."""
        for address in event.addresses:
            for link in self._links.forget_address(address):
                self._close_link(link, now)
        self._coordinators.forget_all()

    # -- connection events ----------------------------------------------------------------------

    def _handle(self, link: Link, events: list[Event], now: float) -> None:
        for event in events:
            if isinstance(event, ConnectionClosed):  # first: no retry may pick this link
                self._observer.closed(link, event.error, now)
                self._closed_link(link, event.error, now)
        for event in events:
            if isinstance(event, ResponseReceived):
                self._observer.answered(link, event, now)
                routed = link.in_flight.pop(event.correlation_id, None)
                if routed is not None:
                    self._answered(routed, event.response, now)
            elif isinstance(event, RequestFailed):
                self._observer.failed(link, event, now)
                routed = link.in_flight.pop(event.correlation_id, None)
                if routed is not None:
                    self._request_failed(routed, located(event.error, link.where), now)
            elif isinstance(event, ConnectionReady):
                self._observer.ready(link)
                self._ready(link, now)
            elif isinstance(event, ConnectionAuthenticated):
                self._observer.stats.authenticated(event.reauthentication)
                self._events.append(
                    Authenticated(
                        link.where,
                        event.mechanism,
                        event.session_lifetime_ms,
                        event.reauthentication,
                    )
                )

    def _ready(self, link: Link, now: float) -> None:
        self._links.succeeded(link, now)
        waiting = list(link.waiting)
        link.waiting.clear()
        for routed in waiting:
            self._put_on(link, routed, now)

    def _closed_link(self, link: Link, error: KrafkaError | None, now: float) -> None:
        if link.state is LinkState.HANDSHAKING:
            error = _setup_error(link, error, self.config)
            self._setup_failed(link, error, now)
            return
        self._links.close(link, abort=error is not None)

    def _close_link(self, link: Link, now: float) -> None:
        """Close a link on the core's own decision (idle, rebootstrap)."""
        waiting = list(link.waiting)
        link.waiting.clear()
        self._links.close(link, abort=False)
        if link.machine is not None and not link.machine.closed:
            self._handle(link, link.machine.close(), now)
        for routed in waiting:
            self._route(routed, now)

    def _setup_failed(self, link: Link, error: KrafkaError, now: float) -> None:
        error = located(error, link.where)
        if self._links.setup_failed(link, error, now) is not None:
            return
        waiting = list(link.waiting)
        link.waiting.clear()
        for routed in waiting:
            fallback = self._links.fallback(link.address, link.lane)
            if fallback is not None:
                self._put_on(fallback, routed, now)
            else:
                self._fail(routed, error, now)

    # -- answers --------------------------------------------------------------------------------

    def _answered(self, routed: Routed, response: Any, now: float) -> None:
        target = routed.sent.target
        top = 0 if type(response) in _NO_TOP_CODE else _top_code(response)
        if top == ErrorCode.REBOOTSTRAP_REQUIRED:
            self.report_error(top)
        if isinstance(target, Coordinator) and now < routed.deadline:
            code = self._coordinators.on_code(target, top)
            if code == ErrorCode.COORDINATOR_LOAD_IN_PROGRESS:
                self._resend_later(routed, now)
                return
            if code is not None:
                self._route(routed, now)
                return
        self._deliver(routed, response, now)

    def _request_failed(self, routed: Routed, error: KrafkaError, now: float) -> None:
        lost = isinstance(error, KafkaConnectionError) and not self._closed
        target = routed.sent.target
        if lost and isinstance(target, Coordinator) and now < routed.deadline:
            self._coordinators.moved(target)
            self._route(routed, now)
        elif lost and routed.retries > 0:
            routed.retries -= 1
            self._route(routed, now)
        else:
            self._fail(routed, error, now)

    def _resend_later(self, routed: Routed, now: float) -> None:
        routed.loading += 1
        routed.waiting = Waiting.BACKOFF
        routed.resend_at = now + self.config.coordinator_backoff.delay(routed.loading, self._rand)
        self._resends.append(routed)

    def _lookup_answered(
        self, sent: SendRequest[Any], response: Any, error: KrafkaError | None, now: float
    ) -> None:
        self._stirred = True
        coordinator, ready, failed = self._coordinators.answered(sent, response, error, now)
        broker = self._coordinators.target(coordinator)
        if broker is not None:
            self._events.append(CoordinatorFound(coordinator, broker))
        else:
            fatal = self._coordinators.link(coordinator).fatal_error()
            if fatal is not None:
                self._events.append(CoordinatorNotFound(coordinator, fatal))
        for routed in ready:
            self._route(routed, now)
        for routed, reason in failed:
            self._fail(routed, reason, now)

    # -- time -----------------------------------------------------------------------------------

    def _expire(self, now: float) -> None:
        for link in self._links:
            self._expire_link(link, now)
        if self._parked:
            self._expire_parked(now)
        if self._resends:
            self._resend_due(now)
        for routed, error in self._coordinators.expired(now):
            self._fail(routed, error, now)

    def _expire_parked(self, now: float) -> None:
        late = [r for r in self._parked if r.deadline <= now]
        if late:
            self._parked = [r for r in self._parked if r.deadline > now]
            for routed in late:
                self._fail(routed, self._metadata_timeout(routed), now)

    def _resend_due(self, now: float) -> None:
        due = [r for r in self._resends if r.resend_at <= now]
        if due:
            self._resends = [r for r in self._resends if r.resend_at > now]
            for routed in due:
                self._route(routed, now)

    def _expire_link(self, link: Link, now: float) -> None:
        state = link.state
        if state in (LinkState.CONNECTING, LinkState.HANDSHAKING) and now >= link.give_up_at:
            limit = link.give_up_at - link.since
            self._setup_failed(link, _setup_timeout(link, link.where, limit, self.config.tls), now)
            return
        if state is not LinkState.READY and link.waiting:
            self._expire_waiting(link, now)
            if link.state is LinkState.CLOSED:
                return
        machine = link.machine
        if machine is None or machine.state is ConnectionState.CLOSED:
            return
        deadline = machine.next_deadline()
        if deadline is not None and deadline <= now:
            self._handle(link, machine.handle_timeout(now), now)
        idle = self.config.connections_max_idle
        if idle and link.ready and machine.load == 0 and now - link.last_active > idle:
            self._close_link(link, now)

    def _expire_waiting(self, link: Link, now: float) -> None:
        """Requests whose own timeout ended while their connection was being set up fail,
        naming the broker and the step it did not complete; a setup nobody waits for any more
        is given up (a silent peer is not kept until `connect_timeout`)."""
        late = [r for r in link.waiting if r.deadline <= now]
        if not late:
            return
        for routed in late:
            link.waiting.remove(routed)
        if not link.waiting and not link.in_flight:
            self._links.abandon(link, now)
        for routed in late:
            where = _where(link, routed)
            limit = self._timeout_of(routed)
            self._fail(routed, _setup_timeout(link, where, limit, self.config.tls), now)

    def _timeout_of(self, routed: Routed) -> float:
        timeout = routed.sent.timeout
        return self.config.request_timeout if timeout is None else timeout

    def _link_deadline(self, link: Link) -> float | None:
        state = link.state
        if state in _SETTING_UP:
            due = link.since if state is LinkState.WAITING else link.give_up_at
            for routed in link.waiting:
                if routed.deadline < due:
                    due = routed.deadline
            return due
        machine = link.machine
        if machine is None:
            return None
        deadline = machine.next_deadline()
        idle = self.config.connections_max_idle
        if idle and machine.load == 0:
            close_at = link.last_active + idle
            deadline = close_at if deadline is None else min(deadline, close_at)
        return deadline

    def _metadata_timeout(self, routed: Routed) -> KrafkaError:
        target = routed.sent.target
        if isinstance(target, LeaderOf):
            return _no_leader(self.cluster, target)
        assert isinstance(target, Broker)
        return KafkaConnectionError(f"broker {target.node_id} is not in the cluster metadata")


def _build(
    sent: SendRequest[Any], api_key: int, conn: BrokerConnection, link: Link
) -> tuple[Any, int | None]:
    """The request body for this connection's negotiated version (`Versioned`, version bounds);
    an API or version the broker lacks raises `UnsupportedVersionError`."""
    if sent.min_version is not None:
        offered = conn.version_for(api_key)
        if offered < sent.min_version:
            raise UnsupportedVersionError(
                f"{ApiKey(api_key).name} needs v{sent.min_version}+ but {link.where} offers "
                f"v{offered} at most"
            )
    body = sent.request
    if sent.max_version is None and not isinstance(body, Versioned):
        return body, None
    version = conn.version_for(api_key)
    if sent.max_version is not None:
        version = min(version, sent.max_version)
    if isinstance(body, Versioned):
        return body.build(version), version
    return body, version


#: Message classes without a top-level `error_code` (Produce, Fetch): learnt from the first
#: answer, so later ones skip the failed attribute lookup (a raised AttributeError each).
_NO_TOP_CODE: set[type] = set()


def _top_code(response: Any) -> int:
    """The answer's top-level error code (0: none)."""
    try:
        code = response.error_code
    except AttributeError:
        if isinstance(response, Struct):  # its fields are its class's: none of them is it
            _NO_TOP_CODE.add(type(response))
        return 0
    return int(code or 0)


def _no_leader(cluster: ClusterMetadata, target: LeaderOf) -> KrafkaError:
    known = bool(cluster.topics.get(target.topic))
    code = ErrorCode.LEADER_NOT_AVAILABLE if known else ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    return error_for_code(code, f"no leader known for {target.topic}-{target.partition}")


def _setup_timeout(link: Link, where: str, limit: float, tls: bool) -> KrafkaError:
    """A connection to `where` not ready within `limit` seconds: the step it was at."""
    if link.state is LinkState.WAITING:
        return KafkaTimeoutError(
            f"no connection to {where} within {limit:.3g}s (its reconnect backoff lasted longer)"
        )
    if link.state is LinkState.CONNECTING:
        hint = " (TLS included: is it a TLS listener?)" if tls else ""
        return KafkaTimeoutError(f"connecting to {where} took longer than {limit:.3g}s{hint}")
    return _silent(link, where, f"{limit:.3g}s")


def _silent(link: Link, where: str, within: str) -> KrafkaError:
    """A peer that accepted the connection but did not answer the handshake in time."""
    machine = link.machine
    step = "the ApiVersions handshake"
    if machine is not None and machine.state.name == "AUTHENTICATING":
        step = "SASL authentication"
    return KafkaTimeoutError(
        f"{where} accepted the connection but {step} did not complete within "
        f"{within}: is it a Kafka listener, and does it expect TLS?"
    )


def _where(link: Link, routed: Routed) -> str:
    """The link's address, with the broker's node id when the request names one."""
    target = routed.sent.target
    if isinstance(target, Broker) and target.node_id >= 0:
        return f"{link.where} (node {target.node_id})"
    return link.where


def _setup_error(link: Link, error: KrafkaError | None, config: ClientConfig) -> KrafkaError:
    if isinstance(error, KafkaTimeoutError):  # a handshake request went unanswered
        within = f"request_timeout={config.request_timeout:.3g}s"
        return _silent(link, link.where, within)
    error = error or KafkaConnectionError(f"connection to {link.where} failed")
    if type(error) is KafkaConnectionError and config.tls:
        return KafkaConnectionError(
            f"{error} before the Kafka handshake completed; over TLS this usually means the "
            "broker rejected the client certificate (mTLS) or does not speak TLS"
        )
    return error


__all__ = ["ClientCore", "Priority"]
