"""Play the embedder and the brokers of a `krafka.sansio.client.ClientCore`, with exact bytes.

A test owns the clock, opens (or refuses) every connection the core wants, answers ApiVersions
by itself, and answers every other request by hand through the wire format:

    cluster = ScriptedCluster(ClientCore(ClientConfig("b1:9092"), now=0.0))
    cluster.step()
    meta = cluster.take(ApiKey.METADATA)              # the bootstrap refresh
    cluster.answer(meta, metadata_response({1: ("b1", 9092)}, {"t": [1, 1]}))
    events = cluster.step()
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from krafka.errors import KafkaConnectionError, KrafkaError
from krafka.protocol import REQUESTS, ApiKey, client_versions
from krafka.protocol.messages import FindCoordinatorResponse, MetadataResponse
from krafka.sansio.client import ClientCore, CloseConnection, OpenConnection
from krafka.testing.scripted import Sent, api_versions, parse_requests, response_bytes

#: Every API krafka speaks, at every version it speaks (a broker as new as krafka).
ALL_VERSIONS: Mapping[ApiKey, tuple[int, int]] = {api: client_versions(api) for api in REQUESTS}


@dataclass(frozen=True)
class Asked:
    """One request a connection of the core wrote."""

    conn_id: int
    address: tuple[str, int]
    sent: Sent

    @property
    def body(self) -> Any:
        return self.sent.body


@dataclass
class ScriptedCluster:
    """The sockets, the clock and the brokers of one core."""

    core: ClientCore
    now: float = 0.0
    #: Addresses whose connections fail at once (the error given).
    refuse: dict[tuple[str, int], KrafkaError] = field(default_factory=dict)
    #: Addresses that accept but never answer (not even ApiVersions).
    silent: set[tuple[str, int]] = field(default_factory=set)
    versions: Mapping[ApiKey, tuple[int, int]] = field(default_factory=lambda: ALL_VERSIONS)
    opened: dict[int, tuple[str, int]] = field(default_factory=dict)
    closed: dict[int, bool] = field(default_factory=dict)
    asked: list[Asked] = field(default_factory=list)
    events: list[Any] = field(default_factory=list)

    def advance(self, seconds: float) -> list[Any]:
        self.now += seconds
        return self.step()

    def advance_to_deadline(self) -> list[Any]:
        deadline = self.core.next_deadline()
        assert deadline is not None, "the core has no deadline"
        self.now = max(self.now, deadline)
        return self.step()

    def step(self) -> list[Any]:
        """Step the core, carry out its wants, collect what it wrote; returns new events."""
        new: list[Any] = []
        for _ in range(20):
            events = self.core.step(self.now)
            new += events
            if not self._carry_out() and not events:
                break
        self.events += new
        return new

    def take(self, api: ApiKey, address: tuple[str, int] | None = None) -> Asked:
        """The first unanswered request of `api` (to `address`); fails if there is none."""
        self.step()
        for asked in self.asked:
            if asked.sent.api_key == api and (address is None or asked.address == address):
                self.asked.remove(asked)
                return asked
        raise AssertionError(f"no {api.name} asked; asked: {[a.sent.api_key for a in self.asked]}")

    def pending(self, api: ApiKey | None = None) -> list[Asked]:
        self.step()
        return [a for a in self.asked if api is None or a.sent.api_key == api]

    def answer(self, asked: Asked, body: Any) -> list[Any]:
        """Answer `asked` with `body` (encoded at the version it was sent with)."""
        data = response_bytes(asked.sent, body)
        self.core.receive_data(asked.conn_id, data, self.now)
        return self.step()

    def drop(self, conn_id: int) -> list[Any]:
        """The peer closes `conn_id`."""
        self.asked = [a for a in self.asked if a.conn_id != conn_id]
        self.core.receive_data(conn_id, b"", self.now)
        return self.step()

    def _carry_out(self) -> bool:
        acted = False
        for want in self.core.connections_wanted():
            acted = True
            if isinstance(want, OpenConnection):
                self._open(want)
            elif isinstance(want, CloseConnection):
                self.closed[want.conn_id] = want.abort
                self.opened.pop(want.conn_id, None)
                self.asked = [a for a in self.asked if a.conn_id != want.conn_id]
        for conn_id, address in list(self.opened.items()):
            data = self.core.data_to_send(conn_id)
            if not data:
                continue
            acted = True
            for sent in parse_requests(data):
                if sent.api_key == ApiKey.API_VERSIONS and address not in self.silent:
                    body = api_versions(dict(self.versions))
                    self.core.receive_data(conn_id, response_bytes(sent, body), self.now)
                else:
                    self.asked.append(Asked(conn_id, address, sent))
        return acted

    def _open(self, want: OpenConnection) -> None:
        address = (want.host, want.port)
        error = self.refuse.get(address)
        if error is not None:
            self.core.connection_failed(want.conn_id, error, self.now)
            return
        self.opened[want.conn_id] = address
        self.core.connection_made(want.conn_id, self.now)


def refused(address: tuple[str, int]) -> KafkaConnectionError:
    return KafkaConnectionError(f"cannot reach {address[0]}:{address[1]}: Connection refused")


def metadata_response(
    brokers: Mapping[int, tuple[str, int]],
    topics: Mapping[str, list[int]] | None = None,
    *,
    topic_errors: Mapping[str, int] | None = None,
) -> MetadataResponse:
    """Brokers by node id; each topic's partition leaders (-1: none); topic-level errors."""
    answer_brokers = [
        MetadataResponse.MetadataResponseBroker(node_id=node, host=host, port=port)
        for node, (host, port) in brokers.items()
    ]
    answer_topics = []
    for name, leaders in (topics or {}).items():
        parts = [
            MetadataResponse.MetadataResponseTopic.MetadataResponsePartition(
                partition_index=i, leader_id=leader, replica_nodes=[leader], isr_nodes=[leader]
            )
            for i, leader in enumerate(leaders)
        ]
        answer_topics.append(MetadataResponse.MetadataResponseTopic(name=name, partitions=parts))
    for name, code in (topic_errors or {}).items():
        answer_topics.append(
            MetadataResponse.MetadataResponseTopic(name=name, error_code=code, partitions=[])
        )
    return MetadataResponse(
        brokers=answer_brokers,
        topics=answer_topics,
        cluster_id="scripted",
        controller_id=min(brokers, default=-1),
    )


def coordinator_response(
    asked: Asked, node_id: int, address: tuple[str, int], error_code: int = 0
) -> FindCoordinatorResponse:
    """The answer to a FindCoordinator, in the shape of the version it was sent with (v4+
    batches keys)."""
    host, port = address
    if asked.sent.version < 4:
        return FindCoordinatorResponse(error_code=error_code, node_id=node_id, host=host, port=port)
    found = [
        FindCoordinatorResponse.Coordinator(
            key=key, node_id=node_id, host=host, port=port, error_code=error_code
        )
        for key in asked.body.coordinator_keys
    ]
    return FindCoordinatorResponse(coordinators=found)


__all__ = [
    "ALL_VERSIONS",
    "Asked",
    "ScriptedCluster",
    "coordinator_response",
    "metadata_response",
    "refused",
]
