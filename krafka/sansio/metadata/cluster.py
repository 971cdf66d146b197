"""The client's view of the cluster: brokers, racks, topics, partitions, leaders, epochs, ids.

`ClusterMetadata` is the data and its bookkeeping; `MetadataMachine`
(`krafka.sansio.metadata.machine`) owns one and decides when to refresh it, or a driver asks it
*when* (`next_refresh_at`) and *which topics* (`topics_to_refresh`) and hands answers to
`update`. Machines read it through pure lookups (`leader`, `partitions`, `broker`, `topic_id`,
`topic_name`, `partition_counts`) that change nothing; noting that a topic is in use is the
separate `note_use(topic, now)`. Refreshes happen:

* on age: `max_age` after the last successful refresh (Java's `metadata.max.age.ms`);
* on stale-metadata errors (NOT_LEADER_OR_FOLLOWER, UNKNOWN_TOPIC_OR_PARTITION, ...) reported
  through `on_error`;
* on demand (`request_refresh`), e.g. when a new topic is first used.

Refreshes are spaced by `refresh_backoff`, doubling up to `refresh_backoff_max` while they
keep failing or keep finding partitions without a leader (Java's `Metadata` refresh backoff,
KIP-580), so a leaderless partition costs a few Metadata requests a second, not one per round
trip. Only topics not asked for before skip the wait (`refresh_wait`), as in Java.

Only topics in use are refreshed; a topic unused for `topic_idle_ttl` is forgotten
(Java's `metadata.max.idle.ms`). Looking a leader up to send to it (`leader_id`) is a use, so
a topic a producer keeps writing to stays refreshed without a call per record, and partitions
added to it show in `partition_counts` after the next refresh. KIP-899: when no broker could
be reached for `rebootstrap_trigger` seconds, or a broker answers REBOOTSTRAP_REQUIRED, the
cache is dropped and the bootstrap servers are used again.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from krafka.protocol.error_codes import ErrorCode
from krafka.sansio.codes import STALE_METADATA_CODES, UNUSABLE_TOPIC_CODES
from krafka.sansio.topic_name import check_topic

_ZERO_UUID = uuid.UUID(int=0)


@dataclass(frozen=True, slots=True)
class BrokerInfo:
    node_id: int
    host: str
    port: int
    rack: str | None = None

    @property
    def address(self) -> tuple[str, int]:
        return (self.host, self.port)


@dataclass(frozen=True, slots=True)
class PartitionInfo:
    topic: str
    partition: int
    leader: int
    leader_epoch: int = -1
    replicas: tuple[int, ...] = ()
    isr: tuple[int, ...] = ()
    offline_replicas: tuple[int, ...] = ()
    error_code: int = 0


@dataclass(frozen=True, slots=True)
class TopicInfo:
    name: str
    partitions: Mapping[int, PartitionInfo]
    topic_id: uuid.UUID | None = None
    is_internal: bool = False
    error_code: int = 0


@dataclass(frozen=True, slots=True)
class MetadataConfig:
    max_age: float = 300.0
    topic_idle_ttl: float = 300.0
    refresh_backoff: float = 0.1
    refresh_backoff_max: float = 1.0
    rebootstrap_trigger: float = 300.0
    rebootstrap: bool = True


class RefreshReason(Enum):
    BOOTSTRAP = "bootstrap"
    AGE = "age"
    STALE = "stale"
    REQUESTED = "requested"
    REBOOTSTRAP = "rebootstrap"


@dataclass(slots=True)
class _Refresh:
    last_success: float | None = None
    last_attempt: float | None = None
    wanted: RefreshReason | None = RefreshReason.BOOTSTRAP
    all_topics: bool = False
    #: Refreshes in a row that failed or left a partition without a leader.
    unresolved: int = 0
    #: The topics the last refresh asked for (None: all of them).
    requested: frozenset[str] | None = frozenset()


@dataclass(slots=True)
class ClusterMetadata:
    """Cached cluster metadata plus the refresh and rebootstrap policy."""

    bootstrap: Sequence[tuple[str, int]]
    config: MetadataConfig = field(default_factory=MetadataConfig)
    brokers: dict[int, BrokerInfo] = field(default_factory=dict)
    topics: dict[str, TopicInfo] = field(default_factory=dict)
    cluster_id: str | None = None
    controller_id: int = -1
    #: topic -> when it was last used; these are the topics a partial refresh asks for.
    interest: dict[str, float] = field(default_factory=dict)
    #: topic -> number of partitions, for every topic in `topics` (one object for the cache's
    #: lifetime: a hot path may keep a reference to it).
    partition_counts: dict[str, int] = field(default_factory=dict)
    #: topic -> the error of the last answer about it that carried no partitions.
    topic_errors: dict[str, int] = field(default_factory=dict)
    unreachable_since: float | None = None
    rebootstrap_requested: bool = False
    #: The owner's clock at its latest input (the one clock of the driver).
    now: float = 0.0
    _refresh: _Refresh = field(default_factory=_Refresh)

    # -- lookups --------------------------------------------------------------------------------

    def broker(self, node_id: int) -> BrokerInfo | None:
        return self.brokers.get(node_id)

    def partition(self, topic: str, partition: int) -> PartitionInfo | None:
        info = self.topics.get(topic)
        return None if info is None else info.partitions.get(partition)

    def partitions_for(self, topic: str) -> list[int]:
        info = self.topics.get(topic)
        return [] if info is None else sorted(info.partitions)

    def partitions(self, topic: str) -> list[int]:
        """The partition ids of `topic` ([] while unknown)."""
        return self.partitions_for(topic)

    def leader(self, topic: str, partition: int) -> int | None:
        """The leader's node id (None: unknown or leaderless). A pure lookup."""
        info = self.partition(topic, partition)
        return None if info is None or info.leader < 0 else info.leader

    def leader_for(self, topic: str, partition: int) -> BrokerInfo | None:
        """The leader broker of a partition, or None if unknown or leaderless."""
        info = self.partition(topic, partition)
        return None if info is None or info.leader < 0 else self.brokers.get(info.leader)

    def leader_id(self, topic: str, partition: int, now: float) -> int | None:
        """The leader's node id for a request about to go to it (None: unknown or leaderless).

        Counts as a use of `topic`: what is being written to or read from stays refreshed.
        """
        if topic in self.interest:
            self.interest[topic] = now
        else:
            self.add_topics((topic,), now)
        info = self.partition(topic, partition)
        return None if info is None or info.leader < 0 else info.leader

    def topic_pending(self, topic: str) -> bool:
        """The broker answered `topic` with a retriable topic-level error (LEADER_NOT_AVAILABLE
        while it is being created or its leaders elected): ask again shortly, as Java's
        `partitionsFor` does. An unknown topic is not pending: it is absent."""
        return _pending(self.topic_errors.get(topic, ErrorCode.NONE))

    def topic_id(self, topic: str) -> uuid.UUID | None:
        info = self.topics.get(topic)
        return None if info is None else info.topic_id

    def topic_name(self, topic_id: uuid.UUID) -> str | None:
        return next((t.name for t in self.topics.values() if t.topic_id == topic_id), None)

    def addresses(self) -> list[tuple[int | None, str, int]]:
        """Where to send a cluster-wide request: known brokers, else the bootstrap servers."""
        if self.brokers:
            return [(b.node_id, b.host, b.port) for b in self.brokers.values()]
        return [(None, host, port) for host, port in self.bootstrap]

    # -- interest and refresh policy ------------------------------------------------------------

    def add_topics(self, topics: Iterable[str], now: float) -> None:
        """Start tracking topics; an unknown one triggers a refresh. A name Kafka would refuse
        raises (`check_topic`) before anything is tracked."""
        topics = list(topics)
        for topic in topics:
            if topic not in self.interest:
                check_topic(topic)
        for topic in topics:
            if topic not in self.interest and topic not in self.topics:
                self.request_refresh()
            self.interest[topic] = now

    def note_use(self, topic: str, now: float) -> None:
        """Record a use of `topic`: keeps it refreshed; a new one triggers a refresh."""
        if topic not in self.interest:
            self.add_topics((topic,), now)
        else:
            self.interest[topic] = now

    touch = note_use

    def request_refresh(
        self, reason: RefreshReason = RefreshReason.REQUESTED, *, all_topics: bool = False
    ) -> None:
        refresh = self._refresh
        if refresh.wanted is None or reason is RefreshReason.REBOOTSTRAP:
            refresh.wanted = reason
        refresh.all_topics = refresh.all_topics or all_topics

    def on_error(self, code: int, topic: str | None = None) -> None:
        """Act on an error code from any response: stale metadata or REBOOTSTRAP_REQUIRED."""
        if code == ErrorCode.REBOOTSTRAP_REQUIRED and self.config.rebootstrap:
            self.rebootstrap_requested = True
            self.request_refresh(RefreshReason.REBOOTSTRAP)
        elif code in STALE_METADATA_CODES:
            self.request_refresh(RefreshReason.STALE)

    def next_refresh_at(self) -> float:
        """When the next refresh is due (may be in the past: due now)."""
        refresh = self._refresh
        if refresh.last_success is None and refresh.last_attempt is None:
            return 0.0
        backoff_until = (refresh.last_attempt or 0.0) + self.refresh_backoff()
        if refresh.wanted is not None:
            return backoff_until
        assert refresh.last_success is not None
        aged = refresh.last_success + self.config.max_age
        return aged if aged > backoff_until else backoff_until

    def refresh_due(self, now: float) -> bool:
        return now >= self.next_refresh_at()

    def refresh_backoff(self) -> float:
        """The least time between two refreshes now: `refresh_backoff`, doubled for each
        refresh in a row that failed or left a partition without a leader."""
        config = self.config
        if self._refresh.unresolved <= 1:  # no doubling: the common case, without the math
            return config.refresh_backoff
        doublings = self._refresh.unresolved - 1
        delay: float = config.refresh_backoff * 2.0 ** min(doublings, 32)
        return min(max(config.refresh_backoff, config.refresh_backoff_max), delay)

    def unrequested(self, topics: Iterable[str] | None) -> bool:
        """True when one of `topics` was not asked for by the last refresh."""
        requested = self._refresh.requested
        return (
            topics is not None and requested is not None and any(t not in requested for t in topics)
        )

    def refresh_wait(self, now: float, topics: Iterable[str] | None = None) -> float:
        """Seconds an explicit refresh for `topics` must wait for the backoff; 0 when one of
        them was not asked for by the last refresh (a new topic is looked up at once)."""
        if self.unrequested(topics):
            return 0.0
        last = self._refresh.last_attempt
        return 0.0 if last is None else max(0.0, last + self.refresh_backoff() - now)

    def topics_to_refresh(self, now: float) -> list[str] | None:
        """The topics to request (None: all topics); forgets topics idle past their TTL."""
        ttl = self.config.topic_idle_ttl
        for topic in [t for t, used in self.interest.items() if now - used > ttl]:
            del self.interest[topic]
            self._drop_topic(topic)
        if self._refresh.all_topics:
            return None
        return sorted(self.interest)

    def refresh_started(self, now: float, topics: Sequence[str] | None = ()) -> None:
        """A refresh asking for `topics` (None: all topics) goes out at `now`."""
        self._refresh.last_attempt = now
        self._refresh.requested = None if topics is None else frozenset(topics)

    def refresh_failed(self, now: float) -> None:
        self._refresh.last_attempt = now
        self._refresh.unresolved += 1
        if self._refresh.wanted is None:
            self._refresh.wanted = RefreshReason.AGE

    # -- update ---------------------------------------------------------------------------------

    def update(self, response: Any, now: float, requested: Sequence[str] | None = None) -> None:
        """Apply a Metadata response. `requested` is the topic list sent (None: all topics)."""
        code = int(getattr(response, "error_code", 0) or 0)
        if code == ErrorCode.REBOOTSTRAP_REQUIRED:
            self.on_error(code)
            return
        self.brokers = {
            int(b.node_id): BrokerInfo(int(b.node_id), str(b.host), int(b.port), b.rack)
            for b in response.brokers
        }
        self.cluster_id = getattr(response, "cluster_id", None)
        self.controller_id = int(getattr(response, "controller_id", -1))
        refresh = self._refresh
        refresh.last_success = refresh.last_attempt = now
        refresh.wanted = None
        refresh.all_topics = False
        if requested is None:
            for name in [k for k in self.topics if k not in self.interest]:
                self._drop_topic(name)
        unresolved = False
        for topic in response.topics:
            unresolved = self._update_topic(topic) or unresolved
        refresh.unresolved = refresh.unresolved + 1 if unresolved else 0
        self.rebootstrap_requested = False
        self.unreachable_since = None

    def _update_topic(self, topic: Any) -> bool:
        """Apply one topic; True when it is still unresolved (no leader, or a stale code)."""
        name = topic.name
        if name is None:
            return False
        error = int(topic.error_code)
        if error != ErrorCode.NONE and (not topic.partitions or error in UNUSABLE_TOPIC_CODES):
            self._drop_topic(name)
            self.topic_errors[name] = error
            if error in STALE_METADATA_CODES or error == ErrorCode.LEADER_NOT_AVAILABLE:
                self._refresh.wanted = self._refresh.wanted or RefreshReason.STALE
                return True
            return False
        if _pending(error):
            self.topic_errors[name] = error  # described, but still settling
        else:
            self.topic_errors.pop(name, None)
        old = self.topics.get(name)
        unresolved = False
        partitions = {}
        for part in topic.partitions:
            info = _partition(name, part)
            previous = None if old is None else old.partitions.get(info.partition)
            if previous is not None and info.leader_epoch < previous.leader_epoch:
                info = previous  # a lagging broker's older view; keep the newer one
            if info.error_code in STALE_METADATA_CODES or info.leader < 0:
                self._refresh.wanted = self._refresh.wanted or RefreshReason.STALE
                unresolved = True
            partitions[info.partition] = info
        self.topics[name] = TopicInfo(
            name=name,
            partitions=partitions,
            topic_id=_topic_id(getattr(topic, "topic_id", None)),
            is_internal=bool(getattr(topic, "is_internal", False)),
            error_code=error,
        )
        self.partition_counts[name] = len(partitions)
        return unresolved

    def _drop_topic(self, name: str) -> None:
        self.topics.pop(name, None)
        self.partition_counts.pop(name, None)

    # -- reachability and KIP-899 rebootstrap -----------------------------------------------------

    def connection_succeeded(self) -> None:
        self.unreachable_since = None

    def connection_failed(self, now: float) -> None:
        if self.unreachable_since is None:
            self.unreachable_since = now

    def rebootstrap_due(self, now: float) -> bool:
        if not self.config.rebootstrap:
            return False
        if self.rebootstrap_requested:
            return True
        since = self.unreachable_since
        return since is not None and now - since >= self.config.rebootstrap_trigger

    def rebootstrap(self, now: float) -> None:
        """Forget every broker and topic layout; the next refresh goes to the bootstrap servers."""
        self.brokers.clear()
        self.topics.clear()
        self.partition_counts.clear()
        self.topic_errors.clear()
        self.cluster_id = None
        self.controller_id = -1
        self.rebootstrap_requested = False
        self.unreachable_since = None
        self._refresh.wanted = RefreshReason.REBOOTSTRAP
        self._refresh.last_attempt = None
        self._refresh.unresolved = 0
        self._refresh.requested = frozenset()


