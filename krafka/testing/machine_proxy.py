"""`MachineProxy`: a sans-IO machine wrapped for tests that watch or reshape its traffic.

A client runs its machines inside its core, so a test cannot intercept their requests on the
way out of a task; it wraps the machine instead (`KafkaClient.attach` of a subclass is the
place): `outgoing(sent, now)` says what to send in the request's place and when (later: it is
held back until then), `answered(sent, placed, response)` sees each answer. The machine gets
its answers under its own request objects and everything else (`metadata_updated` ...) is
passed through.
"""

from __future__ import annotations

from typing import Any

from krafka.errors import KrafkaError
from krafka.sansio.actions import Machine, SendRequest


class MachineProxy:
    """`machine`, with its requests passing through `outgoing` and its answers `answered`."""

    def __init__(self, machine: Machine) -> None:
        self.machine = machine
        self._placed: dict[int, tuple[SendRequest[Any], SendRequest[Any]]] = {}
        self._held: list[tuple[float, SendRequest[Any]]] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self.machine, name)

    def outgoing(self, sent: SendRequest[Any], now: float) -> tuple[SendRequest[Any], float]:
        """The request to send for `sent`, and when (default: `sent` itself, now)."""
        return sent, now

    def answered(self, sent: SendRequest[Any], placed: SendRequest[Any], response: Any) -> None:
        """The answer to `sent` (sent as `placed`) came."""

    def next_actions(self, now: float) -> list[Any]:
        actions: list[Any] = []
        for action in self.machine.next_actions(now):
            if isinstance(action, SendRequest):
                placed, at = self.outgoing(action, now)
                self._placed[id(placed)] = (action, placed)
                if at > now:
                    self._held.append((at, placed))
                    continue
                action = placed
            actions.append(action)
        due = [placed for at, placed in self._held if at <= now]
        self._held = [(at, placed) for at, placed in self._held if at > now]
        return due + actions

    def on_response(self, sent: SendRequest[Any], response: Any, now: float) -> None:
        original, placed = self._placed.pop(id(sent))
        self.answered(original, placed, response)
        self.machine.on_response(original, response, now)

    def on_failure(self, sent: SendRequest[Any], error: KrafkaError, now: float) -> None:
        original, _ = self._placed.pop(id(sent))
        self.machine.on_failure(original, error, now)

    def next_deadline(self) -> float | None:
        times = [self.machine.next_deadline(), *(at for at, _ in self._held)]
        return min((t for t in times if t is not None), default=None)


__all__ = ["MachineProxy"]
