"""Three real members and one model coordinator, in-process: the group converges to a complete,
disjoint, balanced assignment under eager and cooperative rebalancing, and no partition ever
has two owners."""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest
from _assignors import CooperativeBalance, EagerRoundRobin
from _model_coordinator import GroupState, ModelCoordinator, Network, answer_steps

from krafka.sansio.group import (
    AssignPartitions,
    GroupConfig,
    GroupMember,
    LeaveReason,
    MemberState,
    RevokePartitions,
)
from krafka.sansio.group.classic.assignors import (
    CooperativeStickyAssignor,
    RangeAssignor,
    StickyAssignor,
)
from krafka.structs import TopicPartition

PARTITIONS = frozenset(TopicPartition("t", p) for p in range(12))
Factory = Callable[[], object]


class Group:
    def __init__(self, assignor: Factory, seed: int = 7) -> None:
        self.assignor = assignor
        self.coordinator = ModelCoordinator()
        self.net = Network(self.coordinator, random.Random(seed))
        self.members: list[GroupMember] = []
        self.steps: dict[int, list[object]] = {}

    def add(self) -> GroupMember:
        config = GroupConfig(
            group_id="g",
            session_timeout=10.0,
            heartbeat_interval=1.0,
            max_poll_interval=60.0,
            rebalance_timeout=20.0,
            retry_backoff=0.05,
            retry_backoff_max=0.2,
            enable_auto_commit=False,
        )
        member = GroupMember(
            config, [self.assignor()], rand=random.Random(len(self.members)).random
        )  # type: ignore[list-item]
        self.net.add(member)
        member.update_metadata({"t": 12}, self.net.now)
        member.subscribe(["t"], self.net.now)
        self.steps[id(member)] = []
        self.members.append(member)
        return member

    def round(self) -> None:
        for member, talk in zip(self.members, self.net.talks, strict=True):
            if member.closed:
                continue
            member.poll(self.net.now)
            self.net.deliver(talk)
            self.steps[id(member)] += answer_steps(talk)
            self.net.deliver(talk)
        self.check_disjoint()
        self.net.advance(0.1)

    def check_disjoint(self) -> None:
        seen: dict[TopicPartition, int] = {}
        for i, member in enumerate(self.members):
            for tp in member.assignment():
                assert tp not in seen, f"{tp} owned by members {seen[tp]} and {i}"
                seen[tp] = i

    def active(self) -> list[GroupMember]:
        return [m for m in self.members if not m.closed]

    def converged(self) -> bool:
        active = self.active()
        if self.coordinator.state is not GroupState.STABLE:
            return False
        if any(m.state is not MemberState.STABLE for m in active):
            return False
        owned = [m.assignment() for m in active]
        if frozenset().union(*owned) != PARTITIONS:
            return False
        sizes = sorted(len(o) for o in owned)
        return sizes[-1] - sizes[0] <= 1 and sum(sizes) == len(PARTITIONS)

    def run_until_converged(self, limit: int = 600) -> int:
        for i in range(limit):
            self.round()
            if self.converged():
                # a few more rounds: nothing moves once converged
                before = [m.assignment() for m in self.active()]
                for _ in range(30):
                    self.round()
                assert [m.assignment() for m in self.active()] == before
                return i
        pytest.fail(f"no convergence: {[(m.state, len(m.assignment())) for m in self.members]}")


ASSIGNORS: dict[str, Factory] = {
    "range": RangeAssignor,
    "sticky": StickyAssignor,
    "cooperative-sticky": CooperativeStickyAssignor,
    "custom-eager": EagerRoundRobin,
    "custom-cooperative": CooperativeBalance,
}
COOPERATIVE = {"cooperative-sticky", "custom-cooperative"}


@pytest.mark.parametrize("protocol", sorted(ASSIGNORS))
def test_three_members_converge_to_a_complete_disjoint_assignment(protocol: str) -> None:
    group = Group(ASSIGNORS[protocol])
    for _ in range(3):
        group.add()
    group.run_until_converged()
    assert sorted(len(m.assignment()) for m in group.members) == [4, 4, 4]
    gens = {m.generation.generation_id for m in group.members}
    assert gens == {group.coordinator.generation}


@pytest.mark.parametrize("protocol", sorted(ASSIGNORS))
def test_a_third_member_joining_then_one_leaving(protocol: str) -> None:
    group = Group(ASSIGNORS[protocol])
    first, second = group.add(), group.add()
    group.run_until_converged()
    before = {id(m): m.assignment() for m in (first, second)}
    for m in (first, second):
        group.steps[id(m)].clear()
    group.add()
    group.run_until_converged()
    revoked = {
        id(m): frozenset().union(
            *(s.partitions for s in group.steps[id(m)] if isinstance(s, RevokePartitions))
        )
        for m in (first, second)
    }
    if protocol in COOPERATIVE:
        for m in (first, second):
            kept = before[id(m)] & m.assignment()
            assert not kept & revoked[id(m)], "a retained partition was revoked"
            assert revoked[id(m)] == before[id(m)] - m.assignment()
        assert len(revoked[id(first)] | revoked[id(second)]) == 4
    else:
        for m in (first, second):
            assert revoked[id(m)] == before[id(m)]  # eager: everything, every time
    for m in group.members:
        assigned = [s for s in group.steps[id(m)] if isinstance(s, AssignPartitions)]
        assert assigned, "on_partitions_assigned runs once per rebalance"
        owned_before: frozenset[TopicPartition] = frozenset()
        for s in group.steps[id(m)]:
            if isinstance(s, AssignPartitions):
                assert not s.added & owned_before
                owned_before = s.assignment
            elif isinstance(s, RevokePartitions):
                owned_before -= s.partitions
    talk = group.net.talks[0]
    op = first.leave(group.net.now, reason=LeaveReason.CLOSE)
    for _ in range(5):
        group.net.deliver(talk)
        answer_steps(talk)
    assert talk.outcome(op) is None and first.closed
    group.run_until_converged()
    assert sorted(len(m.assignment()) for m in group.active()) == [6, 6]
