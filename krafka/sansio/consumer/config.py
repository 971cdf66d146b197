"""What the consumer engine decides with (Java's ConsumerConfig, durations in seconds)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Final

from krafka.sansio.backoff import BackoffPolicy
from krafka.sansio.consumer.completed_fetch import Deserializer
from krafka.sansio.consumer.fetcher import FetchConfig
from krafka.sansio.consumer.subscription import ResetStrategy
from krafka.sansio.group.classic.assignors import PartitionAssignor, assignors_for
from krafka.sansio.group.config import GroupConfig
from krafka.structs import TopicPartition

#: Java's default `partition.assignment.strategy`: range, upgradable to cooperative-sticky.
DEFAULT_ASSIGNORS: Final = ("range", "cooperative-sticky")


class GroupProtocol(Enum):
    """`group_protocol`: the classic JoinGroup/SyncGroup protocol, or KIP-848's."""

    CLASSIC = "classic"
    CONSUMER = "consumer"

    @classmethod
    def parse(cls, value: GroupProtocol | str) -> GroupProtocol:
        if isinstance(value, GroupProtocol):
            return value
        try:
            return cls(value.strip().lower())
        except ValueError:
            raise ValueError('group_protocol must be "classic" or "consumer"') from None


@dataclass(frozen=True, slots=True)
class ConsumerConfig:
    """Everything the engine needs; `group` is None without a `group_id`."""

    fetch: FetchConfig = field(default_factory=FetchConfig)
    group: GroupConfig | None = None
    group_protocol: GroupProtocol = GroupProtocol.CLASSIC
    #: Classic members' assignors, in preference order (Java's default unless given).
    assignors: tuple[PartitionAssignor, ...] = field(
        default_factory=lambda: assignors_for(DEFAULT_ASSIGNORS)
    )
    #: KIP-848: the coordinator-side assignor to ask for (None: its default).
    remote_assignor: str | None = None
    auto_offset_reset: ResetStrategy = ResetStrategy.LATEST
    initial_offsets: Mapping[TopicPartition, int] = field(default_factory=dict)
    max_poll_records: int = 500
    key_deserializer: Deserializer | None = None
    value_deserializer: Deserializer | None = None
    default_api_timeout: float = 60.0
    #: How often a subscription's topics are looked up again (a pattern then matches new
    #: topics): the consumer's metadata_max_age, at most 30 s apart.
    metadata_max_age: float = 300.0
    #: Backoff while a subscribed topic is missing from the cluster (being created).
    retry_backoff: BackoffPolicy = field(
        default_factory=lambda: BackoffPolicy(initial=0.1, maximum=1.0, max_retries=None)
    )

    @property
    def auto_commit(self) -> bool:
        return self.group is not None and self.group.enable_auto_commit

    @property
    def subscription_refresh(self) -> float:
        return min(30.0, self.metadata_max_age)


__all__ = ["DEFAULT_ASSIGNORS", "ConsumerConfig", "GroupProtocol"]
