"""`ClientConfig`: what a `ClientCore` needs to know about the cluster and its connections."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from krafka.sansio.backoff import BackoffPolicy
from krafka.sansio.connection import ConnectionConfig
from krafka.sansio.coordinator import DEFAULT_COORDINATOR_BACKOFF
from krafka.sansio.metadata import MetadataConfig, parse_bootstrap
from krafka.sansio.sasl import SaslMechanism


@dataclass(frozen=True, slots=True)
class ClientConfig:
    """One client's settings (Java's names in brackets).

    `connections_per_broker` data connections per broker (requests go to the least loaded;
    Produce always to the first, in order); `connect_timeout` bounds a connection's whole setup
    (TCP, TLS, ApiVersions, SASL) including its reconnect attempts; `retries` resends of
    read-only requests whose connection dropped; `connections_max_idle` closes connections
    unused that long (None: never). `tls` only words errors (the embedder does the TLS).
    """

    bootstrap_servers: str | Sequence[str]
    client_id: str = "krafka"
    max_in_flight: int = 5
    request_timeout: float = 30.0
    connect_timeout: float = 10.0
    connections_per_broker: int = 1
    reconnect_backoff: BackoffPolicy = field(default_factory=BackoffPolicy)
    retries: int = 2
    metadata: MetadataConfig = field(default_factory=MetadataConfig)
    allow_auto_topic_creation: bool = True
    connections_max_idle: float | None = None
    sasl: Callable[[], SaslMechanism] | None = None
    tls: bool = False
    coordinator_backoff: BackoffPolicy = DEFAULT_COORDINATOR_BACKOFF

    def __post_init__(self) -> None:
        if self.connections_per_broker < 1:
            raise ValueError("connections_per_broker must be >= 1")
        parse_bootstrap(self.bootstrap_servers)

    @property
    def bootstrap(self) -> list[tuple[str, int]]:
        return parse_bootstrap(self.bootstrap_servers)

    def connection_config(self, host: str) -> ConnectionConfig:
        """The `BrokerConnection` settings for a connection to `host`."""
        return ConnectionConfig(
            client_id=self.client_id,
            max_in_flight=self.max_in_flight,
            request_timeout=self.request_timeout,
            sasl=self.sasl,
        ).for_server(host)


__all__ = ["ClientConfig"]
