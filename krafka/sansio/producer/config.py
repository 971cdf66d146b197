"""Producer settings: Java/librdkafka property names in snake_case, durations in seconds.

Defaults follow librdkafka where batching is concerned (1 MB batches, 5 ms linger: a Python
client pays per request, not per record) and Java elsewhere (idempotence on, acks=all,
2 min delivery timeout, 32 MiB buffer).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

from krafka.codec import Compression


class Acks(IntEnum):
    """How many replicas must have a batch before the broker answers."""

    NONE = 0
    LEADER = 1
    ALL = -1

    @classmethod
    def parse(cls, value: int | str | Acks) -> Acks:
        if isinstance(value, str):
            value = -1 if value.lower() == "all" else int(value)
        return cls(int(value))


@dataclass(frozen=True, slots=True)
class ProducerConfig:
    """Everything the sans-IO producer needs to decide; validated on creation."""

    acks: Acks = Acks.ALL
    compression: Compression = Compression.NONE
    compression_level: int | None = None
    batch_size: int = 1_000_000
    linger: float = 0.005
    buffer_memory: int = 32 * 1024 * 1024
    max_request_size: int = 1_048_576
    max_in_flight_requests_per_connection: int = 5
    retries: int = 2_147_483_647
    retry_backoff: float = 0.1
    retry_backoff_max: float = 1.0
    delivery_timeout: float = 120.0
    request_timeout: float = 30.0
    enable_idempotence: bool = True
    transactional_id: str | None = None
    transaction_timeout: float = 60.0
    #: How late the driver's timers may fire: a loop waiting in whole milliseconds, rounded
    #: up (epoll), wakes up to 1 ms after a deadline. A batch counts as lingered half that
    #: early, so batches go `linger` after they opened on average, not up to 1 ms later
    #: (Java's producer, on a millisecond clock, is on time on average too).
    timer_slack: float = 0.0
    #: With `linger` 0, a batch that is not full waits while its partition has a batch in
    #: flight, and takes the records that arrive meanwhile: they go out at once when the
    #: wire is free, together when it is not. Without it, at a rate where a request per
    #: record costs the client more time than lies between records (a Python client at
    #: ~10k records/s), the queue grows without end (p99 latency in the hundreds of ms).
    gather: bool = False

    def __post_init__(self) -> None:
        if self.batch_size <= 0 or self.buffer_memory <= 0 or self.max_request_size <= 0:
            raise ValueError("batch_size, buffer_memory and max_request_size must be positive")
        if self.linger < 0 or self.retry_backoff < 0 or self.delivery_timeout <= 0:
            raise ValueError("linger, retry_backoff must be >= 0 and delivery_timeout > 0")
        if self.timer_slack < 0:
            raise ValueError("timer_slack must be >= 0")
        if self.max_in_flight_requests_per_connection < 1:
            raise ValueError("max_in_flight_requests_per_connection must be >= 1")
        if self.idempotent:
            if self.acks is not Acks.ALL:
                raise ValueError("idempotence needs acks='all' (or enable_idempotence=False)")
            if self.max_in_flight_requests_per_connection > 5:
                raise ValueError("idempotence allows at most 5 requests in flight")
            if self.retries < 1:
                raise ValueError("idempotence needs retries > 0")

    @property
    def lingered(self) -> float:
        """Seconds after it opened that a batch counts as lingered (see `timer_slack`)."""
        return max(0.0, self.linger - self.timer_slack / 2)

    @property
    def idempotent(self) -> bool:
        """Transactions imply idempotence."""
        return self.enable_idempotence or self.transactional_id is not None
