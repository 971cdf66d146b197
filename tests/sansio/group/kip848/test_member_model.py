"""Model test: KIP-848 members under a model coordinator that moves partitions at random.

The model coordinator follows KIP-848's server rules as far as ownership goes: a member is given
a partition of its target only when no other member may still own it (given to it, or revoked
from it but not yet acknowledged as released); a revocation is acknowledged by a heartbeat whose
TopicPartitions no longer holds the partition; an assignment is re-sent whenever it changed or
the member sent a full heartbeat. Heartbeats get answered, lost before the coordinator saw them,
or lost after (the member never sees its answer), in any order the test draws.

Invariants: no partition is owned by two members at any time (the members answer their listener
steps, so `assignment()` is what each application holds), and once the coordinator stops
moving partitions every member converges on its target and the coordinator has nothing pending.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from krafka.errors import KafkaConnectionError
from krafka.protocol.messages import (
    ConsumerGroupHeartbeatRequest,
    ConsumerGroupHeartbeatResponse,
)
from krafka.sansio.actions import SendRequest, Versioned
from krafka.sansio.group import GroupConfig
from krafka.sansio.group.events import CommitPositions
from krafka.sansio.group.kip848.member import ConsumerMember
from krafka.sansio.group.membership.state import MembershipState
from krafka.structs import TopicPartition

TOPIC_ID = uuid.UUID(int=7)
HB = ConsumerGroupHeartbeatResponse


@dataclass
class ModelCoordinator:
    partitions: int
    targets: dict[str, frozenset[int]] = field(default_factory=dict)
    given: dict[str, frozenset[int]] = field(default_factory=dict)
    pending: dict[str, frozenset[int]] = field(default_factory=dict)
    epochs: dict[str, int] = field(default_factory=dict)

    def heartbeat(self, request: ConsumerGroupHeartbeatRequest) -> HB:
        m = request.member_id
        if m not in self.epochs:
            self.epochs[m] = 1
            self.given[m] = self.pending[m] = frozenset()
            self.targets.setdefault(m, frozenset())
        reported: frozenset[int] | None = None
        if request.topic_partitions is not None:
            reported = frozenset(p for t in request.topic_partitions for p in t.partitions)
            self.pending[m] = self.pending[m] & reported
        target = self.targets[m]
        others = [o for o in self.given if o != m]
        busy = frozenset().union(*(self.given[o] | self.pending[o] for o in others))
        new = frozenset(p for p in target if p not in busy)
        revoked = self.given[m] - new
        if reported is not None:  # it says it does not own them: released at once
            revoked &= reported
        self.pending[m] = (self.pending[m] | revoked) - new
        changed = new != self.given[m]
        if changed:
            self.given[m] = new
            self.epochs[m] += 1
        send = changed or request.topic_partitions is not None
        assignment = None
        if send:
            parts = sorted(new)
            assignment = HB.Assignment(
                topic_partitions=[HB.TopicPartitions(topic_id=TOPIC_ID, partitions=parts)]
            )
        return HB(
            member_id=m,
            member_epoch=self.epochs[m],
            heartbeat_interval_ms=1000,
            assignment=assignment,
        )

    def move(self, members: list[str], choices: list[int]) -> None:
        """Give partition p to members[choices[p] % len(members)]."""
        new: dict[str, set[int]] = {m: set() for m in members}
        for p in range(self.partitions):
            new[members[choices[p % len(choices)] % len(members)]].add(p)
        self.targets = {m: frozenset(ps) for m, ps in new.items()}

    def settled(self) -> bool:
        return all(not p for p in self.pending.values()) and all(
            self.given.get(m) == t for m, t in self.targets.items()
        )


@dataclass(repr=False)
class Client:
    name: str
    member: ConsumerMember
    heartbeat: SendRequest[Any] | None = None
    steps: list[Any] = field(default_factory=list)

    def __repr__(self) -> str:
        return self.name


class World:
    def __init__(self, n_members: int, n_partitions: int, auto_commit: bool) -> None:
        self.now = 0.0
        self.coordinator = ModelCoordinator(n_partitions)
        self.clients: list[Client] = []
        for i in range(n_members):
            config = GroupConfig(
                group_id="g",
                max_poll_interval=1e9,
                retry_backoff=0.05,
                retry_backoff_max=0.05,
                enable_auto_commit=auto_commit,
            )
            name = f"m{i}"
            member = ConsumerMember(config, rand=lambda: 0.5, new_id=lambda n=name: n)
            member.update_topic_ids({"t": TOPIC_ID}, 0.0)
            member.subscribe(["t"], 0.0)
            member.poll(0.0)
            self.clients.append(Client(name, member))
        self.coordinator.move([c.name for c in self.clients], [0])

    # -- a driver per member -------------------------------------------------------------------

    def step(self, client: Client) -> None:
        for action in client.member.next_actions(self.now):
            if isinstance(action, SendRequest):
                body = action.request
                request = body.build(1) if isinstance(body, Versioned) else body
                assert isinstance(request, ConsumerGroupHeartbeatRequest)
                assert client.heartbeat is None, "two heartbeats in flight"
                client.heartbeat = action
            elif hasattr(action, "step"):
                client.steps.append(action)

    def answer_heartbeat(self, client: Client, outcome: int) -> None:
        """0: answered; 1: lost before the coordinator; 2: lost after it."""
        sent, client.heartbeat = client.heartbeat, None
        assert sent is not None
        body = sent.request
        request = body.build(1) if isinstance(body, Versioned) else body
        assert isinstance(request, ConsumerGroupHeartbeatRequest)
        wire = type(request).decode(request.encode(1), 1)
        if outcome in (0, 2):
            response = self.coordinator.heartbeat(wire)
        if outcome == 0:
            response = HB.decode(response.encode(1), 1)
            client.member.on_response(sent, response, self.now)
        else:
            client.member.on_failure(sent, KafkaConnectionError("lost"), self.now)

    def answer_step(self, client: Client) -> None:
        step = client.steps.pop(0)
        offsets = {} if isinstance(step, CommitPositions) else None
        client.member.listener_done(step.step, self.now, offsets)

    def check(self) -> None:
        seen: dict[TopicPartition, str] = {}
        for client in self.clients:
            for tp in client.member.assignment():
                assert tp not in seen, f"{tp} owned by {seen[tp]} and {client.name}"
                seen[tp] = client.name

    def converged(self) -> bool:
        for client in self.clients:
            target = self.coordinator.targets.get(client.name, frozenset())
            owned = frozenset(tp.partition for tp in client.member.assignment())
            if owned != target or client.member.state is not MembershipState.STABLE:
                return False
        return self.coordinator.settled()

    def settle(self) -> None:
        for _ in range(400):
            self.now += 0.5
            for client in self.clients:
                client.member.poll(self.now)
                self.step(client)
                while client.steps:
                    self.answer_step(client)
                    self.step(client)
                if client.heartbeat is not None:
                    self.answer_heartbeat(client, 0)
                self.step(client)
                self.check()
            if self.converged():
                return
        raise AssertionError(f"the members did not converge on their targets: {self.describe()}")

    def describe(self) -> str:
        c = self.coordinator
        lines = [f"targets={c.targets} given={c.given} pending={c.pending}"]
        for client in self.clients:
            m = client.member
            lines.append(
                f"{client.name}: {m.state.name} epoch={m.member_epoch} "
                f"owned={sorted(tp.partition for tp in m.assignment())} "
                f"current={m.current} target={m.target} steps={client.steps}"
            )
        return "\n".join(lines)


@settings(max_examples=80, deadline=None)
@given(st.data())
def test_no_partition_has_two_owners_and_every_target_converges(data: st.DataObject) -> None:
    world = World(
        data.draw(st.integers(2, 4), label="members"),
        data.draw(st.integers(1, 8), label="partitions"),
        data.draw(st.booleans(), label="auto_commit"),
    )
    names = [c.name for c in world.clients]
    for _ in range(data.draw(st.integers(0, 120), label="rounds")):
        client = world.clients[data.draw(st.integers(0, len(world.clients) - 1))]
        action = data.draw(st.sampled_from(["step", "answer", "listener", "poll", "time", "move"]))
        if action == "step":
            world.step(client)
        elif action == "answer" and client.heartbeat is not None:
            world.answer_heartbeat(client, data.draw(st.sampled_from([0, 0, 0, 1, 2])))
        elif action == "listener" and client.steps:
            world.answer_step(client)
        elif action == "poll":
            client.member.poll(world.now)
        elif action == "time":
            world.now += data.draw(st.sampled_from([0.05, 0.5, 1.0, 3.0]))
        elif action == "move":
            choices = data.draw(st.lists(st.integers(0, 3), min_size=1, max_size=8))
            world.coordinator.move(names, choices)
        world.check()
    world.settle()
