"""The low-level Kafka client: send any protocol request to the right broker, on anyio.

    async with KafkaClient("127.0.0.1:9092", ssl_context=create_ssl_context(cafile),
                           sasl_mechanism="SCRAM-SHA-256", sasl_username="u",
                           sasl_password="p") as client:
        meta = await client.refresh_metadata(["orders"])          # ClusterMetadata
        response = await client.send(MetadataRequest(topics=[]))   # any broker
        response = await client.send(request, node_id=1, timeout=5.0)
        response = await client.send_to_leader("orders", 0, produce_request, ordered=True)
        response = await client.send_to_coordinator("my-group", heartbeat_request)
        broker = await client.find_coordinator("my-group")        # BrokerInfo
        leader = await client.leader_for("orders", 0)              # BrokerInfo
        version = await client.api_version(ApiKey.FETCH, node_id)  # build the request for it
        client.report_error(error_code, "orders")                  # stale metadata -> refresh
        client.touch_topics(["orders"])                            # keep refreshing a topic
    # leaving the block closes every connection (bounded: `await client.close(timeout=5)`)

`client.metadata` is the live `krafka.sansio.metadata.ClusterMetadata` (brokers, racks,
partitions, leaders, leader epochs, topic ids). `send*` take a generated request
(`krafka.protocol.messages`) and return its decoded response (None for a Produce with acks=0).
The version is the highest both sides support unless `version=` or `max_version=` says
otherwise; an API the broker does not advertise raises
`UnsupportedVersionError` without sending anything. Response error codes are the caller's to
interpret; report stale-metadata codes with `report_error(code, topic)` so metadata refreshes.

Connections are pooled per broker (`connections_per_broker` data connections plus a control
lane for metadata, coordinator lookups and heartbeats), reconnect with exponential backoff and
jitter, and requests of read-only APIs are retried on a fresh connection when one drops.
Metadata refreshes in the background on age and on demand; after all brokers were unreachable
for `rebootstrap_trigger` seconds, or on REBOOTSTRAP_REQUIRED, the client rebootstraps (KIP-899).
"""

from __future__ import annotations

import logging
import random
import ssl
from collections.abc import Callable, Sequence
from types import TracebackType
from typing import Any, Final

import anyio
import anyio.abc

from krafka.errors import InvalidStateError, KafkaConnectionError, KrafkaError, error_for_code
from krafka.io.connection import Connection
from krafka.io.pool import ConnectionPool, Lane
from krafka.io.transport import TransportConfig
from krafka.protocol import ApiKey
from krafka.protocol.error_codes import ErrorCode
from krafka.protocol.messages import (
    FindCoordinatorRequest,
    FindCoordinatorResponse,
    MetadataRequest,
    MetadataResponse,
)
from krafka.sansio.backoff import BackoffPolicy
from krafka.sansio.connection import ConnectionConfig, Priority
from krafka.sansio.metadata import (
    BrokerInfo,
    ClusterMetadata,
    MetadataConfig,
    RefreshReason,
    parse_bootstrap,
)
from krafka.sansio.sasl import SaslMechanism, TokenProvider, mechanism_factory
from krafka.sansio.secret import Secret

log = logging.getLogger(__name__)

