"""A `KafkaClient` that keeps every Fetch krafka sent (as built for the negotiated version),
the broker it went to and the broker's answer: to check fetch sessions (KIP-227) and
follower fetching (KIP-392) against what a real broker said."""

from __future__ import annotations

import dataclasses
from collections import Counter
from dataclasses import dataclass
from typing import Any

from krafka.errors import KrafkaError
from krafka.io.client import KafkaClient
from krafka.protocol import ApiKey
from krafka.protocol.messages import FetchRequest, FetchResponse
from krafka.sansio.actions import Broker, Machine, SendRequest, Versioned
from krafka.sansio.consumer.engine import ConsumerEngine
from krafka.testing.machine_proxy import MachineProxy


@dataclass(frozen=True)
class FetchExchange:
    node_id: int | None
    version: int
    request: FetchRequest
    response: FetchResponse

    def partitions(self) -> list[int]:
        """The partitions the request names (the tests read one topic)."""
        return sorted(p.partition for t in self.request.topics for p in t.partitions)

    def forgotten(self) -> list[int]:
        return sorted(p for t in self.request.forgotten_topics_data for p in t.partitions)

    def records(self) -> int:
        """Bytes of record data in the answer."""
        return sum(len(p.records or b"") for t in self.response.responses for p in t.partitions)


class _RecordedFetches(MachineProxy):
    """A consumer engine whose Fetch requests are kept with the broker's answers."""

    def __init__(self, machine: Machine, client: RecordingClient) -> None:
        super().__init__(machine)
        self.fetches = client.fetches
        self.client = client
        self.built: dict[int, tuple[int, FetchRequest]] = {}

    def on_response(self, sent: SendRequest[Any], response: Any, now: float) -> None:
        self.client.fetch_ended(sent)
        super().on_response(sent, response, now)

    def on_failure(self, sent: SendRequest[Any], error: KrafkaError, now: float) -> None:
        self.client.fetch_ended(sent)
        super().on_failure(sent, error, now)

    def outgoing(self, sent: SendRequest[Any], now: float) -> tuple[SendRequest[Any], float]:
        self.client.fetch_started(sent)
        request = sent.request
        if not (isinstance(request, Versioned) and request.api_key == ApiKey.FETCH):
            return sent, now
        holder: list[SendRequest[Any]] = []

        def build(version: int) -> Any:
            made = request.build(version)
            self.built[id(holder[0])] = (version, made)
            return made

        placed = dataclasses.replace(sent, request=Versioned(request.api_key, build))
        holder.append(placed)
        return placed, now

    def answered(self, sent: SendRequest[Any], placed: SendRequest[Any], response: Any) -> None:
        node = sent.target.node_id if isinstance(sent.target, Broker) else None
        if isinstance(sent.request, FetchRequest):  # closing a session: any version from 7
            self.fetches.append(FetchExchange(node, -1, sent.request, response))
            return
        built = self.built.pop(id(placed), None)
        if built is not None:
            version, made = built
            self.fetches.append(FetchExchange(node, version, made, response))


class RecordingClient(KafkaClient):
    """Keeps the Fetch exchanges of the consumer engine it runs (not of telemetry or admin),
    and the most Fetches it ever had in flight to one broker at once (`most_in_flight`)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fetches: list[FetchExchange] = []
        self.in_flight: Counter[int | None] = Counter()
        self.most_in_flight = 0
        self._proxies: dict[int, Machine] = {}

    def fetch_started(self, sent: SendRequest[Any]) -> None:
        node = _fetch_node(sent)
        if node is not False:
            self.in_flight[node] += 1
            self.most_in_flight = max(self.most_in_flight, self.in_flight[node])

    def fetch_ended(self, sent: SendRequest[Any]) -> None:
        node = _fetch_node(sent)
        if node is not False:
            self.in_flight[node] -= 1

    def attach(self, machine: Machine, on_event: Any, on_stopped: Any) -> None:
        if isinstance(machine, ConsumerEngine):
            proxy = _RecordedFetches(machine, self)
            self._proxies[id(machine)] = proxy
            machine = proxy
        super().attach(machine, on_event, on_stopped)

    def detach(self, machine: Machine) -> None:
        super().detach(self._proxies.pop(id(machine), machine))


def _fetch_node(sent: SendRequest[Any]) -> int | bool | None:
    """The broker a Fetch goes to (None: unnamed); False for any other request."""
    request = sent.request
    fetch = isinstance(request, FetchRequest) or (
        isinstance(request, Versioned) and request.api_key == ApiKey.FETCH
    )
    if not fetch:
        return False
    return sent.target.node_id if isinstance(sent.target, Broker) else None
