"""What every family of admin calls shares: the connection to the cluster, the options, and
running one sans-IO `AdminOperation` per call, attached to the client's core for the call."""

from __future__ import annotations

import random
import uuid
from collections.abc import Hashable, Iterable, Mapping, Sequence
from types import TracebackType
from typing import Any, Final, TypeVar

import anyio

from krafka.config.keywords import check_arguments
from krafka.errors import IllegalStateError, InvalidStateError, KrafkaError
from krafka.io.attached import AttachedMachine
from krafka.io.client import KafkaClient
from krafka.io.clock import loop_time
from krafka.io.telemetry import ClientTelemetry
from krafka.metrics.registry import ClientEntry, forget, track
from krafka.sansio.actions import Broker
from krafka.sansio.admin.cluster import ClusterDescription, DescribeCluster
from krafka.sansio.admin.metrics import AdminMetrics
from krafka.sansio.admin.operation import AdminOperation, Handler
from krafka.sansio.admin.routing import Routing, ToAnyBroker
from krafka.sansio.admin.topics import CLUSTER
from krafka.sansio.backoff import BackoffPolicy
from krafka.sansio.telemetry import ClientKind
from krafka.structs import TopicPartition

K = TypeVar("K", bound=Hashable)
_OUTCOME_MARGIN: Final = 5.0


