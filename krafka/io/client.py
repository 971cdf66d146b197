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
Connections are pooled per broker (`connections_per_broker` data connections, a control lane for
metadata, coordinator lookups and heartbeats, and a coordinator lane for what only a group or
transaction coordinator answers, so a commit never waits behind a long-polling Fetch), reconnect
with exponential backoff and jitter, close after `connections_max_idle` seconds without a
request (when set), and requests of read-only APIs are retried on a fresh connection when one
drops. `KafkaClient.from_config` takes Java/librdkafka properties (`krafka.config`); `start()`
and `close()` may be called from different tasks (`krafka.io.host.TaskHost`). Metadata refreshes
in the background on age and on demand; after all brokers were unreachable for
`rebootstrap_trigger` seconds, or on REBOOTSTRAP_REQUIRED, the client rebootstraps (KIP-899).
"""

from __future__ import annotations

import copy
import itertools
import logging
import random
import ssl
from collections.abc import Callable, Iterable, Mapping, Sequence
from types import TracebackType
from typing import Any, Final, TypeVar

import anyio

from krafka.errors import (
    ConfigError,
    InvalidStateError,
    KafkaConnectionError,
    KafkaTimeoutError,
    KrafkaError,
    error_for_code,
)
from krafka.io.connection import Connection
from krafka.io.host import TaskHost
from krafka.io.msk_iam import msk_iam_factory
from krafka.io.pool import ConnectionPool, Lane
from krafka.io.socks5 import Socks5Proxy, parse_socks5_proxy
from krafka.io.transport import TransportConfig
from krafka.protocol import ApiKey
from krafka.protocol.error_codes import ErrorCode
from krafka.protocol.messages import MetadataRequest, MetadataResponse
from krafka.protocol.schema import Request
from krafka.sansio.actions import AnyBroker, Coordinator, LeaderOf, SendRequest, Versioned
from krafka.sansio.backoff import Backoff, BackoffPolicy
from krafka.sansio.codes import COORDINATOR_MOVED_CODES
from krafka.sansio.connection import ConnectionConfig, Priority
from krafka.sansio.coordinator import (
    DEFAULT_COORDINATOR_BACKOFF,
    CoordinatorDisposition,
    CoordinatorLink,
    CoordinatorType,
)
from krafka.sansio.metadata import (
    BrokerInfo,
    ClusterMetadata,
    MetadataConfig,
    RefreshReason,
    parse_bootstrap,
)
from krafka.sansio.sasl import SaslMechanism, TokenProvider, mechanism_factory
from krafka.sansio.sasl.msk_iam import MECHANISM as MSK_IAM
from krafka.sansio.secret import Secret

log = logging.getLogger(__name__)
R = TypeVar("R")

#: Requests that take the control lane and the HIGH priority queue.
HIGH_PRIORITY_APIS: Final = frozenset(
    {
        ApiKey.METADATA,
        ApiKey.FIND_COORDINATOR,
        ApiKey.HEARTBEAT,
        ApiKey.API_VERSIONS,
    }
)
#: Requests only a coordinator answers (group, transaction, share group): they take the
#: coordinator lane, a connection of their own to the coordinator, as Java's coordinator
#: connection, so a commit never waits behind a long-polling Fetch. A classic Heartbeat stays
#: on the control lane: it must not wait behind a JoinGroup the broker holds for a rebalance.
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
        self.metadata = ClusterMetadata(
            self.bootstrap,
            MetadataConfig(
                max_age=metadata_max_age,
                topic_idle_ttl=metadata_topic_idle_ttl,
                rebootstrap_trigger=rebootstrap_trigger,
                rebootstrap=_recovery(metadata_recovery_strategy),
            ),
        )
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
        self._connection = ConnectionConfig(
            client_id=client_id,
            max_in_flight=max_in_flight,
            request_timeout=request_timeout,
            sasl=sasl,
        )
        self._connections_per_broker = connections_per_broker
        self._backoff = reconnect_backoff or BackoffPolicy()
        self._pool: ConnectionPool | None = None
        self._host = TaskHost("krafka client")
        self._connections_max_idle = connections_max_idle
        self._refresh_lock = anyio.Lock()
        self._refresh_generation = 0
        #: Metadata requests the client sent for its own refreshes (one per broker tried).
        self.metadata_requests = 0
        self._refresh_wanted = anyio.Event()
        self._links: dict[tuple[CoordinatorType, str], CoordinatorLink] = {}
        self._order_locks: dict[int | None, anyio.Lock] = {}
        self._closed = False

    @classmethod
    def from_config(cls, config: Mapping[str, Any], **overrides: Any) -> KafkaClient:
        """A client from Java/librdkafka properties (`bootstrap.servers`, `security.protocol`,
        `ssl.*`, `sasl.*`, ...; see `krafka.config`); keyword `overrides` win."""
        from krafka.config import keywords_from_config

        return cls(**{**keywords_from_config(config, "client"), **overrides})

    # -- lifecycle ------------------------------------------------------------------------------

    async def start(self, timeout: float | None = None) -> KafkaClient:
        """Connect to the cluster and fetch metadata (what `async with` does on entry), within
        `timeout` seconds when given (a client's own bound: a producer's `max_block`, ...).

        Background tasks run in the client's own task (`krafka.io.host.TaskHost`), so
        `start` and `close` may be called from different tasks.
        """
        if self._closed:
            raise InvalidStateError("client is closed")
        if self._pool is not None:
            return self
        await self._host.start()
        self._pool = ConnectionPool(
            self._host.task_group,
            transport=self._transport,
            connection=self._connection,
            connections_per_broker=self._connections_per_broker,
            backoff=self._backoff,
        )
        try:
            await self.refresh_metadata(timeout=timeout)
        except BaseException:
            await self.close(1.0)
            raise
        self._host.start_soon(self._metadata_loop, name="krafka metadata refresh")
        if self._connections_max_idle:
            self._host.start_soon(self._idle_loop, name="krafka idle connections")
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
        if self._pool is not None:
            with anyio.CancelScope(shield=True):
                await self._pool.close(timeout)
        await self._host.close(max(0.0, deadline - anyio.current_time()))

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
        api_key = ApiKey(int(request.API_KEY))
        prio = priority or (Priority.HIGH if api_key in HIGH_PRIORITY_APIS else Priority.NORMAL)
        attempts = 1 + (self.retries if api_key in RETRY_SAFE_APIS else 0)
        ordered = api_key in ORDERED_APIS
        options: dict[str, Any] = {
            "timeout": timeout,
            "version": version,
            "max_version": max_version,
            "min_version": min_version,
            "priority": prio,
        }
        if ordered:
            return await self._send_ordered(request, node_id, prio, options)
        lane = lane_for(api_key, prio)
        for attempt in range(attempts):
            conn = await self._connection_for(node_id, lane, timeout=timeout)
            try:
                response: R = await conn.request(request, **options)
                return response
            except KafkaConnectionError:
                if attempt + 1 >= attempts or self._closed:
                    raise
        raise AssertionError("unreachable")

    async def _send_ordered(
        self,
        request: Request[R] | Versioned[R],
        node_id: int | None,
        priority: Priority,
        options: dict[str, Any],
    ) -> R:
        """Requests whose order matters take the broker's one ordered connection and are queued
        on it in call order: a FIFO lock per broker is held from the call until the request has
        its place on the wire (only that long: answers are awaited outside it)."""
        lock = self._order_locks.get(node_id)
        if lock is None:
            lock = self._order_locks[node_id] = anyio.Lock()
        async with lock:
            conn = await self._connection_for(
                node_id, Lane.DATA, ordered=True, timeout=options["timeout"]
            )
            pending = conn.submit(request, **options)
        response: R = await pending.wait()
        return response

    async def execute(self, action: SendRequest[R]) -> R:
        """Carry out a sans-IO machine's `SendRequest`: resolve its target, send, answer."""
        options: dict[str, Any] = {
            "timeout": action.timeout,
            "max_version": action.max_version,
            "min_version": action.min_version,
            "priority": action.priority,
        }
        target = action.target
        if isinstance(target, AnyBroker):
            return await self.send(action.request, **options)
        if isinstance(target, LeaderOf):
            leader = await self.leader_for(target.topic, target.partition)
            return await self.send(action.request, node_id=leader.node_id, **options)
        if isinstance(target, Coordinator):
            return await self.send_to_coordinator(
                target.key, action.request, key_type=target.key_type, **options
            )
        if target.host is not None and target.port is not None:
            broker = BrokerInfo(target.node_id, target.host, target.port)
            return await self._send_to(broker, action.request, **options)
        return await self.send(action.request, node_id=target.node_id, **options)

    async def send_to_leader(
        self, topic: str, partition: int, request: Request[R], **kwargs: Any
    ) -> R:
        """Send `request` to the current leader of `topic`/`partition`."""
        leader = await self.leader_for(topic, partition)
        return await self.send(request, node_id=leader.node_id, **kwargs)

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

        `error_codes(response)` lists the codes in the response (default: its top-level
        `error_code`). When one says the coordinator moved, the request goes once more to the
        newly found coordinator; while it is loading, again after backoff (bounded by the
        request timeout). Other codes are the caller's to interpret.
        """
        codes = error_codes or _top_level_code
        deadline = anyio.current_time() + self.request_timeout
        loading = Backoff(DEFAULT_COORDINATOR_BACKOFF)
        while True:
            link = self._link(key, key_type)
            broker = await self.find_coordinator(key, key_type)
            try:
                response = await self._send_to(broker, request, **kwargs)
            except KafkaConnectionError:
                link.on_connection_failure()
                if anyio.current_time() >= deadline:
                    raise
                continue
            now = anyio.current_time()
            dispositions = {link.on_error_code(code, now) for code in codes(response)}
            dispositions.discard(CoordinatorDisposition.NOT_COORDINATOR_ERROR)
            if not dispositions or now >= deadline:
                return response
            if CoordinatorDisposition.RETRY_LATER in dispositions:
                await anyio.sleep(loading.failed(now) - now)

    async def find_coordinator(
        self,
        key: str,
        key_type: CoordinatorType = CoordinatorType.GROUP,
        *,
        timeout: float | None = None,
    ) -> BrokerInfo:
        """The coordinator broker for `key` (cached until it moves), looked up through the
        same sans-IO `CoordinatorLink` the group and transaction machines use."""
        link = self._link(key, key_type)
        limit = timeout or self.request_timeout
        with anyio.move_on_after(limit):
            while (target := link.target()) is None:
                now = anyio.current_time()
                fatal = link.fatal_error()
                if fatal is not None:
                    raise fatal
                sent = link.lookup(now)
                if sent is None:
                    await anyio.sleep(max(0.0, (link.next_deadline() or now) - now))
                    continue
                try:
                    response = await self.execute(sent)
                except KrafkaError as exc:
                    link.on_failure(sent, exc, anyio.current_time())
                    if not exc.retriable:
                        raise
                else:
                    link.on_response(sent, response, anyio.current_time())
            assert target.host is not None and target.port is not None
            return BrokerInfo(target.node_id, target.host, target.port)
        raise KafkaTimeoutError(
            f"no coordinator for {key_type.name.lower()} {key!r} within {limit}s"
            + (f" (last error: {link.last_error})" if link.last_error else "")
        )

    async def api_version(self, api_key: int, node_id: int | None = None) -> int:
        """The version of `api_key` requests to broker `node_id` will use."""
        conn = await self._connection_for(node_id, Lane.DATA)
        return conn.version_for(api_key)

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
        meta = self.metadata
        if topics:
            meta.add_topics(topics, anyio.current_time())
        generation = self._refresh_generation
        async with self._refresh_lock:
            shared = not meta.unrequested(topics) and not all_topics
            if self._refresh_generation != generation and shared:
                return meta
            await anyio.sleep(meta.refresh_wait(anyio.current_time(), topics))
            await self._refresh_once(all_topics, timeout)
        return meta

    async def leader_for(
        self, topic: str, partition: int, timeout: float | None = None
    ) -> BrokerInfo:
        """The leader of a partition. While none is known for a retriable reason (a topic being
        created, a leader election) metadata is refreshed with backoff for up to `timeout`
        seconds (default `request_timeout`); a non-retriable answer (an invalid topic name, no
        authorization) raises at once."""
        self.metadata.touch(topic, anyio.current_time())
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
        meta.touch(topic, anyio.current_time())
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
            self.metadata.touch(topic, now)
        if self.metadata.refresh_due(now):
            self._refresh_wanted.set()

    def report_error(self, code: int, topic: str | None = None) -> None:
        """Tell the client a response carried `code` (stale metadata, REBOOTSTRAP_REQUIRED)."""
        self.metadata.on_error(code, topic)
        if code in COORDINATOR_MOVED_CODES:
            for link in self._links.values():
                link.mark_unknown()
        self._refresh_wanted.set()

    def update_seed_brokers(self, servers: str | Sequence[str]) -> None:
        """Replace the bootstrap servers with `servers` (`"h1:9092,h2:9092"` or a list): the
        next rebootstrap (KIP-899) starts from them. Known brokers keep being used until then."""
        self.bootstrap = parse_bootstrap(servers)
        self.metadata.bootstrap = self.bootstrap

    # -- internals ------------------------------------------------------------------------------

    def _link(self, key: str, key_type: CoordinatorType) -> CoordinatorLink:
        link = self._links.get((key_type, key))
        if link is None:
            link = self._links[(key_type, key)] = CoordinatorLink(
                key, key_type, DEFAULT_COORDINATOR_BACKOFF
            )
        return link

    async def _refresh_once(self, all_topics: bool = False, timeout: float | None = None) -> None:
        meta = self.metadata
        for _ in range(2):  # a second round only after a REBOOTSTRAP_REQUIRED answer
            now = anyio.current_time()
            if meta.rebootstrap_due(now):
                self._rebootstrap(now)
            topics = meta.topics_to_refresh(now)
            if all_topics:
                topics = None
            meta.refresh_started(now, topics)
            wanted = None if topics is None else [_metadata_topic(t) for t in topics]
            request = MetadataRequest(
                topics=wanted, allow_auto_topic_creation=self.allow_auto_topic_creation
            )
            try:
                response = await self._any_broker(request, timeout, max_version=12)
            except KrafkaError:
                meta.refresh_failed(anyio.current_time())
                raise
            meta.update(response, anyio.current_time(), topics)
            if not meta.rebootstrap_requested:
                self._refresh_generation += 1
                return

    def _rebootstrap(self, now: float) -> None:
        """KIP-899: drop broker connections and metadata; the bootstrap servers come next."""
        assert self._pool is not None
        log.info("rebootstrapping from %s", ",".join(f"{h}:{p}" for h, p in self.bootstrap))
        for node in list(self.metadata.brokers.values()):
            self._pool.close_address(node.host, node.port)
        for link in self._links.values():
            link.mark_unknown()
        self.metadata.rebootstrap(now)

    async def _any_broker(
        self, request: Any, timeout: float | None, **kwargs: Any
    ) -> MetadataResponse:
        """Send to a reachable broker: known brokers in random order, else the bootstrap servers
        in the order given, all within `timeout` when given (each has an even share of what is
        left, so a silent first one leaves time for the others). Any failure of one (refused,
        garbage, silence, TLS, closed) moves on to the next; the error when none answered names
        each one and why."""
        assert self._pool is not None
        candidates = self.metadata.addresses()
        if self.metadata.brokers:
            random.shuffle(candidates)
        errors: list[tuple[str, KrafkaError]] = []
        deadline = None if timeout is None else anyio.current_time() + timeout
        tried = self._not_held_back(candidates)
        for index, (node_id, host, port) in enumerate(tried):
            left = None if deadline is None else deadline - anyio.current_time()
            if left is not None and left <= 0 and errors:
                break
            share = None if left is None else left / (len(tried) - index)
            bound = None if share is None else min(self.request_timeout, share)
            try:
                conn = await self._pool.get(
                    host, port, Lane.CONTROL, timeout=bound, node_id=node_id
                )
                self.metadata_requests += 1
                response = await conn.request(
                    request, priority=Priority.HIGH, timeout=bound, **kwargs
                )
            except KrafkaError as exc:
                log.info("metadata from %s:%s failed: %s", host, port, exc)
                errors.append((f"{host}:{port}", exc))
                continue
            self.metadata.connection_succeeded()
            return response  # type: ignore[no-any-return]
        self.metadata.connection_failed(anyio.current_time())
        raise _none_answered(errors)

    def _not_held_back(
        self, candidates: list[tuple[int | None, str, int]]
    ) -> list[tuple[int | None, str, int]]:
        """The candidates a cluster-wide request tries, as Java's least loaded node: those not
        in reconnect backoff, in order; when every one is, only the one free soonest. Waiting
        out each dead broker's backoff in turn would hold a refresh (and a KIP-899 rebootstrap)
        for the sum of them."""
        assert self._pool is not None
        now = anyio.current_time()
        waits = [self._pool.reconnect_wait(host, port, now) for _, host, port in candidates]
        free = [c for c, wait in zip(candidates, waits, strict=True) if wait <= 0]
        if free or not candidates:
            return free
        return [candidates[waits.index(min(waits))]]

    async def _connection_for(
        self, node_id: int | None, lane: Lane, ordered: bool = False, timeout: float | None = None
    ) -> Connection:
        """A connection to broker `node_id` (None: any), set up within `timeout` when given
        (the request's own timeout: a call never waits longer for its connection)."""
        if self._closed or self._pool is None:
            raise InvalidStateError("client is not started or already closed")
        if node_id is None:
            live = self._pool.connections(lane=lane)
            if live and not ordered:
                return min(live, key=lambda c: c.load)
            addresses = self.metadata.addresses()
            _, host, port = min(addresses) if ordered else random.choice(addresses)
            return await self._pool.get(host, port, lane, ordered=ordered, timeout=timeout)
        broker = self.metadata.broker(node_id)
        if broker is None:
            await self.refresh_metadata()
            broker = self.metadata.broker(node_id)
        if broker is None:
            raise KafkaConnectionError(f"broker {node_id} is not in the cluster metadata")
        return await self._pool.get(
            broker.host, broker.port, lane, ordered=ordered, timeout=timeout, node_id=node_id
        )

    async def _send_to(
        self, broker: BrokerInfo, request: Request[R] | Versioned[R], **kwargs: Any
    ) -> R:
        assert self._pool is not None
        api_key = ApiKey(int(request.API_KEY))
        prio = kwargs.pop("priority", None) or (
            Priority.HIGH if api_key in HIGH_PRIORITY_APIS else Priority.NORMAL
        )
        conn = await self._pool.get(
            broker.host,
            broker.port,
            lane_for(api_key, prio),
            timeout=kwargs.get("timeout"),
            node_id=broker.node_id,
        )
        response: R = await conn.request(request, priority=prio, **kwargs)
        return response

    async def _idle_loop(self) -> None:
        """Close connections unused for `connections_max_idle` s (Java's
        `connections.max.idle.ms`); they reopen on the next request."""
        assert self._pool is not None and self._connections_max_idle
        limit = self._connections_max_idle
        while not self._closed:
            await anyio.sleep(max(limit / 4, 0.01))
            self._pool.close_idle(anyio.current_time(), limit)

    async def _metadata_loop(self) -> None:
        while not self._closed:
            delay = max(0.0, self.metadata.next_refresh_at() - anyio.current_time())
            with anyio.move_on_after(delay):
                await self._refresh_wanted.wait()
            self._refresh_wanted = anyio.Event()
            if not self.metadata.refresh_due(anyio.current_time()):
                continue
            try:
                await self.refresh_metadata()
            except KrafkaError as exc:
                log.debug("background metadata refresh failed: %s", exc)
                if self.metadata.rebootstrap_due(anyio.current_time()):
                    self.metadata.request_refresh(RefreshReason.REBOOTSTRAP)
            except Exception:  # a bug here must not cancel the application's task
                log.exception("background metadata refresh crashed")
                self.metadata.refresh_failed(anyio.current_time())


def lane_for(api_key: ApiKey, priority: Priority) -> Lane:
    """The lane a request takes: coordinator requests their own, HIGH priority the control
    lane, everything else the data lane."""
    if api_key in COORDINATOR_APIS:
        return Lane.COORDINATOR
    return Lane.CONTROL if priority is Priority.HIGH else Lane.DATA


def _none_answered(errors: list[tuple[str, KrafkaError]]) -> KrafkaError:
    """The error for a request no broker answered: every address and why; of the one kind of
    error they all failed with (an `AuthenticationError` stays one), else a connection error."""
    reasons = [str(exc) if str(exc).startswith(at) else f"{at}: {exc}" for at, exc in errors]
    message = "no broker reachable (" + "; ".join(reasons) + ")"
    kinds = {type(exc) for _, exc in errors}
    if len(kinds) == 1 and errors:
        error = copy.copy(errors[0][1])
        error.args = (message,)
        error.__cause__ = errors[0][1]
        return error
    error = KafkaConnectionError(message)
    if errors:
        error.__cause__ = errors[-1][1]
    return error


def _recovery(strategy: str) -> bool:
    """`metadata_recovery_strategy` (KIP-899): "rebootstrap" or "none"."""
    if strategy not in ("rebootstrap", "none"):
        raise ConfigError(
            f"metadata_recovery_strategy is 'rebootstrap' or 'none', not {strategy!r}"
        )
    return strategy == "rebootstrap"


def _metadata_topic(name: str) -> Any:
    return MetadataRequest.MetadataRequestTopic(name=name)


def _top_level_code(response: Any) -> list[int]:
    code = getattr(response, "error_code", None)
    return [] if code is None else [int(code)]
