"""`MetadataMachine`: keeps a `ClusterMetadata` fresh, speaking the `krafka.sansio.actions`
contract like every other machine.

It decides when to refresh (on age, on request, on stale errors, with the growing backoff while
partitions lack leaders), sends its own Metadata requests and applies the answers. A refresh
round asks one address at a time: the known brokers in random order, else the bootstrap servers
in the order given; any failure of one (refused, silent, garbage, TLS) moves on to the next,
and a round nobody answered fails with an error naming every address and why. As Java's least
loaded node, a round skips addresses in reconnect backoff (`reconnect_wait`), and when every
one is, asks only the one free soonest: waiting out each dead broker's backoff in turn would
hold a refresh (and a rebootstrap) for the sum of them. A round given a `timeout` gives each
address an even share of the time left, so a silent first one leaves time for the others.
After no broker answered for `rebootstrap_trigger` seconds, or on REBOOTSTRAP_REQUIRED, it
rebootstraps (KIP-899): the cluster view is dropped (`Rebootstrapped` says which brokers to
disconnect) and the bootstrap servers (`update_bootstrap` replaces them) are asked again.

Outputs besides requests: `MetadataUpdated(round)` when an answer was applied,
`MetadataFailed(round, error)` when a round found no broker. `request(topics, now)` returns
the round whose outcome answers the caller (a refresh under way is shared when it already asks
for those topics).
"""

from __future__ import annotations

import copy
import logging
import random
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from krafka.errors import KafkaConnectionError, KrafkaError
from krafka.protocol.messages import MetadataRequest, MetadataResponse
from krafka.sansio.actions import Broker, SendRequest
from krafka.sansio.connection import Priority
from krafka.sansio.metadata.cluster import ClusterMetadata, MetadataConfig, RefreshReason
from krafka.sansio.transitions import transition

#: The newest Metadata version krafka asks for (v13+ only adds fields krafka does not read).
METADATA_MAX_VERSION: Final = 12
#: Node id of a bootstrap address (its real id is unknown until it answers).
BOOTSTRAP_NODE: Final = -1


_log = logging.getLogger("krafka.metadata")
_IDLE, _REFRESHING = "IDLE", "REFRESHING"


@dataclass(frozen=True, slots=True)
class MetadataUpdated:
    """Round `round` got an answer and the cluster view holds it."""

    round: int


@dataclass(frozen=True, slots=True)
class MetadataFailed:
    """Round `round` found no broker to answer; `error` names each address tried and why."""

    round: int
    error: KrafkaError


@dataclass(frozen=True, slots=True)
class Rebootstrapped:
    """KIP-899: the cluster view was dropped; connections to `addresses` should close."""

    addresses: tuple[tuple[str, int], ...]


@dataclass(slots=True)
class _Round:
    number: int
    topics: list[str] | None
    candidates: list[tuple[int | None, str, int]]
    errors: list[tuple[str, KrafkaError]] = field(default_factory=list)
    sent: SendRequest[MetadataResponse] | None = None
    #: The round ends by this time (None: each address has the request timeout).
    deadline: float | None = None