class AdminBase:
    """Lifecycle and the call runner; the families of calls are mixed in on top."""

    def __init__(
        self,
        bootstrap_servers: str | Sequence[str] = "127.0.0.1:9092",
        *,
        client_id: str = "krafka-admin",
        request_timeout: float = 30.0,
        default_api_timeout: float = 60.0,
        retry_backoff: float = 0.1,
        retry_backoff_max: float = 1.0,
        metadata_max_age: float = 300.0,
        client: KafkaClient | None = None,
        **client_options: Any,
    ) -> None:
        check_arguments(
            "AdminClient", "admin", bootstrap_servers, client_options, AdminBase, KafkaClient
        )
        if default_api_timeout <= 0 or request_timeout <= 0:
            raise ValueError("timeouts must be positive")
        self.request_timeout = float(request_timeout)
        self.default_api_timeout = float(default_api_timeout)
        self.backoff = BackoffPolicy(
            initial=float(retry_backoff),
            maximum=max(float(retry_backoff), float(retry_backoff_max)),
            max_retries=None,
        )
        self._client = client or KafkaClient(
            bootstrap_servers,
            client_id=client_id,
            request_timeout=self.request_timeout,
            metadata_max_age=metadata_max_age,
            allow_auto_topic_creation=False,
            **client_options,
        )
        self._own_client = client is None
        #: Telemetry of an admin client with its own connections (one sharing another client's
        #: connections, as a consumer's, is that client's).
        self._telemetry = (
            ClientTelemetry(self._client, ClientKind.ADMIN, dict, client_id)
            if self._own_client
            else None
        )
        self._rand = random.random
        self._started = False
        self._closed = False
        self._metrics = AdminMetrics()
        if client is None:  # not a consumer's own admin calls
            track(self, ClientEntry(ClientKind.ADMIN, client_id, None, _metrics))

    # -- lifecycle ------------------------------------------------------------------------------

    async def __aenter__(self) -> Any:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    async def start(self) -> None:
        """Connect to the cluster (bootstrap and first metadata), within
        `default_api_timeout`."""
        if self._started:
            return
        self._started = True
        if self._own_client:
            await self._client.start(self.default_api_timeout)
        if self._telemetry is not None:
            await self._telemetry.start()

    def metrics(self) -> dict[str, Any]:
        """The admin calls made: `request-total`, `request-rate`, `request-error-total`,
        `request-error-rate`, `request-latency-avg` / `-max` (seconds; a call is one request
        per broker it needs, retries included). Callable from any thread."""
        metrics = self._metrics.snapshot(loop_time())
        metrics.update(self._client.connection_metrics().as_dict())
        return metrics

    async def close(self, timeout: float = 5.0) -> None:
        """Close the connections (calls still running fail)."""
        if self._closed:
            return
        self._closed = True
        if self._telemetry is not None:
            await self._telemetry.close(timeout / 3)
        forget(self)
        if self._own_client and self._started:
            await self._client.close(timeout)

    async def client_instance_id(self, timeout: float) -> uuid.UUID | None:
        """KIP-714: the id the cluster gave this admin client's telemetry (Java's
        `clientInstanceId`), waiting up to `timeout` seconds; None when none came.
        Raises `IllegalStateError` when built with `enable_metrics_push=False`, or when it
        shares another client's connections (that client's id is the one)."""
        if self._telemetry is None:
            raise IllegalStateError("this admin client shares its owner's telemetry")
        return await self._telemetry.client_instance_id(timeout)

    def update_seed_brokers(self, servers: str | Sequence[str]) -> None:
        """Replace the bootstrap servers (`"h1:9092,h2:9092"` or a list): the next
        rebootstrap (KIP-899: every known broker unreachable for `rebootstrap_trigger`, or
        REBOOTSTRAP_REQUIRED) starts from them."""
        self._client.update_seed_brokers(servers)

    @property
    def client(self) -> KafkaClient:
        """The low-level client the admin calls go through."""
        return self._client

    # -- running calls --------------------------------------------------------------------------

    def _timeout(self, timeout: float | None) -> float:
        return self.default_api_timeout if timeout is None else float(timeout)

    @property
    def _timeout_ms(self) -> int:
        """What requests that wait on the broker (CreateTopics ...) tell it to wait."""
        return int(self.request_timeout * 1000)

    async def _run(
        self,
        handler: Handler[K],
        routing: Routing[K],
        keys: Iterable[K],
        timeout: float | None = None,
    ) -> dict[K, Any]:
        """Carry out one call: {item: value or KrafkaError}; raises when no item got an answer."""
        if not self._started or self._closed:
            raise InvalidStateError("the admin client is not started or already closed")
        operation = AdminOperation(
            handler,
            routing,
            keys,
            timeout=self._timeout(timeout),
            backoff=self.backoff,
            rand=self._rand,
        )
        attached = AttachedMachine(self._client, operation, name=f"krafka admin: {handler.what}")
        values: dict[K, Any] = {}
        error: KrafkaError | None = None
        started = anyio.current_time()
        op = operation.start(anyio.current_time())
        attached.start()
        try:  # the machine ends the call at its deadline; the margin only guards a bug
            values = await attached.outcome(op, operation.timeout + _OUTCOME_MARGIN)
        except KrafkaError as exc:
            error = exc
        finally:
            attached.stop()
        failed = error is not None or any(isinstance(v, KrafkaError) for v in values.values())
        self._metrics.call_done(started, anyio.current_time(), failed)
        if error is not None:
            raise error
        return values

    async def _run_one(
        self, handler: Handler[K], routing: Routing[K], key: K, timeout: float | None = None
    ) -> Any:
        """A one-item call: its value, or its error raised."""
        value = (await self._run(handler, routing, [key], timeout))[key]
        if isinstance(value, KrafkaError):
            raise value
        return value

    async def _describe_cluster(
        self, include_authorized_operations: bool = False, timeout: float | None = None
    ) -> ClusterDescription:
        handler = DescribeCluster(include_authorized_operations)
        description: ClusterDescription = await self._run_one(
            handler, ToAnyBroker(), CLUSTER, timeout
        )
        return description

    async def _brokers(self, timeout: float | None = None) -> dict[int, Broker]:
        """Every broker of the cluster, by id (for calls made on each of them)."""
        cluster = await self._describe_cluster(timeout=timeout)
        return {n.node_id: Broker(n.node_id, n.host, n.port) for n in cluster.nodes}


def _metrics(admin: AdminBase) -> Mapping[str, Any]:
    return admin.metrics()


def partitions_of(items: Iterable[Any]) -> list[TopicPartition]:
    """`TopicPartition`s, `(topic, partition)` pairs or a peer client's TopicPartition objects,
    in order, without repeats."""
    if isinstance(items, str | bytes):
        raise TypeError("pass a list of partitions")
    out: dict[TopicPartition, None] = {}
    for item in items:
        out[topic_partition(item)] = None
    return list(out)


def topic_partition(item: Any) -> TopicPartition:
    if isinstance(item, tuple):
        topic, partition = item
    else:
        topic, partition = item.topic, item.partition
    return TopicPartition(str(topic), int(partition))


def names_of(items: Iterable[str], what: str) -> list[str]:
    """Names in order, without repeats (a lone string is refused: it iterates by letter)."""
    if isinstance(items, str):
        raise TypeError(f"{what}: pass a list of names, not one string")
    return list(dict.fromkeys(str(i) for i in items))
