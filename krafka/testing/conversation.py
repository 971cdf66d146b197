"""Script a conversation with any sans-IO machine of the `krafka.sansio.actions` contract.

A test plays the driver and the brokers: it owns the clock, takes the machine's actions, checks
what was asked and answers it. Responses go through the wire format (encode, then decode at
the negotiated version) so a machine only ever sees what a real broker answer could be.

    talk = Conversation(machine)
    op = machine.commit(talk.now)
    sent = talk.expect(FindCoordinatorRequest)      # runs next_actions, returns the request
    talk.reply(sent, FindCoordinatorResponse(node_id=1, host="b1", port=9092))
    sent = talk.expect(EndTxnRequest)
    talk.reply(sent, EndTxnResponse())
    assert talk.outcome(op) is None                 # Completed; Failed raises its error
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from krafka.errors import KrafkaError
from krafka.protocol import RESPONSES, ApiKey
from krafka.protocol.messages import OffsetCommitRequest, OffsetCommitResponse
from krafka.protocol.schema import Request
from krafka.sansio.actions import Completed, Failed, Machine, SendRequest, Versioned

Q = TypeVar("Q", bound=Request[Any])


@dataclass
class Conversation:
    """The driver's side of a machine, with a hand-moved clock and scripted answers.

    `versions` picks the version each API is "negotiated" at (default: the newest the machine's
    `max_version` allows, else the message's newest).
    """

    machine: Machine
    now: float = 0.0
    versions: Mapping[int, int] = field(default_factory=dict)
    outbox: list[SendRequest[Any]] = field(default_factory=list)
    events: list[Any] = field(default_factory=list)
    outcomes: dict[int, Completed | Failed] = field(default_factory=dict)

    def advance(self, seconds: float) -> None:
        self.now += seconds

    def advance_to_deadline(self) -> float:
        """Move the clock to the machine's next deadline (which must exist); returns it."""
        deadline = self.machine.next_deadline()
        assert deadline is not None, "the machine has no deadline"
        self.now = max(self.now, deadline)
        return deadline

    def step(self) -> list[Any]:
        """Run `next_actions(now)`: requests go to `outbox`, outcomes to `outcomes`, other
        events to `events`; returns the actions."""
        actions = self.machine.next_actions(self.now)
        for action in actions:
            if isinstance(action, SendRequest):
                self.outbox.append(action)
            elif isinstance(action, Completed | Failed):
                self.outcomes[action.op] = action
            else:
                self.events.append(action)
        return actions

    def expect(self, kind: type[Q]) -> SendRequest[Any]:
        """Step, then take the first request of `kind` from the outbox (fails if none)."""
        self.step()
        for sent in self.outbox:
            if isinstance(self.request(sent), kind):
                self.outbox.remove(sent)
                return sent
        asked = [type(self.request(s)).__name__ for s in self.outbox]
        raise AssertionError(f"expected a {kind.__name__}, the machine asked for {asked}")

    def expect_nothing(self) -> None:
        """Step; the machine must not ask for anything new."""
        self.step()
        assert not self.outbox, [type(self.request(s)).__name__ for s in self.outbox]

    def version(self, sent: SendRequest[Any]) -> int:
        api = ApiKey(sent.api_key)
        newest = RESPONSES[api].MAX_VERSION
        chosen = self.versions.get(api, newest)
        return chosen if sent.max_version is None else min(chosen, sent.max_version)

    def request(self, sent: SendRequest[Any]) -> Any:
        """The request as it would be sent (a `Versioned` one built for `version(sent)`)."""
        body = sent.request
        return body.build(self.version(sent)) if isinstance(body, Versioned) else body

    def reply(self, sent: SendRequest[Any], response: Any) -> None:
        """Answer `sent` with `response` after a trip through the wire format."""
        version = self.version(sent)
        wire = type(response).decode(response.encode(version), version)
        self.machine.on_response(sent, wire, self.now)

    def fail(self, sent: SendRequest[Any], error: KrafkaError) -> None:
        self.machine.on_failure(sent, error, self.now)

    def outcome(self, op: int) -> Any:
        """The value operation `op` completed with (after a step); its error is raised."""
        self.step()
        result = self.outcomes.pop(op, None)
        if result is None:
            raise AssertionError(f"operation {op} has not finished")
        if isinstance(result, Failed):
            raise result.error
        return result.value

    def pending(self, op: int) -> bool:
        self.step()
        return op not in self.outcomes


def commit_response(request: OffsetCommitRequest, code: int = 0) -> OffsetCommitResponse:
    """An OffsetCommit answer with `code` for every partition of `request`."""
    topic = OffsetCommitResponse.OffsetCommitResponseTopic
    part = topic.OffsetCommitResponsePartition
    return OffsetCommitResponse(
        topics=[
            topic(
                name=t.name,
                partitions=[
                    part(partition_index=p.partition_index, error_code=code) for p in t.partitions
                ],
            )
            for t in request.topics
        ]
    )


__all__ = ["Conversation", "commit_response"]
