"""A classic group member's settings: Java property names in snake_case, durations in seconds.

Defaults are Java's (KafkaConsumer 3.x): 45 s session, 3 s heartbeats, 5 min poll interval
(which is also the rebalance timeout the member announces), auto-commit every 5 s, retries
backing off from 100 ms to 1 s.
"""

from __future__ import annotations

from dataclasses import dataclass

from krafka.errors import ConfigError


@dataclass(frozen=True, slots=True)
class GroupConfig:
    """Everything the sans-IO group member needs to decide; validated on creation."""

    group_id: str
    #: Static membership (KIP-345): a stable identity that survives restarts.
    group_instance_id: str | None = None
    session_timeout: float = 45.0
    heartbeat_interval: float = 3.0
    max_poll_interval: float = 300.0
    #: How long the coordinator waits for members to rejoin; None: `max_poll_interval` (Java).
    rebalance_timeout: float | None = None
    retry_backoff: float = 0.1
    retry_backoff_max: float = 1.0
    request_timeout: float = 30.0
    #: How long a commit or a committed-offsets fetch retries retriable errors by default.
    default_api_timeout: float = 60.0
    enable_auto_commit: bool = True
    auto_commit_interval: float = 5.0
    client_rack: str | None = None
    #: OffsetFetch waits for pending transactional commits (KIP-447's require_stable).
    require_stable: bool = True
    leave_group_on_close: bool = True

    def __post_init__(self) -> None:
        if not self.group_id:
            raise ConfigError("a group member needs a non-empty group_id")
        if self.group_instance_id == "":
            raise ConfigError("group_instance_id must be None or a non-empty string")
        positive = {
            "session_timeout": self.session_timeout,
            "heartbeat_interval": self.heartbeat_interval,
            "max_poll_interval": self.max_poll_interval,
            "request_timeout": self.request_timeout,
            "default_api_timeout": self.default_api_timeout,
            "auto_commit_interval": self.auto_commit_interval,
        }
        for name, value in positive.items():
            if value <= 0:
                raise ConfigError(f"{name} must be positive, got {value}")
        if self.heartbeat_interval >= self.session_timeout:
            raise ConfigError(
                f"heartbeat_interval ({self.heartbeat_interval}s) must be lower than "
                f"session_timeout ({self.session_timeout}s)"
            )
        if self.retry_backoff < 0 or self.retry_backoff_max < self.retry_backoff:
            raise ConfigError("need 0 <= retry_backoff <= retry_backoff_max")
        if self.rebalance_timeout is not None and self.rebalance_timeout <= 0:
            raise ConfigError(f"rebalance_timeout must be positive, got {self.rebalance_timeout}")

    @property
    def rebalance_timeout_s(self) -> float:
        return self.max_poll_interval if self.rebalance_timeout is None else self.rebalance_timeout

    @property
    def is_static(self) -> bool:
        return self.group_instance_id is not None


__all__ = ["GroupConfig"]
