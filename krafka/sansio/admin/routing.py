"""Where each item of an admin call is sent: any broker, one broker, the controller, the
item's coordinator or its partition leader.

A routing answers `locate(keys, now)` with the target of every item it can place now (or the
item's failure), plus the lookups to send to place the others: a Metadata request for broker
addresses, the controller and partition leaders, FindCoordinator for coordinators. `locate` is
idempotent (a lookup in flight is not repeated), so the operation asks again on every step for
the items it has not placed. `forget(key)` drops what was learned for an item whose broker
turned out to be the wrong one.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any, Final, Generic, Protocol, TypeVar

from krafka.errors import (
    BrokerError,
    BrokerNotAvailableError,
    KrafkaError,
    UnsupportedVersionError,
    error_for_code,
)
from krafka.protocol.error_codes import ErrorCode
from krafka.protocol.messages import ApiKey, MetadataRequest, MetadataResponse
from krafka.sansio.actions import AnyBroker, Broker, SendRequest, Versioned
from krafka.sansio.admin.outcome import (
    LEADER_MOVED,
    Fail,
    ItemResult,
    Retry,
    error_from,
    for_code,
)
from krafka.sansio.backoff import BackoffPolicy
from krafka.sansio.connection import Priority
from krafka.sansio.coordinator import CoordinatorLink, CoordinatorType
from krafka.structs import TopicPartition

K = TypeVar("K", bound=Hashable)
Target = Broker | AnyBroker
Placement = Target | ItemResult
Located = tuple[dict[K, Placement], list[SendRequest[Any]]]

#: The newest Metadata version lookups speak (the client's own refreshes use the same cap).
METADATA_MAX_VERSION: Final = 12


class Routing(Protocol[K]):
    def locate(self, keys: Sequence[K], now: float) -> Located[K]: ...

    def owns(self, sent: SendRequest[Any]) -> bool: ...

    def on_response(self, sent: SendRequest[Any], response: Any, now: float) -> None: ...

    def on_failure(self, sent: SendRequest[Any], error: KrafkaError, now: float) -> None: ...

    def forget(self, key: K) -> None: ...

    def next_deadline(self) -> float | None: ...


class _NoLookups(Generic[K]):
    def owns(self, sent: SendRequest[Any]) -> bool:
        return False

    def on_response(self, sent: SendRequest[Any], response: Any, now: float) -> None:
        return None

    def on_failure(self, sent: SendRequest[Any], error: KrafkaError, now: float) -> None:
        return None

    def forget(self, key: K) -> None:
        return None

    def next_deadline(self) -> float | None:
        return None


class ToAnyBroker(_NoLookups[K]):
    """Every item to any broker (the least loaded one), all in one request."""

    def locate(self, keys: Sequence[K], now: float) -> Located[K]:
        return {key: AnyBroker() for key in keys}, []


def _lookup_failed(error: KrafkaError) -> ItemResult:
    return Retry(error, whole=True) if error.retriable else Fail(error, whole=True)


class _MetadataLookup:
    """Metadata requests for some topics (or none: brokers and controller only), one in flight
    per topic set; the answers are kept until forgotten."""

    def __init__(self) -> None:
        self.sent: dict[SendRequest[MetadataResponse], tuple[str, ...]] = {}

    def request(self, topics: Sequence[str]) -> SendRequest[MetadataResponse]:
        wanted = [MetadataRequest.MetadataRequestTopic(name=t) for t in topics]

        def build(version: int) -> MetadataRequest:
            # v4+ can ask the broker not to create the topics (older ones cannot be asked)
            return MetadataRequest(topics=wanted, allow_auto_topic_creation=version < 4)

        sent = SendRequest(
            AnyBroker(),
            Versioned(ApiKey.METADATA, build),
            max_version=METADATA_MAX_VERSION,
            priority=Priority.HIGH,
        )
        self.sent[sent] = tuple(topics)
        return sent

    def in_flight(self) -> set[str]:
        return {topic for topics in self.sent.values() for topic in topics}


def _brokers(response: MetadataResponse) -> dict[int, Broker]:
    return {
        int(b.node_id): Broker(int(b.node_id), str(b.host), int(b.port)) for b in response.brokers
    }


class ToBrokers(_MetadataLookup, Generic[K]):
    """Each item to the broker `node_of(item)` names (None: any broker), or every item to the
    controller. Broker addresses come from one Metadata request (or `nodes`, when known)."""

    def __init__(
        self,
        node_of: Callable[[K], int | None] | None = None,
        *,
        controller: bool = False,
        nodes: Mapping[int, Broker] | None = None,
    ) -> None:
        super().__init__()
        self._node_of = node_of
        self._controller = controller
        self._nodes: dict[int, Broker] | None = dict(nodes) if nodes else None
        self._controller_id: int | None = None
        self._error: KrafkaError | None = None

    def locate(self, keys: Sequence[K], now: float) -> Located[K]:
        anywhere = [k for k in keys if not self._controller and self._node(k) is None]
        placed: dict[K, Placement] = {k: AnyBroker() for k in anywhere}
        needs_cluster = [k for k in keys if k not in placed]
        if not needs_cluster:
            return placed, []
        if self._error is not None:
            result, self._error = _lookup_failed(self._error), None
            placed.update(dict.fromkeys(needs_cluster, result))
            return placed, []
        if self._nodes is None or (self._controller and self._controller_id is None):
            return placed, ([] if self.sent else [self.request([])])
        for key in needs_cluster:
            placed[key] = self._place(key)
        return placed, []

    def _node(self, key: K) -> int | None:
        return None if self._node_of is None else self._node_of(key)

    def _place(self, key: K) -> Placement:
        assert self._nodes is not None
        node = self._controller_id if self._controller else self._node(key)
        broker = self._nodes.get(node) if node is not None else None
        if broker is not None:
            return broker
        if self._controller:
            self._controller_id = None
            return Retry(error_for_code(ErrorCode.NOT_CONTROLLER, "no controller known"))
        return Fail(BrokerNotAvailableError(f"broker {node} is not in the cluster"))

    def owns(self, sent: SendRequest[Any]) -> bool:
        return sent in self.sent

    def on_response(self, sent: SendRequest[Any], response: Any, now: float) -> None:
        self.sent.pop(sent, None)
        assert isinstance(response, MetadataResponse)
        self._nodes = _brokers(response)
        controller = int(response.controller_id)
        self._controller_id = controller if controller >= 0 else None
        if self._controller and self._controller_id is None:
            self._error = error_for_code(ErrorCode.NOT_CONTROLLER, "the cluster has no controller")

    def on_failure(self, sent: SendRequest[Any], error: KrafkaError, now: float) -> None:
        self.sent.pop(sent, None)
        self._error = error

    def forget(self, key: K) -> None:
        if self._controller:
            self._controller_id = None
            self._nodes = None

    def next_deadline(self) -> float | None:
        return None


class ToLeaders(_MetadataLookup):
    """Each partition to its leader, learned by a Metadata request for the partitions' topics.

    An unknown topic or partition fails its items at once (a Metadata answer is the cluster's
    word on which topics exist); a partition without a leader is retried after backoff.
    """

    def __init__(self) -> None:
        super().__init__()
        self._topics: dict[str, Any] = {}
        self._nodes: dict[int, Broker] = {}
        self._errors: dict[str, KrafkaError] = {}

    def locate(self, keys: Sequence[TopicPartition], now: float) -> Located[TopicPartition]:
        placed: dict[TopicPartition, Placement] = {}
        missing: set[str] = set()
        stale: set[str] = set()
        for key in keys:
            error = self._errors.get(key.topic)
            if error is not None:
                placed[key] = _lookup_failed(error)
                stale.add(key.topic)
            elif key.topic in self._topics:
                placed[key] = self._place(key)
                if not isinstance(placed[key], Broker):
                    stale.add(key.topic)
            else:
                missing.add(key.topic)
        for topic in stale:
            self._topics.pop(topic, None)
            self._errors.pop(topic, None)
        wanted = sorted(missing - self.in_flight())
        return placed, ([self.request(wanted)] if wanted else [])

    def _place(self, key: TopicPartition) -> Placement:
        topic = self._topics[key.topic]
        what = f"partition {key}"
        outcome = for_code(
            int(topic.error_code), f"metadata for topic {key.topic!r}", moved=LEADER_MOVED
        )
        if outcome is not None:
            if int(topic.error_code) == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION:
                return Fail(error_from(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, what))
            return outcome
        part = next((p for p in topic.partitions if int(p.partition_index) == key.partition), None)
        if part is None:
            return Fail(error_from(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, what, "no such partition"))
        outcome = for_code(int(part.error_code), what, moved=LEADER_MOVED)
        if outcome is not None and int(part.error_code) != ErrorCode.REPLICA_NOT_AVAILABLE:
            return outcome
        leader = self._nodes.get(int(part.leader_id))
        if leader is None:
            return Retry(error_from(ErrorCode.LEADER_NOT_AVAILABLE, what))
        return leader

    def owns(self, sent: SendRequest[Any]) -> bool:
        return sent in self.sent

    def on_response(self, sent: SendRequest[Any], response: Any, now: float) -> None:
        topics = self.sent.pop(sent, ())
        assert isinstance(response, MetadataResponse)
        self._nodes.update(_brokers(response))
        answered = {str(t.name): t for t in response.topics if t.name is not None}
        for name in topics:
            topic = answered.get(name)
            if topic is None:
                self._errors[name] = error_from(
                    ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"metadata for topic {name!r}"
                )
            else:
                self._topics[name] = topic

    def on_failure(self, sent: SendRequest[Any], error: KrafkaError, now: float) -> None:
        for topic in self.sent.pop(sent, ()):
            self._errors[topic] = error

    def forget(self, key: TopicPartition) -> None:
        self._topics.pop(key.topic, None)

    def next_deadline(self) -> float | None:
        return None


class ToCoordinators(Generic[K]):
    """Each item to the coordinator of `key_of(item)` (a group or transactional id), found
    and kept by one `CoordinatorLink` per id."""

    def __init__(
        self,
        key_type: CoordinatorType,
        key_of: Callable[[K], str],
        backoff: BackoffPolicy,
        rand: Callable[[], float],
    ) -> None:
        self._key_type = key_type
        self._key_of = key_of
        self._backoff = backoff
        self._rand = rand
        self._links: dict[str, CoordinatorLink] = {}

    def link(self, key: K) -> CoordinatorLink:
        name = self._key_of(key)
        link = self._links.get(name)
        if link is None:
            link = self._links[name] = CoordinatorLink(
                name, self._key_type, self._backoff, self._rand
            )
        return link

    def locate(self, keys: Sequence[K], now: float) -> Located[K]:
        placed: dict[K, Placement] = {}
        lookups: list[SendRequest[Any]] = []
        for key in keys:
            link = self.link(key)
            target = link.target()
            fatal = link.fatal_error()
            if target is not None:
                placed[key] = target
            elif fatal is not None:
                placed[key] = Fail(fatal, whole=not _answered(fatal))
            else:
                sent = link.lookup(now)
                if sent is not None:
                    lookups.append(sent)
        return placed, lookups

    def _owner(self, sent: SendRequest[Any]) -> CoordinatorLink | None:
        return next((link for link in self._links.values() if link.owns(sent)), None)

    def owns(self, sent: SendRequest[Any]) -> bool:
        return self._owner(sent) is not None

    def on_response(self, sent: SendRequest[Any], response: Any, now: float) -> None:
        link = self._owner(sent)
        if link is not None:
            link.on_response(sent, response, now)

    def on_failure(self, sent: SendRequest[Any], error: KrafkaError, now: float) -> None:
        link = self._owner(sent)
        if link is not None:
            link.on_failure(sent, error, now)

    def forget(self, key: K) -> None:
        self.link(key).mark_unknown()

    def next_deadline(self) -> float | None:
        times = [t for link in self._links.values() if (t := link.next_deadline()) is not None]
        return min(times, default=None)


def _answered(error: KrafkaError) -> bool:
    """A broker's error code about the item (as opposed to a local or transport failure)."""
    return isinstance(error, BrokerError) and not isinstance(error, UnsupportedVersionError)


__all__ = [
    "METADATA_MAX_VERSION",
    "Located",
    "Placement",
    "Routing",
    "Target",
    "ToAnyBroker",
    "ToBrokers",
    "ToCoordinators",
    "ToLeaders",
]
