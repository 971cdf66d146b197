"""The low-level Kafka client: send any protocol request to the right broker, on anyio.

    async with KafkaClient("127.0.0.1:9092", ssl_context=create_ssl_context(cafile),
                           sasl_mechanism="SCRAM-SHA-256", sasl_username="u",
                           sasl_password="p") as client:
        meta = await client.refresh_metadata(["orders"])          # ClusterMetadata
        response = await client.send(MetadataRequest(topics=[]))   # any broker
        response = await client.send(request, node_id=1, timeout=5.0)
        response = await client.send_to_leader("orders", 0, produce_request)
        response = await client.send_to_coordinator("my-group", heartbeat_request)
        broker = await client.find_coordinator("my-group")        # BrokerInfo
        response = await client.execute(send_request)              # a sans-IO machine's action
        leader = await client.leader_for("orders", 0)              # BrokerInfo
        version = await client.api_version(ApiKey.FETCH, node_id)  # build the request for it
        client.report_error(error_code, "orders")                  # stale metadata -> refresh
        client.touch_topics(["orders"])                            # keep refreshing a topic
    # leaving the block closes every connection (bounded: `await client.close(timeout=5)`)

`client.metadata` is the live `krafka.sansio.metadata.ClusterMetadata` (brokers, racks,
partitions, leaders, leader epochs, topic ids). `send*` take a generated request
(`krafka.protocol.messages`, typed `Request[R]`) and return its decoded response `R` (None for
a Produce with acks=0); `execute` carries out a sans-IO machine's `SendRequest` (its target
resolved to a broker, a partition leader, or any broker). Produce requests to one broker always
share one connection, written in call order, so an idempotent producer's batches arrive in the
order it sent them whatever `connections_per_broker` is.
The version is the highest both sides support unless `version=` or `max_version=` says
otherwise; an API the broker does not advertise raises
`UnsupportedVersionError` without sending anything. Response error codes are the caller's to
interpret; report stale-metadata codes with `report_error(code, topic)` so metadata refreshes.

`socks5_proxy="socks5://[user:pass@]host:port"` sends every connection (bootstrap and brokers)
through a SOCKS5 proxy (`krafka.io.socks5`; TLS runs inside it, checking the broker's name).

The client is the anyio driver of one sans-IO `krafka.sansio.client.ClientCore`, which decides
everything above the socket: routing of every target, lanes (`connections_per_broker` data
connections, a control lane for metadata, coordinator lookups and heartbeats, a coordinator
lane so a commit never waits behind a long-polling Fetch), coordinator lookup and following,
version negotiation, reconnect backoff, idle connections (`connections_max_idle`), resending
read-only requests whose connection dropped, and metadata refresh on age, on demand and on
stale errors, with KIP-899 rebootstrap after all brokers were unreachable for
`rebootstrap_trigger` seconds or on REBOOTSTRAP_REQUIRED. The client keeps only transport
(`krafka.io.sockets`: TCP, TLS, SOCKS5, one reader task per socket) and one loop that steps the
core at its deadline; every input (bytes read, an application call) steps it at once. The
engines of the clients built on it (producer, consumer, share consumer, admin calls, telemetry)
run in that same loop: `attach(machine, on_event, on_stopped)` adds one to the core, whose
`MachineEvent`s then reach `on_event` (`krafka.io.attached` adds operation outcomes). One
clock: `anyio.current_time()`. `KafkaClient.from_config` takes Java/librdkafka properties
(`krafka.config`); `start()` and `close()` may be called from different tasks
(`krafka.io.host.TaskHost`).
"""

from __future__ import annotations

import itertools
import logging
import math
import ssl
from collections.abc import Callable, Coroutine, Iterable, Mapping, Sequence
from types import TracebackType
from typing import Any, TypeVar

import anyio
import anyio.abc
import anyio.lowlevel