#: Requests that take the control lane and the HIGH priority queue.
HIGH_PRIORITY_APIS: Final = frozenset(
    {
        ApiKey.METADATA,
        ApiKey.FIND_COORDINATOR,
        ApiKey.HEARTBEAT,
        ApiKey.API_VERSIONS,
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
_COORDINATOR_RETRY: Final = frozenset(
    {
        ErrorCode.NOT_COORDINATOR,
        ErrorCode.COORDINATOR_NOT_AVAILABLE,
        ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
    }
)


class CoordinatorType:
    GROUP: Final = 0
    TRANSACTION: Final = 1
    SHARE: Final = 2


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
        connections_per_broker: int = 1,
        max_in_flight: int = 5,
        request_timeout: float = 30.0,
        connect_timeout: float = 10.0,
        reconnect_backoff: BackoffPolicy | None = None,
        retries: int = 2,
        metadata_max_age: float = 300.0,
        metadata_topic_idle_ttl: float = 300.0,
        rebootstrap_trigger: float = 300.0,
        allow_auto_topic_creation: bool = True,
    ) -> None:
        self.bootstrap = parse_bootstrap(bootstrap_servers)
        self.request_timeout = request_timeout
        self.retries = retries
        self.allow_auto_topic_creation = allow_auto_topic_creation
        self.metadata = ClusterMetadata(
            self.bootstrap,
            MetadataConfig(
                max_age=metadata_max_age,
                topic_idle_ttl=metadata_topic_idle_ttl,
                rebootstrap_trigger=rebootstrap_trigger,
            ),
        )
        if sasl_mechanism is not None and sasl_mechanism.upper() == "PLAIN" and not ssl_context:
            log.warning("SASL PLAIN without TLS sends the password in the clear")
        if sasl is None and sasl_mechanism is not None:
            sasl = mechanism_factory(
                sasl_mechanism,
                username=sasl_username,
                password=sasl_password,
                token_provider=sasl_oauth_token_provider,
            )
        self._transport = TransportConfig(ssl_context, server_hostname, connect_timeout)
        self._connection = ConnectionConfig(
            client_id=client_id,
            max_in_flight=max_in_flight,
            request_timeout=request_timeout,
            sasl=sasl,
        )
        self._connections_per_broker = connections_per_broker
        self._backoff = reconnect_backoff or BackoffPolicy()
        self._pool: ConnectionPool | None = None
        self._tg: anyio.abc.TaskGroup | None = None
        self._refresh_lock = anyio.Lock()
        self._refresh_generation = 0
        self._refresh_wanted = anyio.Event()
        self._coordinators: dict[tuple[int, str], BrokerInfo] = {}
        self._closed = False

    # -- lifecycle ------------------------------------------------------------------------------

    async def __aenter__(self) -> KafkaClient:
        self._tg = anyio.create_task_group()
        await self._tg.__aenter__()
        self._pool = ConnectionPool(
            self._tg,
            transport=self._transport,
            connection=self._connection,
            connections_per_broker=self._connections_per_broker,
            backoff=self._backoff,
        )
        try:
            await self.refresh_metadata()
        except BaseException:
            await self.close(1.0)
            raise
        self._tg.start_soon(self._metadata_loop, name="krafka metadata refresh")
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    async def close(self, timeout: float = 5.0) -> None:
        """Close every connection and stop background tasks, within about `timeout` seconds.

        Call it (or leave the `async with` block) in the task that entered the client.
        """
        if self._closed:
            return
        self._closed = True
        tg, self._tg = self._tg, None
        if self._pool is not None:
            with anyio.CancelScope(shield=True):
                await self._pool.close(timeout)
        if tg is not None:
            tg.cancel_scope.cancel()
            await tg.__aexit__(None, None, None)

    # -- requests -------------------------------------------------------------------------------

    async def send(
        self,
        request: Any,
        *,
        node_id: int | None = None,
        timeout: float | None = None,
        version: int | None = None,
        max_version: int | None = None,
        priority: Priority | None = None,
        ordered: bool = False,
    ) -> Any:
        """Send `request` to broker `node_id` (None: any broker) and return the response.

        `ordered=True` keeps every such request to a broker on one connection, written in
        call order (what an idempotent producer needs with `connections_per_broker > 1`).
        """
        api_key = ApiKey(int(request.API_KEY))
        prio = priority or (Priority.HIGH if api_key in HIGH_PRIORITY_APIS else Priority.NORMAL)
        attempts = 1 + (self.retries if api_key in RETRY_SAFE_APIS else 0)
        for attempt in range(attempts):
            conn = await self._connection_for(node_id, prio, ordered)
            try:
                return await conn.request(
                    request,
                    timeout=timeout,
                    version=version,
                    max_version=max_version,
                    priority=prio,
                )
            except KafkaConnectionError:
                if attempt + 1 >= attempts or self._closed:
                    raise
        raise AssertionError("unreachable")

    async def send_to_leader(self, topic: str, partition: int, request: Any, **kwargs: Any) -> Any:
        """Send `request` to the current leader of `topic`/`partition`."""
        leader = await self.leader_for(topic, partition)
        return await self.send(request, node_id=leader.node_id, **kwargs)

    async def send_to_coordinator(
        self, key: str, request: Any, *, key_type: int = CoordinatorType.GROUP, **kwargs: Any
    ) -> Any:
        """Send `request` to the coordinator of group (or transactional id) `key`.

        A top-level NOT_COORDINATOR / COORDINATOR_NOT_AVAILABLE answer drops the cached
        coordinator and the request is sent once more to the newly found one.
        """
        response: Any = None
        for _ in range(2):
            coordinator = await self.find_coordinator(key, key_type)
            response = await self._send_to(coordinator, request, **kwargs)
            if getattr(response, "error_code", 0) not in _COORDINATOR_RETRY:
                return response
            self._coordinators.pop((key_type, key), None)
        return response

    async def find_coordinator(
        self, key: str, key_type: int = CoordinatorType.GROUP, *, timeout: float | None = None
    ) -> BrokerInfo:
        """The coordinator broker for `key` (cached until it moves)."""
        cached = self._coordinators.get((key_type, key))
        if cached is not None:
            return cached
        deadline = anyio.current_time() + (timeout or self.request_timeout)
        failures = 0
        while True:
            conn = await self._connection_for(None, Priority.HIGH)
            version = conn.version_for(ApiKey.FIND_COORDINATOR)
            response = await conn.request(
                _find_coordinator_request(key, key_type, version), priority=Priority.HIGH
            )
            code, broker = _coordinator_from(response, version)
            if code == ErrorCode.NONE and broker is not None:
                self._coordinators[(key_type, key)] = broker
                return broker
            failures += 1
            if code not in _COORDINATOR_RETRY or anyio.current_time() >= deadline:
                raise error_for_code(code, f"FindCoordinator for {key!r}")
            await anyio.sleep(self._backoff.delay(failures, random.random))

    async def api_version(self, api_key: int, node_id: int | None = None) -> int:
        """The version of `api_key` requests to broker `node_id` will use."""
        conn = await self._connection_for(node_id, Priority.NORMAL)
        return conn.version_for(api_key)

    # -- metadata -------------------------------------------------------------------------------

    async def refresh_metadata(self, topics: Sequence[str] | None = None) -> ClusterMetadata:
        """Refresh now. `topics` are added to the tracked set first (and auto-created if
        the broker allows it); with no topics tracked only brokers are refreshed."""
        now = anyio.current_time()
        if topics:
            self.metadata.add_topics(topics, now)
        generation = self._refresh_generation
        async with self._refresh_lock:
            if self._refresh_generation != generation and not topics:
                return self.metadata
            await self._refresh_once()
        return self.metadata

    async def leader_for(self, topic: str, partition: int) -> BrokerInfo:
        """The leader of a partition, refreshing metadata once if it is unknown."""
        self.metadata.touch(topic, anyio.current_time())
        leader = self.metadata.leader_for(topic, partition)
        if leader is None:
            await self.refresh_metadata([topic])
            leader = self.metadata.leader_for(topic, partition)
        if leader is None:
            raise error_for_code(
                ErrorCode.LEADER_NOT_AVAILABLE
                if self.metadata.topics.get(topic)
                else ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                f"no leader known for {topic}-{partition}",
            )
        return leader

    async def partitions_for(self, topic: str) -> list[int]:
        self.metadata.touch(topic, anyio.current_time())
        if topic not in self.metadata.topics:
            await self.refresh_metadata([topic])
        return self.metadata.partitions_for(topic)

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
        if code in (ErrorCode.NOT_COORDINATOR, ErrorCode.COORDINATOR_NOT_AVAILABLE):
            self._coordinators.clear()
        self._refresh_wanted.set()

    # -- internals ------------------------------------------------------------------------------

    async def _refresh_once(self) -> None:
        meta = self.metadata
        for _ in range(2):  # a second round only after a REBOOTSTRAP_REQUIRED answer
            now = anyio.current_time()
            if meta.rebootstrap_due(now):
                self._rebootstrap(now)
            topics = meta.topics_to_refresh(now)
            meta.refresh_started(now)
            wanted = None if topics is None else [_metadata_topic(t) for t in topics]
            request = MetadataRequest(
                topics=wanted, allow_auto_topic_creation=self.allow_auto_topic_creation
            )
            try:
                response = await self._any_broker(request, max_version=12)
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
        for node in list(self.metadata.brokers.values()):
            self._pool.close_address(node.host, node.port)
        self._coordinators.clear()
        self.metadata.rebootstrap(now)

    async def _any_broker(self, request: Any, **kwargs: Any) -> MetadataResponse:
        """Send to a reachable broker, tried in random order (bootstrap servers if none known)."""
        assert self._pool is not None
        candidates = self.metadata.addresses()
        random.shuffle(candidates)
        errors: list[str] = []
        for _, host, port in candidates:
            try:
                conn = await self._pool.get(host, port, Lane.CONTROL)
                response = await conn.request(request, priority=Priority.HIGH, **kwargs)
            except KafkaConnectionError as exc:
                errors.append(f"{host}:{port}: {exc}")
                continue
            self.metadata.connection_succeeded()
            return response  # type: ignore[no-any-return]
        self.metadata.connection_failed(anyio.current_time())
        raise KafkaConnectionError("no broker reachable (" + "; ".join(errors) + ")")

    async def _connection_for(
        self, node_id: int | None, priority: Priority, ordered: bool = False
    ) -> Connection:
        if self._closed or self._pool is None:
            raise InvalidStateError("client is not started or already closed")
        lane = Lane.CONTROL if priority is Priority.HIGH else Lane.DATA
        if node_id is None:
            live = self._pool.connections(lane=lane)
            if live and not ordered:
                return min(live, key=lambda c: c.load)
            addresses = self.metadata.addresses()
            _, host, port = min(addresses) if ordered else random.choice(addresses)
            return await self._pool.get(host, port, lane, ordered=ordered)
        broker = self.metadata.broker(node_id)
        if broker is None:
            await self.refresh_metadata()
            broker = self.metadata.broker(node_id)
        if broker is None:
            raise KafkaConnectionError(f"broker {node_id} is not in the cluster metadata")
        return await self._pool.get(broker.host, broker.port, lane, ordered=ordered)

    async def _send_to(self, broker: BrokerInfo, request: Any, **kwargs: Any) -> Any:
        assert self._pool is not None
        api_key = ApiKey(int(request.API_KEY))
        prio = kwargs.pop("priority", None) or (
            Priority.HIGH if api_key in HIGH_PRIORITY_APIS else Priority.NORMAL
        )
        lane = Lane.CONTROL if prio is Priority.HIGH else Lane.DATA
        conn = await self._pool.get(broker.host, broker.port, lane)
        return await conn.request(request, priority=prio, **kwargs)

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


def _metadata_topic(name: str) -> Any:
    return MetadataRequest.MetadataRequestTopic(name=name)


def _find_coordinator_request(key: str, key_type: int, version: int) -> FindCoordinatorRequest:
    if version >= 4:
        return FindCoordinatorRequest(key_type=key_type, coordinator_keys=[key])
    return FindCoordinatorRequest(key=key, key_type=key_type)


def _coordinator_from(
    response: FindCoordinatorResponse, version: int
) -> tuple[int, BrokerInfo | None]:
    if version >= 4:
        if not response.coordinators:
            return ErrorCode.COORDINATOR_NOT_AVAILABLE, None
        entry: Any = response.coordinators[0]
    else:
        entry = response
    if entry.error_code != ErrorCode.NONE:
        return int(entry.error_code), None
    return ErrorCode.NONE, BrokerInfo(int(entry.node_id), str(entry.host), int(entry.port))
