"""Model-based test: two real members, a model coordinator that also answers coordinator
trouble and lost connections at random, an application that polls, commits, changes its
subscription and leaves at random, and a clock that jumps past session and poll timeouts.

Invariants: a member owns exactly what its listener steps said (partitions leave only through
an answered revoke or lose step, arrive only through an assign step; eager members own nothing
when assigned anew); one listener step at a time; the generation never goes backwards while
STABLE; every operation gets exactly one outcome.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable
from typing import Any

from _assignors import CooperativeBalance, EagerRoundRobin
from _model_coordinator import ModelCoordinator, Network
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from krafka.sansio.actions import Completed, Failed, RefreshMetadata
from krafka.sansio.group import (
    AssignPartitions,
    CommitPositions,
    GroupConfig,
    GroupFailed,
    GroupMember,
    LeaveReason,
    LosePartitions,
    MemberState,
    RevokePartitions,
)
from krafka.sansio.group.classic.assignors import (
    CooperativeStickyAssignor,
    PartitionAssignor,
    RangeAssignor,
    RebalanceProtocol,
    RoundRobinAssignor,
    StickyAssignor,
)
from krafka.structs import OffsetAndMetadata, TopicPartition
from krafka.testing.conversation import Conversation

ASSIGNORS: dict[str, Callable[[], PartitionAssignor]] = {
    "range": RangeAssignor,
    "roundrobin": RoundRobinAssignor,
    "sticky": StickyAssignor,
    "cooperative-sticky": CooperativeStickyAssignor,
    "custom-eager": EagerRoundRobin,
    "custom-cooperative": CooperativeBalance,
}


class CountingTalk(Conversation):
    """A conversation that counts every outcome the member reports."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.seen: Counter[int] = Counter()

    def step(self) -> list[Any]:
        actions = super().step()
        for action in actions:
            if isinstance(action, Completed | Failed):
                self.seen[action.op] += 1
        return actions