from krafka.errors import (
    ConfigError,
    InvalidStateError,
    KafkaTimeoutError,
    KrafkaError,
    error_for_code,
)
from krafka.io.alarm import Alarm
from krafka.io.clock import loop_clock, loop_time
from krafka.io.host import TaskHost
from krafka.io.msk_iam import msk_iam_factory
from krafka.io.sockets import Sockets
from krafka.io.socks5 import Socks5Proxy, parse_socks5_proxy
from krafka.io.transport import TransportConfig
from krafka.protocol.error_codes import ErrorCode
from krafka.protocol.messages import ApiVersionsRequest
from krafka.protocol.schema import Request
from krafka.sansio.actions import (
    AnyBroker,
    Broker,
    Coordinator,
    LeaderOf,
    Machine,
    SendRequest,
    Versioned,
)
from krafka.sansio.backoff import Backoff, BackoffPolicy
from krafka.sansio.client import (
    Authenticated,
    ClientConfig,
    ClientCore,
    CoordinatorFound,
    CoordinatorNotFound,
    Lane,
    MachineEvent,
    MachineStopped,
    MetadataFailed,
    MetadataUpdated,
    Rebootstrapped,
    RequestDone,
    RequestError,
)
from krafka.sansio.client.stats import ConnectionMetrics
from krafka.sansio.codes import COORDINATOR_MOVED_CODES
from krafka.sansio.connection import BrokerConnection, Priority
from krafka.sansio.coordinator import DEFAULT_COORDINATOR_BACKOFF, CoordinatorType
from krafka.sansio.metadata import BrokerInfo, ClusterMetadata, MetadataConfig, parse_bootstrap
from krafka.sansio.sasl import SaslMechanism, TokenProvider, mechanism_factory
from krafka.sansio.sasl.msk_iam import MECHANISM as MSK_IAM
from krafka.sansio.secret import Secret

log = logging.getLogger(__name__)
R = TypeVar("R")
#: Scheduling rounds `send_pending` yields at most (trio runs a round's tasks in either
#: order: a writer woken with the caller may run after it in the first).
_WRITER_ROUNDS = 3


class _Answer:
    """The outcome of one request handed to the core, awaited by its caller."""

    __slots__ = ("done", "error", "response", "sent")

    def __init__(self, sent: SendRequest[Any]) -> None:
        self.sent = sent
        self.done = anyio.Event()
        self.response: Any = None
        self.error: KrafkaError | None = None