class MetadataMachine:
    """The metadata refresh policy of one client, as a machine (`krafka.sansio.actions`)."""

    def __init__(
        self,
        bootstrap: Sequence[tuple[str, int]],
        config: MetadataConfig | None = None,
        *,
        allow_auto_topic_creation: bool = True,
        now: float = 0.0,
        rand: Callable[[], float] = random.random,
        request_timeout: float = 30.0,
        reconnect_wait: Callable[[tuple[str, int], float], float] | None = None,
    ) -> None:
        self.cluster = ClusterMetadata(bootstrap, config or MetadataConfig(), now=now)
        self.allow_auto_topic_creation = allow_auto_topic_creation
        self.request_timeout = request_timeout
        #: Seconds before an address may be connected to again (the embedder's backoff).
        self._reconnect_wait = reconnect_wait or (lambda address, now: 0.0)
        self._deadline: float | None = None
        #: Rounds applied so far (MetadataUpdated events).
        self.generation = 0
        self._rand = rand
        self._rounds = 0
        self._round: _Round | None = None
        self._urgent = False
        self._all_topics = False
        self._actions: list[Any] = []

    # -- application inputs ---------------------------------------------------------------------

    def request(
        self,
        topics: Iterable[str] | None,
        now: float,
        *,
        all_topics: bool = False,
        timeout: float | None = None,
    ) -> int:
        """Ask for a refresh covering `topics` (tracked from now on; None or `all_topics`:
        every topic of the cluster). Returns the round whose outcome answers it. A topic never
        asked for before is looked up at once; otherwise the refresh backoff applies. A round
        started for it ends within `timeout` seconds when given."""
        self.cluster.now = now
        if timeout is not None:
            bound = now + timeout
            self._deadline = bound if self._deadline is None else min(self._deadline, bound)
        wanted = None if topics is None else list(topics)
        if wanted:
            self.cluster.add_topics(wanted, now)
        everything = all_topics or topics is None
        current = self._round
        if current is not None and not everything and not self._unrequested(current, wanted):
            return current.number
        if everything:
            self._all_topics = True
        if wanted and self.cluster.unrequested(wanted):
            self._urgent = True
        self.cluster.request_refresh(RefreshReason.REQUESTED, all_topics=everything)
        return self._rounds + 1

    def note_use(self, topic: str, now: float) -> None:
        """`topic` is being used: keep it refreshed (a new one is looked up)."""
        self.cluster.now = now
        self.cluster.note_use(topic, now)
        if self.cluster.unrequested((topic,)) and topic not in self.cluster.topics:
            self._urgent = True

    def update_bootstrap(self, servers: Sequence[tuple[str, int]]) -> None:
        """Replace the bootstrap servers: the next rebootstrap (KIP-899) starts from them."""
        self.cluster.bootstrap = list(servers)

    def on_error(self, code: int, topic: str | None = None) -> None:
        """A response carried `code`: stale metadata or REBOOTSTRAP_REQUIRED refresh it."""
        self.cluster.on_error(code, topic)

    @property
    def round_in_flight(self) -> int | None:
        """The round whose Metadata request is under way, if any."""
        return None if self._round is None else self._round.number

    # -- the Machine contract -------------------------------------------------------------------

    def next_actions(self, now: float) -> list[Any]:
        self.cluster.now = now
        if self._round is None and self._due(now):
            self._start_round(now, self._rounds + 1)
        actions, self._actions = self._actions, []
        return actions

    def next_deadline(self) -> float | None:
        if self._round is not None:
            return None  # waiting for an answer (the request has its own deadline)
        if self._urgent:
            return self.cluster.now
        return self.cluster.next_refresh_at()

    def on_response(self, sent: SendRequest[Any], response: Any, now: float) -> None:
        current = self._round
        if current is None or sent is not current.sent:
            return
        self.cluster.now = now
        self.cluster.update(response, now, current.topics)
        if self.cluster.rebootstrap_requested and self.cluster.config.rebootstrap:
            self._start_round(now, current.number)  # again, from the bootstrap servers
            return
        self._round = None
        transition(_log, "metadata", _REFRESHING, _IDLE, f"round {current.number} updated")
        self.cluster.connection_succeeded()
        self.generation += 1
        self._actions.append(MetadataUpdated(current.number))

    def on_failure(self, sent: SendRequest[Any], error: KrafkaError, now: float) -> None:
        current = self._round
        if current is None or sent is not current.sent:
            return
        self.cluster.now = now
        _, host, port = current.candidates.pop(0)
        current.errors.append((f"{host}:{port}", error))
        out_of_time = current.deadline is not None and now >= current.deadline
        if current.candidates and not out_of_time:
            self._send(current, now)
            return
        self._round = None
        transition(_log, "metadata", _REFRESHING, _IDLE, f"round {current.number} failed")
        cluster = self.cluster
        cluster.refresh_failed(now)
        cluster.connection_failed(now)
        if cluster.rebootstrap_due(now):
            cluster.request_refresh(RefreshReason.REBOOTSTRAP)
        self._actions.append(MetadataFailed(current.number, none_answered(current.errors)))

    # -- internals ------------------------------------------------------------------------------

    def _due(self, now: float) -> bool:
        return self._urgent or self.cluster.refresh_due(now)

    def _unrequested(self, current: _Round, topics: list[str] | None) -> bool:
        asked = current.topics
        return bool(topics) and asked is not None and any(t not in asked for t in topics or ())

    def _start_round(self, now: float, number: int) -> None:
        cluster = self.cluster
        if cluster.rebootstrap_due(now):
            gone = tuple(b.address for b in cluster.brokers.values())
            cluster.rebootstrap(now)
            self._actions.append(Rebootstrapped(gone))
        topics = cluster.topics_to_refresh(now)
        if self._all_topics:
            topics = None
        self._all_topics = self._urgent = False
        cluster.refresh_started(now, topics)
        candidates = cluster.addresses()
        if cluster.brokers:
            _shuffle(candidates, self._rand)
        self._rounds = max(self._rounds, number)
        what = "all topics" if topics is None else f"{len(topics)} topics"
        transition(_log, "metadata", _IDLE, _REFRESHING, f"round {number}, {what}")
        self._round = _Round(number, topics, self._not_held_back(candidates, now))
        self._round.deadline, self._deadline = self._deadline, None
        self._send(self._round, now)

    def _not_held_back(
        self, candidates: list[tuple[int | None, str, int]], now: float
    ) -> list[tuple[int | None, str, int]]:
        """The candidates not in reconnect backoff, in order; when every one is, the one free
        soonest."""
        waits = [self._reconnect_wait((host, port), now) for _, host, port in candidates]
        free = [c for c, wait in zip(candidates, waits, strict=True) if wait <= 0]
        if free or not candidates:
            return free
        return [candidates[waits.index(min(waits))]]

    def _send(self, current: _Round, now: float) -> None:
        node, host, port = current.candidates[0]
        timeout = None
        if current.deadline is not None:
            share = max(0.0, current.deadline - now) / len(current.candidates)
            timeout = min(self.request_timeout, share)
        wanted = None
        if current.topics is not None:
            wanted = [MetadataRequest.MetadataRequestTopic(name=t) for t in current.topics]
        request = MetadataRequest(
            topics=wanted, allow_auto_topic_creation=self.allow_auto_topic_creation
        )
        target = Broker(BOOTSTRAP_NODE if node is None else node, host, port)
        current.sent = SendRequest(
            target,
            request,
            timeout=timeout,
            priority=Priority.HIGH,
            max_version=METADATA_MAX_VERSION,
        )
        self._actions.append(current.sent)


def _shuffle(items: list[Any], rand: Callable[[], float]) -> None:
    """Fisher-Yates with `rand` (known brokers are asked in random order)."""
    for i in range(len(items) - 1, 0, -1):
        j = int(rand() * (i + 1))
        items[i], items[j] = items[j], items[i]


def none_answered(errors: list[tuple[str, KrafkaError]]) -> KrafkaError:
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


__all__ = [
    "BOOTSTRAP_NODE",
    "METADATA_MAX_VERSION",
    "MetadataFailed",
    "MetadataMachine",
    "MetadataUpdated",
    "Rebootstrapped",
]