class GroupModel(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.coordinator = ModelCoordinator()
        self.net = Network(self.coordinator, random.Random(0))
        self.members: list[GroupMember] = []
        self.talks: list[CountingTalk] = []
        self.views: list[frozenset[TopicPartition]] = []
        self.pending: list[list[Any]] = []
        self.stable_generation: list[int] = []
        self.ops: list[set[int]] = []
        self.partitions = {"t": 6, "u": 3}

    @initialize(
        assignor=st.sampled_from(sorted(ASSIGNORS)),
        auto_commit=st.booleans(),
        seed=st.integers(0, 2**16),
    )
    def start(self, assignor: str, auto_commit: bool, seed: int) -> None:
        self.net.rand = random.Random(seed)
        for i in range(2):
            config = GroupConfig(
                group_id="g",
                session_timeout=6.0,
                heartbeat_interval=1.0,
                max_poll_interval=15.0,
                rebalance_timeout=8.0,
                retry_backoff=0.05,
                retry_backoff_max=0.5,
                enable_auto_commit=auto_commit,
                auto_commit_interval=2.0,
                default_api_timeout=10.0,
                request_timeout=5.0,
            )
            member = GroupMember(
                config, [ASSIGNORS[assignor]()], rand=random.Random(seed + i).random
            )
            talk = self.net.add(member, CountingTalk)
            assert isinstance(talk, CountingTalk)
            member.update_metadata(self.partitions, self.net.now)
            member.subscribe(["t"], self.net.now)
            self.members.append(member)
            self.talks.append(talk)
            self.views.append(frozenset())
            self.pending.append([])
            self.stable_generation.append(-1)
            self.ops.append(set())

    # -- the application ------------------------------------------------------------------------

    @rule(i=st.integers(0, 1))
    def poll(self, i: int) -> None:
        if not self.members[i].closed:
            self.members[i].poll(self.net.now)
        self._sync(i)

    @rule(i=st.integers(0, 1))
    def deliver(self, i: int) -> None:
        self.net.deliver(self.talks[i])
        self._sync(i)

    @rule(i=st.integers(0, 1))
    def answer_step(self, i: int) -> None:
        self._sync(i)
        if not self.pending[i]:
            return
        step = self.pending[i].pop(0)
        offsets = None
        if isinstance(step, CommitPositions):
            offsets = {tp: OffsetAndMetadata(int(self.net.now * 10)) for tp in step.partitions}
        self.members[i].listener_done(step.step, self.net.now, offsets)
        if isinstance(step, RevokePartitions | LosePartitions):
            assert step.partitions <= self.views[i]
            self.views[i] -= step.partitions
        self._sync(i)

    @rule(rounds=st.integers(1, 30), answer=st.booleans())
    def progress(self, rounds: int, answer: bool) -> None:
        """A well-behaved stretch: every member polls, talks, (maybe) runs its listener."""
        for _ in range(rounds):
            for i in range(2):
                self.poll(i)
                self.deliver(i)
                while answer and self.pending[i]:
                    self.answer_step(i)
                self.deliver(i)
            self.advance(0.2)

    @rule(seconds=st.sampled_from([0.05, 0.3, 1.0, 2.5, 7.0, 16.0]))
    def advance(self, seconds: float) -> None:
        self.net.advance(seconds)
        self.net.flush()
        for i in range(2):
            self._sync(i)

    @rule(chaos=st.sampled_from([0.0, 0.0, 0.2, 0.5]), failures=st.sampled_from([0.0, 0.1]))
    def weather(self, chaos: float, failures: float) -> None:
        self.net.chaos, self.net.failures = chaos, failures

    @rule(i=st.integers(0, 1), data=st.data())
    def commit(self, i: int, data: st.DataObject) -> None:
        member = self.members[i]
        owned = sorted(member.assignment() | {TopicPartition("u", 0)})
        chosen = data.draw(st.lists(st.sampled_from(owned), max_size=3, unique=True))
        op = member.commit({tp: OffsetAndMetadata(5) for tp in chosen}, self.net.now, timeout=5)
        self.ops[i].add(op)
        self._sync(i)

    @rule(i=st.integers(0, 1))
    def fetch(self, i: int) -> None:
        op = self.members[i].fetch_committed(self.members[i].assignment(), self.net.now, 5)
        self.ops[i].add(op)

    @rule(i=st.integers(0, 1), topics=st.sampled_from([("t",), ("t", "u"), ("u",)]))
    def subscribe(self, i: int, topics: tuple[str, ...]) -> None:
        if not self.members[i].closed:
            self.members[i].subscribe(topics, self.net.now)

    @rule(i=st.integers(0, 1))
    def kick(self, i: int) -> None:
        """The coordinator expires the member (as after a long GC pause)."""
        self.coordinator.remove(self.members[i].generation.member_id, self.net.now)
        self.net.flush()

    @precondition(lambda self: not any(m.closed for m in self.members))
    @rule(i=st.integers(0, 1), close=st.booleans())
    def leave(self, i: int, close: bool) -> None:
        reason = LeaveReason.CLOSE if close else LeaveReason.UNSUBSCRIBE
        self.ops[i].add(self.members[i].leave(self.net.now, reason=reason, timeout=5))
        self._sync(i)

    # -- bookkeeping ----------------------------------------------------------------------------

    def _sync(self, i: int) -> None:
        """Take what member `i` reported: steps (checked as they come), notices."""
        talk = self.talks[i]
        talk.step()
        for event in list(talk.events):
            talk.events.remove(event)
            if isinstance(event, RefreshMetadata):
                self.members[i].update_metadata(self.partitions, self.net.now)
            elif isinstance(event, GroupFailed):
                pass
            elif hasattr(event, "step"):
                self._step_issued(i, event)

    def _step_issued(self, i: int, step: Any) -> None:
        assert not self.pending[i], f"a step while {self.pending[i]} is outstanding"
        view = self.views[i]
        if isinstance(step, AssignPartitions):
            assert view <= step.assignment, "a partition disappeared without a revoke/lose step"
            assert step.added == step.assignment - view
            if self.members[i].rebalance_protocol is RebalanceProtocol.EAGER:
                assert not view, "an eager member kept partitions into a new assignment"
            self.views[i] = step.assignment
        else:
            assert step.partitions <= view
        self.pending[i].append(step)

    @invariant()
    def ownership_matches_the_listener(self) -> None:
        for i, member in enumerate(self.members):
            assert member.assignment() == self.views[i]

    @invariant()
    def generation_never_goes_backwards_while_stable(self) -> None:
        for i, member in enumerate(self.members):
            if member.state is MemberState.STABLE:
                generation = member.generation.generation_id
                assert generation >= self.stable_generation[i]
                self.stable_generation[i] = generation

    @invariant()
    def at_most_one_outcome_per_operation(self) -> None:
        for talk in self.talks:
            assert all(count == 1 for count in talk.seen.values())

    def teardown(self) -> None:
        if not self.members:
            return
        self.net.chaos = self.net.failures = 0.0
        for _ in range(400):
            for i in range(2):
                self.deliver(i)
                while self.pending[i]:
                    self.answer_step(i)
            if all(ops <= set(t.seen) for ops, t in zip(self.ops, self.talks, strict=True)):
                break
            self.advance(0.5)
        for ops, talk in zip(self.ops, self.talks, strict=True):
            missing = ops - set(talk.seen)
            assert not missing, f"operations without an outcome: {missing}"
            assert all(talk.seen[op] == 1 for op in ops)


GroupModel.TestCase.settings = settings(
    max_examples=60,
    stateful_step_count=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
TestGroupModel = GroupModel.TestCase
