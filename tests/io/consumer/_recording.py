"""A `KafkaClient` that keeps every Fetch krafka sent (as built for the negotiated version),
the broker it went to and the broker's answer: to check fetch sessions (KIP-227) and
follower fetching (KIP-392) against what a real broker said."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from krafka.io.client import KafkaClient
from krafka.protocol import ApiKey
from krafka.protocol.messages import FetchRequest, FetchResponse
from krafka.sansio.actions import Broker, SendRequest, Versioned


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


class RecordingClient(KafkaClient):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fetches: list[FetchExchange] = []

    async def execute(self, action: SendRequest[Any]) -> Any:
        request = action.request
        node = action.target.node_id if isinstance(action.target, Broker) else None
        if isinstance(request, FetchRequest):  # closing a session: any version from 7 will do
            response = await super().execute(action)
            self.fetches.append(FetchExchange(node, -1, request, response))
            return response
        if not (isinstance(request, Versioned) and request.api_key == ApiKey.FETCH):
            return await super().execute(action)
        built: list[tuple[int, FetchRequest]] = []

        def build(version: int) -> Any:
            made = request.build(version)
            built.append((version, made))  # type: ignore[arg-type]
            return made

        response = await super().execute(
            dataclasses.replace(action, request=Versioned(request.api_key, build))
        )
        version, made = built[-1]
        self.fetches.append(FetchExchange(node, version, made, response))
        return response