class KafkaClient:
    """Connections, metadata and request routing for one cluster. Use as `async with`."""

    def __init__(
        self,
        bootstrap_servers: str | Sequence[str],
        *,
        client_id: str = "krafka",
        ssl_context: ssl.SSLContext | None = None,
        server_hostname: str | None = None,
        sasl: Callable[[], SaslMechanism] | None = None,
        sasl_mechanism: str | None = None,
        sasl_username: str | None = None,
        sasl_password: str | Secret | None = None,
        sasl_oauth_token_provider: TokenProvider | None = None,
        sasl_scram_token_auth: bool = False,
        sasl_aws_region: str | None = None,
        sasl_aws_profile: str | None = None,
        connections_per_broker: int = 1,
        max_in_flight: int = 5,
        request_timeout: float = 30.0,
        connect_timeout: float = 10.0,
        reconnect_backoff: BackoffPolicy | None = None,
        retries: int = 2,
        metadata_max_age: float = 300.0,
        metadata_topic_idle_ttl: float = 300.0,
        metadata_recovery_strategy: str = "rebootstrap",
        rebootstrap_trigger: float = 300.0,
        allow_auto_topic_creation: bool = True,
        connections_max_idle: float | None = None,
        socks5_proxy: str | Secret | Socks5Proxy | None = None,
        enable_metrics_push: bool = True,
    ) -> None:
        self.bootstrap = parse_bootstrap(bootstrap_servers)
        #: KIP-714: push client metrics when the cluster subscribes to them (Java's
        #: `enable.metrics.push`); the clients built on this one read it.
        self.enable_metrics_push = enable_metrics_push
        self.request_timeout = request_timeout
        self.retries = retries
        self.allow_auto_topic_creation = allow_auto_topic_creation
        if sasl_mechanism is not None and sasl_mechanism.upper() == "PLAIN" and not ssl_context:
            log.warning("SASL PLAIN without TLS sends the password in the clear")
        if sasl is None and sasl_mechanism is not None and sasl_mechanism.upper() == MSK_IAM:
            sasl = msk_iam_factory(sasl_aws_region, sasl_aws_profile)
        if sasl is None and sasl_mechanism is not None:
            sasl = mechanism_factory(
                sasl_mechanism,
                username=sasl_username,
                password=sasl_password,
                token_provider=sasl_oauth_token_provider,
                scram_token_auth=sasl_scram_token_auth,
            )
        self._transport = TransportConfig(
            ssl_context,
            server_hostname,
            connect_timeout,
            None if socks5_proxy is None else parse_socks5_proxy(socks5_proxy),
        )
        self._config = ClientConfig(
            bootstrap_servers=bootstrap_servers,
            client_id=client_id,
            max_in_flight=max_in_flight,
            request_timeout=request_timeout,
            connect_timeout=connect_timeout,
            connections_per_broker=connections_per_broker,
            reconnect_backoff=reconnect_backoff or BackoffPolicy(),
            retries=retries,
            metadata=MetadataConfig(
                max_age=metadata_max_age,
                topic_idle_ttl=metadata_topic_idle_ttl,
                rebootstrap_trigger=rebootstrap_trigger,
                rebootstrap=_recovery(metadata_recovery_strategy),
            ),
            allow_auto_topic_creation=allow_auto_topic_creation,
            connections_max_idle=connections_max_idle,
            sasl=sasl,
            tls=ssl_context is not None,
        )
        self._core = ClientCore(self._config, now=_now())
        self._host = TaskHost("krafka client")
        self._sockets: Sockets | None = None
        self._answers: dict[int, _Answer] = {}
        self._alarm: Alarm | None = None
        self._clock: Callable[[], float] = anyio.current_time
        #: When the core next has something to do (as of the last turn); None: nothing timed.
        self._next_deadline: float | None = None
        self._sleep_until = math.inf
        #: Set (and replaced) whenever metadata or a coordinator changed: waiters look again.
        self._changed = anyio.Event()
        self._metadata_outcomes: dict[int, KrafkaError | None] = {}
        self._metadata_round = 0
        self._last_round_asked = 0
        #: Coordinators whose lookup failed for good, until a caller hears why.
        self._refused: dict[Coordinator, KrafkaError] = {}
        self._refresh_generation = 0
        #: KIP-899 rebootstraps so far.
        self.rebootstraps = 0
        #: Metadata rounds the client ran for its own refreshes.
        self.metadata_requests = 0
        self._closed = False
        #: The machines run in the core: their owners' event and crash handlers.
        self._attached: dict[int, tuple[Callable[[Any], None], Callable[[KrafkaError], None]]] = {}
        self._turning = False
        self._again = False

    @classmethod
    def from_config(cls, config: Mapping[str, Any], **overrides: Any) -> KafkaClient:
        """A client from Java/librdkafka properties (`bootstrap.servers`, `security.protocol`,
        `ssl.*`, `sasl.*`, ...; see `krafka.config`); keyword `overrides` win."""
        from krafka.config import keywords_from_config

        return cls(**{**keywords_from_config(config, "client"), **overrides})

    @property
    def metadata(self) -> ClusterMetadata:
        """The live cluster view (brokers, racks, partitions, leaders, topic ids)."""
        return self._core.cluster

    @property
    def core(self) -> ClientCore:
        """The sans-IO core this client drives (routing, connections, metadata)."""
        return self._core

    def connection_metrics(self) -> ConnectionMetrics:
        """Java's connection and node metrics of this client's connections (any thread)."""
        return self._core.stats.snapshot(loop_time())

    def connections(self, lane: Lane | None = None) -> list[BrokerConnection]:
        """The ready connections (their sans-IO state), on one lane or all."""
        return self._core.connections(lane)

    def local_addresses(self) -> list[Any]:
        """The local (source) address of each open socket (which proxy or port it left by)."""
        return [] if self._sockets is None else self._sockets.local_addresses()

    # -- lifecycle ------------------------------------------------------------------------------

    async def start(self, timeout: float | None = None) -> KafkaClient:
        """Connect to the cluster and fetch metadata (what `async with` does on entry), within
        `timeout` seconds when given (a client's own bound: a producer's `max_block`, ...).

        Background tasks run in the client's own task (`krafka.io.host.TaskHost`), so
        `start` and `close` may be called from different tasks.
        """
        if self._closed:
            raise InvalidStateError("client is closed")
        if self._sockets is not None:
            return self
        await self._host.start()
        self._core.metadata.cluster.now = anyio.current_time()
        self._clock = loop_clock()
        self._alarm = Alarm()
        self._sockets = Sockets(
            self._core, self._transport, self._host.task_group, self._turn, self.wake
        )
        self._host.start_soon(self._drive, name="krafka client loop")
        try:
            await self.refresh_metadata(timeout=timeout)
        except BaseException:
            await self.close(1.0)
            raise
        return self

    async def __aenter__(self) -> KafkaClient:
        return await self.start()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    async def close(self, timeout: float = 5.0) -> None:
        """Close every connection and stop background tasks, within about `timeout` seconds.

        Callable from any task (not only the one that started the client), more than once.
        """
        if self._closed:
            return
        self._closed = True
        deadline = anyio.current_time() + timeout
        self._core.close(anyio.current_time())
        self._turn()
        with anyio.CancelScope(shield=True), anyio.move_on_after(min(timeout, 1.0)):
            while self._sockets is not None and self._sockets.count:
                await anyio.sleep(0.005)
        await self._host.close(max(0.0, deadline - anyio.current_time()))

    # -- the driver -----------------------------------------------------------------------------

    async def _drive(self) -> None:
        """The client's loop: step the core at its deadline or when woken."""
        alarm = self._alarm
        assert alarm is not None
        while not self._closed:
            self._turn()
            deadline = self._next_deadline
            self._sleep_until = math.inf if deadline is None else deadline
            if self._sleep_until > self._clock():
                await alarm.sleep_until(self._sleep_until)
            self._sleep_until = -math.inf

    def _turn(self) -> None:
        """Step the core after an input: hand it what the wires read, hand out its events, open
        and close what it wants, write (or wake the writers); wake the loop if the core's
        deadline moved earlier. A handler that gives the core input while its events are handed
        out has it stepped again after."""
        if self._turning:
            self._again = True
            return
        core, sockets = self._core, self._sockets
        self._turning = True
        try:
            self._again = True
            while self._again:
                self._again = False
                if sockets is not None:
                    sockets.deliver()
                for event in core.step(self._clock()):
                    self._dispatch(event)
        finally:
            self._turning = False
        if sockets is not None:
            sockets.carry_out(core.connections_wanted())
            sockets.kick()
        if not self._closed:
            self._next_deadline = deadline = core.next_deadline()
            if deadline is not None and deadline < self._sleep_until:
                self._wake_loop()

    def _dispatch(self, event: Any) -> None:
        if type(event) is MachineEvent:
            handlers = self._attached.get(id(event.machine))
            if handlers is not None:
                handlers[0](event.event)
        elif isinstance(event, RequestDone | RequestError):
            answer = self._answers.pop(id(event.sent), None)
            if answer is None:
                return
            if isinstance(event, RequestDone):
                answer.response = event.response
            else:
                answer.error = event.error
            answer.done.set()
        elif isinstance(event, MetadataUpdated | MetadataFailed):
            self.metadata_requests += 1
            failed = event.error if isinstance(event, MetadataFailed) else None
            if failed is None:
                self._refresh_generation += 1
            else:
                log.debug("metadata refresh failed: %s", failed)
            self._metadata_outcomes[event.round] = failed
            self._metadata_round = max(self._metadata_round, event.round)
            self._changed_now()
        elif isinstance(event, CoordinatorFound):
            self._refused.pop(event.coordinator, None)
            self._changed_now()
        elif isinstance(event, CoordinatorNotFound):
            self._refused[event.coordinator] = event.error
            self._changed_now()
        elif isinstance(event, Rebootstrapped):
            self.rebootstraps += 1
            seeds = ",".join(f"{h}:{p}" for h, p in self.metadata.bootstrap)
            log.info("rebootstrapping from %s: metadata dropped", seeds)
        elif isinstance(event, Authenticated):
            log.debug(
                "%s to %s with %s (session lifetime %s ms)",
                "re-authenticated" if event.reauthentication else "authenticated",
                event.address,
                event.mechanism,
                event.session_lifetime_ms or "unlimited",
            )
        elif isinstance(event, MachineStopped):
            handlers = self._attached.pop(id(event.machine), None)
            if handlers is None:
                log.error("%s stopped: %s", type(event.machine).__name__, event.error)
            else:
                handlers[1](event.error)

    # -- machines -------------------------------------------------------------------------------

    def attach(
        self,
        machine: Machine,
        on_event: Callable[[Any], None],
        on_stopped: Callable[[KrafkaError], None],
    ) -> None:
        """Run `machine` (a producer or consumer engine, an admin operation, telemetry) in this
        client's core and loop until `detach(machine)`: its requests are routed by the core and
        each event it emits goes to `on_event`, called in the loop's task; if it raises, the
        core drops it and `on_stopped(error)` is called instead. `krafka.io.attached` wraps
        this with operation outcomes."""
        self._check_open()
        self._attached[id(machine)] = (on_event, on_stopped)
        self._core.add(machine)
        self._turn()

    def detach(self, machine: Machine) -> None:
        """Stop running `machine` (answers to its requests still under way are dropped)."""
        self._attached.pop(id(machine), None)
        self._core.remove(machine)

    def wake(self) -> None:
        """A machine has new input (an application call): the loop steps the core soon, in its
        own task (cheap to call per record: once the loop is due to run, or while it runs, a
        call costs one comparison; `step()` steps at once)."""
        if self._turning:
            self._again = True
        elif self._sleep_until != -math.inf:
            self._wake_loop()

    def _wake_loop(self) -> None:
        self._sleep_until = -math.inf
        if self._alarm is not None:
            self._alarm.ring()

    def step(self) -> bool:
        """Step the core now, in the caller's task: what the machines ask for goes out (False:
        the client is not running)."""
        if self._sockets is None or self._closed:
            return False
        self._turn()
        return True

    async def send_pending(self) -> None:
        """Let the writers put what the core has for them on the wire before the caller goes
        on. A task that keeps the loop busy (a consumer handing out the records it just took)
        calls this after stepping an input that asked for requests (the next Fetch): they
        would otherwise wait until it next waits. Shielded checkpoints, one per scheduling
        round until the writers took the bytes (at most `_WRITER_ROUNDS`): never raises a
        cancellation, as its caller may hold records it must not lose."""
        core = self._core
        for _ in range(_WRITER_ROUNDS):
            if self._sockets is None or not core.writes_pending():
                return
            await anyio.lowlevel.cancel_shielded_checkpoint()

    def start_soon(
        self, func: Callable[..., Coroutine[Any, Any, Any]], *args: Any, name: str = ""
    ) -> None:
        """Run `func(*args)` in the client's own task group (cancelled when it closes): the
        clients built on this one have no tasks of their own."""
        self._check_open()
        self._host.start_soon(func, *args, name=name)

    def _changed_now(self) -> None:
        self._changed.set()
        self._changed = anyio.Event()

    def _input(self) -> None:
        """An application call changed the core: run a turn now."""
        if self._sockets is None or self._closed:
            raise InvalidStateError("client is not started or already closed")
        self._turn()

    # -- requests -------------------------------------------------------------------------------

    async def send(
        self,
        request: Request[R] | Versioned[R],
        *,
        node_id: int | None = None,
        timeout: float | None = None,
        version: int | None = None,
        max_version: int | None = None,
        min_version: int | None = None,
        priority: Priority | None = None,
    ) -> R:
        """Send `request` to broker `node_id` (None: any broker) and return its response."""
        target = AnyBroker() if node_id is None else Broker(node_id)
        if version is not None:
            max_version = min_version = version
        sent = SendRequest(target, request, timeout, priority, max_version, min_version)
        response: R = await self._carry(sent)
        return response

    async def execute(self, action: SendRequest[R]) -> R:
        """Carry out a sans-IO machine's `SendRequest`: resolve its target, send, answer."""
        return await self._carry(action)

    async def _carry(self, sent: SendRequest[R]) -> R:
        if id(sent) in self._answers:  # the very same request twice at once: a copy of it
            sent = SendRequest(
                sent.target,
                sent.request,
                sent.timeout,
                sent.priority,
                sent.max_version,
                sent.min_version,
            )
        self._check_open()
        answer = self._answers[id(sent)] = _Answer(sent)
        self._core.send(sent, anyio.current_time())
        self._input()
        try:
            await answer.done.wait()
        finally:
            if not answer.done.is_set():
                self._answers.pop(id(sent), None)
        if answer.error is not None:
            raise answer.error
        response: R = answer.response
        return response

    def _check_open(self) -> None:
        if self._sockets is None or self._closed:
            raise InvalidStateError("client is not started or already closed")

    async def send_to_leader(
        self, topic: str, partition: int, request: Request[R], **kwargs: Any
    ) -> R:
        """Send `request` to the current leader of `topic`/`partition`."""
        version = kwargs.pop("version", None)
        if version is not None:
            kwargs["max_version"] = kwargs["min_version"] = version
        await self.leader_for(topic, partition)
        return await self._carry(SendRequest(LeaderOf(topic, partition), request, **kwargs))

    async def send_to_coordinator(
        self,
        key: str,
        request: Request[R] | Versioned[R],
        *,
        key_type: CoordinatorType = CoordinatorType.GROUP,
        error_codes: Callable[[R], Iterable[int]] | None = None,
        **kwargs: Any,
    ) -> R:
        """Send `request` to the coordinator of `key` (a group id, a transactional id ...).

        The core follows a moved coordinator and waits out one that is loading, on the
        answer's top-level code; `error_codes(response)` lists further codes (per partition)
        to do the same on, bounded by the request timeout. Other codes are the caller's.
        """
        coordinator = Coordinator(key, key_type)
        deadline = anyio.current_time() + self.request_timeout
        loading = Backoff(DEFAULT_COORDINATOR_BACKOFF)
        version = kwargs.pop("version", None)
        if version is not None:
            kwargs["max_version"] = kwargs["min_version"] = version
        while True:
            response: R = await self._carry(SendRequest(coordinator, request, **kwargs))
            if error_codes is None:
                return response
            codes = set(error_codes(response))
            now = anyio.current_time()
            if now >= deadline or not codes & _RESEND_CODES:
                return response
            if codes & COORDINATOR_MOVED_CODES:
                self._core.forget_coordinator(coordinator)
            else:
                await anyio.sleep(max(0.0, loading.failed(now) - now))

    async def find_coordinator(
        self,
        key: str,
        key_type: CoordinatorType = CoordinatorType.GROUP,
        *,
        timeout: float | None = None,
    ) -> BrokerInfo:
        """The coordinator broker for `key` (cached until it moves), looked up by the core."""
        coordinator = Coordinator(key, key_type)
        limit = timeout or self.request_timeout
        with anyio.move_on_after(limit):
            while True:
                self._check_open()
                changed = self._changed
                found = self._core.find_coordinator(coordinator, anyio.current_time())
                if found is not None:
                    assert found.host is not None and found.port is not None
                    return BrokerInfo(found.node_id, found.host, found.port)
                fatal = self._refused.pop(coordinator, None)
                if fatal is not None:
                    raise fatal
                self._turn()
                await changed.wait()
        error = self._core.coordinator_error(coordinator)
        raise KafkaTimeoutError(
            f"no coordinator for {key_type.name.lower()} {key!r} within {limit}s"
            + (f" (last error: {error})" if error else "")
        )

    async def api_version(self, api_key: int, node_id: int | None = None) -> int:
        """The version of `api_key` requests to broker `node_id` will use."""
        address = None
        if node_id is not None:
            broker = self.metadata.broker(node_id)
            if broker is None:
                await self.refresh_metadata()
                broker = self.metadata.broker(node_id)
            address = None if broker is None else broker.address
        version = self._core.negotiated_version(api_key, address)
        if version is None:
            await self.send(ApiVersionsRequest(), node_id=node_id)
            version = self._core.negotiated_version(api_key, address)
        if version is None:
            raise InvalidStateError(f"no connection to broker {node_id} to ask for versions")
        return version

    # -- metadata -------------------------------------------------------------------------------

    async def refresh_metadata(
        self,
        topics: Sequence[str] | None = None,
        *,
        all_topics: bool = False,
        timeout: float | None = None,
    ) -> ClusterMetadata:
        """Refresh now. `topics` are added to the tracked set first (and auto-created if
        the broker allows it); with no topics tracked only brokers are refreshed.
        `all_topics` asks for every topic of the cluster (what a pattern subscription
        matches against). `timeout` bounds the connection setup and the request, together.

        A refresh for topics already asked for waits out the refresh backoff (it grows while
        refreshes keep finding partitions without a leader), and calls made while one is
        under way share it: callers that refresh in a loop cannot flood the cluster.
        """
        wanted = list(topics) if topics else []
        busy = self._core.metadata.round_in_flight
        error = await self._refresh_round(wanted, all_topics, timeout)
        if error is not None and busy is not None and self._last_round_asked == busy:
            error = await self._refresh_round(wanted, all_topics, timeout)  # the shared round began
        if error is not None:  # before the call and failed: one of its own
            raise error
        return self.metadata

    async def _refresh_round(
        self, topics: list[str], all_topics: bool, timeout: float | None
    ) -> KrafkaError | None:
        self._check_open()
        round_ = self._core.refresh_metadata(
            topics, anyio.current_time(), all_topics=all_topics, timeout=timeout
        )
        self._last_round_asked = round_
        self._input()
        while self._metadata_round < round_:
            changed = self._changed
            await changed.wait()
            self._check_open()
        error = self._metadata_outcomes.get(round_)
        self._forget_outcomes()
        return error

    def _forget_outcomes(self) -> None:
        if len(self._metadata_outcomes) > 64:
            keep = self._metadata_round - 32
            self._metadata_outcomes = {r: e for r, e in self._metadata_outcomes.items() if r > keep}

    async def leader_for(
        self, topic: str, partition: int, timeout: float | None = None
    ) -> BrokerInfo:
        """The leader of a partition. While none is known for a retriable reason (a topic being
        created, a leader election) metadata is refreshed with backoff for up to `timeout`
        seconds (default `request_timeout`); a non-retriable answer (an invalid topic name, no
        authorization) raises at once."""
        self._core.note_use(topic, anyio.current_time())
        leader = self.metadata.leader_for(topic, partition)
        if leader is not None:
            return leader
        await self._wait_for_topic(topic, timeout, partition)
        leader = self.metadata.leader_for(topic, partition)
        if leader is None:
            raise error_for_code(
                ErrorCode.LEADER_NOT_AVAILABLE
                if self.metadata.topics.get(topic)
                else ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                f"no leader known for {topic}-{partition}",
            )
        return leader

    async def partitions_for(self, topic: str, timeout: float | None = None) -> list[int]:
        """The partition ids of `topic`; [] when the cluster does not have it.

        A topic being created or getting its leaders (LEADER_NOT_AVAILABLE, or Apache Kafka's
        UNKNOWN_TOPIC_OR_PARTITION to the request that auto-creates it) is asked for again with
        backoff, as Java's `partitionsFor` does, for up to `timeout` (default: the request
        timeout); one still without leaders then raises `KafkaTimeoutError`."""
        meta = self.metadata
        self._core.note_use(topic, anyio.current_time())
        if topic not in meta.topics or meta.topic_pending(topic):
            await self._wait_for_topic(topic, timeout)
        if meta.topic_pending(topic):
            code = ErrorCode(meta.topic_errors[topic])
            limit = self.request_timeout if timeout is None else timeout
            raise KafkaTimeoutError(f"topic {topic!r} still {code.name} after {limit}s")
        return meta.partitions_for(topic)

    async def _wait_for_topic(
        self, topic: str, timeout: float | None, partition: int | None = None
    ) -> None:
        """Refresh until `topic` (and `partition`'s leader) is known, the answer says it will not
        be (absent, or a non-retriable error: raised), or `timeout` passes."""
        deadline = anyio.current_time() + (self.request_timeout if timeout is None else timeout)
        backoff = BackoffPolicy(initial=0.05, maximum=1.0, max_retries=None)
        for attempt in itertools.count(1):
            await self.refresh_metadata([topic])
            meta = self.metadata
            settled = topic in meta.topics and not meta.topic_pending(topic)
            if settled and (partition is None or meta.leader_for(topic, partition) is not None):
                return
            if not self._worth_waiting(topic):
                return
            pause = backoff.delay(attempt)
            if anyio.current_time() + pause >= deadline:
                return
            await anyio.sleep(pause)

    def _worth_waiting(self, topic: str) -> bool:
        """Will asking again about a topic that has no leader known help? Raises the answer's
        error when it is final (an invalid name, no authorization)."""
        meta = self.metadata
        code = meta.topic_errors.get(topic, ErrorCode.NONE)
        if code == ErrorCode.NONE or meta.topic_pending(topic):
            return True  # described without a leader, or being created
        if code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION:
            return self.allow_auto_topic_creation  # Apache Kafka's answer while creating it
        raise error_for_code(code, f"metadata for topic {topic!r}")

    def touch_topics(self, topics: Sequence[str]) -> None:
        """Mark topics as in use, so their metadata stays refreshed (idle ones expire after
        `metadata_topic_idle_ttl`); `leader_for` and `partitions_for` do this themselves."""
        now = anyio.current_time()
        for topic in topics:
            self._core.note_use(topic, now)
        if self._sockets is not None and not self._closed:
            self._turn()

    def update_seed_brokers(self, servers: str | Sequence[str]) -> None:
        """Replace the bootstrap servers with `servers` (`"h1:9092,h2:9092"` or a list): the
        next rebootstrap (KIP-899) starts from them. Known brokers keep being used until then."""
        self.bootstrap = parse_bootstrap(servers)
        self._core.update_seed_brokers(self.bootstrap)

    def report_error(self, code: int, topic: str | None = None) -> None:
        """Tell the client a response carried `code` (stale metadata, REBOOTSTRAP_REQUIRED)."""
        self._core.report_error(code, topic)
        if self._sockets is not None and not self._closed:
            self._turn()


#: Codes inside a coordinator's answer that send it again (moved, or still loading).
_RESEND_CODES: frozenset[int] = COORDINATOR_MOVED_CODES | {ErrorCode.COORDINATOR_LOAD_IN_PROGRESS}


def _now() -> float:
    """The loop's clock when constructed on it, else 0 (`start` sets the clock)."""
    try:
        return anyio.current_time()
    except Exception:
        return 0.0


def _recovery(strategy: str) -> bool:
    """`metadata_recovery_strategy` (KIP-899): "rebootstrap" or "none"."""
    if strategy not in ("rebootstrap", "none"):
        raise ConfigError(
            f"metadata_recovery_strategy is 'rebootstrap' or 'none', not {strategy!r}"
        )
    return strategy == "rebootstrap"
