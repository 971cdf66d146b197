"""A minimal `Machine` for core tests: sends what the test queues, records every outcome."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from krafka.errors import KrafkaError
from krafka.sansio.actions import SendRequest


@dataclass(eq=False)
class Requester:
    """Sends queued requests and actions; `outcomes` maps each request to its answers."""

    queued: list[Any] = field(default_factory=list)
    outcomes: dict[SendRequest[Any], list[Any]] = field(default_factory=dict)
    #: When each request's (last) outcome arrived.
    answered_at: dict[SendRequest[Any], float] = field(default_factory=dict)
    updates: int = 0

    def ask(self, *actions: Any) -> None:
        self.queued += actions

    def next_actions(self, now: float) -> list[Any]:
        out, self.queued = self.queued, []
        return out

    def on_response(self, sent: SendRequest[Any], response: Any, now: float) -> None:
        self.outcomes.setdefault(sent, []).append(response)
        self.answered_at[sent] = now

    def on_failure(self, sent: SendRequest[Any], error: KrafkaError, now: float) -> None:
        self.outcomes.setdefault(sent, []).append(error)
        self.answered_at[sent] = now

    def next_deadline(self) -> float | None:
        return None

    def metadata_updated(self, now: float) -> None:
        self.updates += 1

    def outcome(self, sent: SendRequest[Any]) -> Any:
        (only,) = self.outcomes[sent]
        return only
