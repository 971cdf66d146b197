"""The consumer's options (Java's ConsumerConfig in snake_case, durations in seconds)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from krafka._codec.compression import DEFAULT_MAX_DECOMPRESSED
from krafka.io.tracing import TraceContext
from krafka.sansio.backoff import BackoffPolicy
from krafka.sansio.consumer.config import ConsumerConfig, GroupProtocol
from krafka.sansio.consumer.fetcher import FetchConfig
from krafka.sansio.consumer.record import ConsumerRecord
from krafka.sansio.consumer.subscription import ResetStrategy
from krafka.sansio.group.classic.assignors import assignors_for
from krafka.sansio.group.config import GroupConfig
from krafka.sansio.isolation import IsolationLevel
from krafka.structs import OffsetAndMetadata, TopicPartition


class ConsumerInterceptor(Protocol):
    """Java's ConsumerInterceptor: sees (and may replace) records before the application, and
    offsets after they are committed (automatic commits too). Either method may be left out.
    Their exceptions are logged, not raised (the records are then returned as they were)."""

    def on_consume(self, records: list[ConsumerRecord]) -> list[ConsumerRecord]: ...

    def on_commit(self, offsets: Mapping[TopicPartition, OffsetAndMetadata]) -> None: ...


@dataclass(frozen=True, slots=True)
class ConsumerSettings:
    """Every consumer option; the rest of a constructor's keywords go to `KafkaClient`."""

    client_id: str = "krafka-consumer"
    group_id: str | None = None
    group_instance_id: str | None = None
    group_protocol: str = "classic"
    #: KIP-848: the coordinator-side assignor to ask for ("uniform", "range"; None: its default).
    group_remote_assignor: str | None = None
    partition_assignment_strategy: str | Sequence[Any] = ("range", "cooperative-sticky")
    rebalance_listener: Any = None
    session_timeout: float = 45.0
    heartbeat_interval: float = 3.0
    max_poll_interval: float = 300.0
    #: The rebalance timeout the member announces (JoinGroup, KIP-848 heartbeats): how long
    #: the coordinator waits for it in a rebalance. None: `max_poll_interval`, as Java's
    #: `max.poll.interval.ms` sets both.
    rebalance_timeout: float | None = None
    enable_auto_commit: bool = True
    auto_commit_interval: float = 5.0
    auto_offset_reset: ResetStrategy | str = "latest"
    initial_offsets: Mapping[TopicPartition, int] = field(default_factory=dict)
    isolation_level: IsolationLevel | str = "read_uncommitted"
    fetch_min_bytes: int = 1
    fetch_max_bytes: int = 52_428_800
    max_partition_fetch_bytes: int = 1_048_576
    fetch_max_wait: float = 0.5
    max_poll_records: int = 500
    #: OpenTelemetry (`krafka.io.tracing`): a tracer provider (None: the global one, if set),
    #: and whether a `process` span links to ("link") or is the child of ("parent") the span
    #: that sent its record.
    tracer_provider: Any = None
    trace_context: TraceContext | str = TraceContext.LINK
    max_buffered_records: int = 0
    client_rack: str | None = None
    check_crcs: bool = True
    max_decompressed_size: int = DEFAULT_MAX_DECOMPRESSED
    key_deserializer: Callable[[bytes], Any] | None = None
    value_deserializer: Callable[[bytes], Any] | None = None
    interceptors: Sequence[Any] = ()
    request_timeout: float = 30.0
    default_api_timeout: float = 60.0
    retry_backoff: float = 0.1
    retry_backoff_max: float = 1.0
    metadata_max_age: float = 300.0
    allow_auto_topic_creation: bool = False
    #: An OpenTelemetry MeterProvider for the messaging metrics (None: the global one, if set).
    meter_provider: Any = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "auto_offset_reset", ResetStrategy.parse(self.auto_offset_reset))
        object.__setattr__(self, "isolation_level", IsolationLevel.parse(self.isolation_level))
        object.__setattr__(self, "initial_offsets", dict(self.initial_offsets))
        object.__setattr__(self, "trace_context", TraceContext.parse(self.trace_context))
        if self.max_poll_records <= 0:
            raise ValueError("max_poll_records must be positive")
        if self.max_buffered_records < 0:
            raise ValueError("max_buffered_records must be >= 0 (0: unlimited)")
        if self.fetch_max_wait < 0 or self.fetch_min_bytes < 0:
            raise ValueError("fetch_max_wait and fetch_min_bytes must be >= 0")
        GroupProtocol.parse(self.group_protocol)

    @classmethod
    def split(cls, options: Mapping[str, Any]) -> tuple[ConsumerSettings, dict[str, Any]]:
        """(consumer settings, the remaining keywords for KafkaClient)."""
        names = {f.name for f in dataclasses.fields(cls)}
        mine = {k: v for k, v in options.items() if k in names}
        return cls(**mine), {k: v for k, v in options.items() if k not in names}

    @property
    def read_committed(self) -> bool:
        return self.isolation_level is IsolationLevel.READ_COMMITTED

    def engine_config(self) -> ConsumerConfig:
        """What the sans-IO `ConsumerEngine` decides with."""
        assert isinstance(self.auto_offset_reset, ResetStrategy)
        protocol = GroupProtocol.parse(self.group_protocol)
        group = None if self.group_id is None else self.group_config()
        classic = group is not None and protocol is GroupProtocol.CLASSIC
        return ConsumerConfig(
            fetch=self.fetch_config(),
            group=group,
            group_protocol=protocol,
            assignors=tuple(assignors_for(self.partition_assignment_strategy)) if classic else (),
            remote_assignor=self.group_remote_assignor,
            auto_offset_reset=self.auto_offset_reset,
            initial_offsets=self.initial_offsets,
            max_poll_records=self.max_poll_records,
            key_deserializer=self.key_deserializer,
            value_deserializer=self.value_deserializer,
            default_api_timeout=self.default_api_timeout,
            metadata_max_age=self.metadata_max_age,
            retry_backoff=self._retry_backoff(),
        )

    def group_config(self) -> GroupConfig:
        assert self.group_id is not None
        return GroupConfig(
            group_id=self.group_id,
            group_instance_id=self.group_instance_id,
            session_timeout=self.session_timeout,
            heartbeat_interval=self.heartbeat_interval,
            max_poll_interval=self.max_poll_interval,
            rebalance_timeout=self.rebalance_timeout,
            retry_backoff=self.retry_backoff,
            retry_backoff_max=self.retry_backoff_max,
            request_timeout=self.request_timeout,
            default_api_timeout=self.default_api_timeout,
            enable_auto_commit=self.enable_auto_commit,
            auto_commit_interval=self.auto_commit_interval,
            client_rack=self.client_rack,
        )

    def _retry_backoff(self) -> BackoffPolicy:
        return BackoffPolicy(
            initial=self.retry_backoff,
            maximum=max(self.retry_backoff, self.retry_backoff_max),
            max_retries=None,
        )

    def fetch_config(self) -> FetchConfig:
        assert isinstance(self.isolation_level, IsolationLevel)
        return FetchConfig(
            fetch_min_bytes=self.fetch_min_bytes,
            fetch_max_bytes=self.fetch_max_bytes,
            max_partition_fetch_bytes=self.max_partition_fetch_bytes,
            fetch_max_wait=self.fetch_max_wait,
            isolation_level=self.isolation_level,
            client_rack=self.client_rack,
            check_crcs=self.check_crcs,
            max_decompressed_size=self.max_decompressed_size,
            max_buffered_records=self.max_buffered_records,
            preferred_replica_ttl=self.metadata_max_age,
            retry_backoff=self._retry_backoff(),
        )


__all__ = ["ConsumerInterceptor", "ConsumerSettings"]