def _partition(topic: str, part: Any) -> PartitionInfo:
    return PartitionInfo(
        topic=topic,
        partition=int(part.partition_index),
        leader=int(part.leader_id),
        leader_epoch=int(getattr(part, "leader_epoch", -1)),
        replicas=tuple(part.replica_nodes or ()),
        isr=tuple(part.isr_nodes or ()),
        offline_replicas=tuple(getattr(part, "offline_replicas", None) or ()),
        error_code=int(part.error_code),
    )


def _pending(code: int) -> bool:
    """A topic-level error that clears up by itself (UNKNOWN_TOPIC_OR_PARTITION, retriable in
    Kafka's table, means absent: a topic nobody creates does not appear by waiting)."""
    try:
        error = ErrorCode(code)
    except ValueError:
        return False
    return error.retriable and error != ErrorCode.UNKNOWN_TOPIC_OR_PARTITION


def _topic_id(value: object) -> uuid.UUID | None:
    if isinstance(value, uuid.UUID):
        return None if value == _ZERO_UUID else value
    if isinstance(value, bytes | bytearray) and len(value) == 16:
        parsed = uuid.UUID(bytes=bytes(value))
        return None if parsed == _ZERO_UUID else parsed
    return None


def parse_bootstrap(servers: str | Sequence[str]) -> list[tuple[str, int]]:
    """`"h1:9092,h2:9093"` or `["h1:9092"]` -> [(host, port)]; IPv6 as `[::1]:9092`."""
    items = servers.split(",") if isinstance(servers, str) else list(servers)
    out = []
    for item in (s.strip() for s in items):
        if not item:
            continue
        host, sep, port = item.rpartition(":")
        if not sep or not port.isdigit():
            raise ValueError(f"bootstrap server {item!r} is not host:port")
        out.append((host.strip("[]"), int(port)))
    if not out:
        raise ValueError("no bootstrap servers given")
    return out
