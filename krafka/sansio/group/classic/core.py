"""The state every part of a group member shares: the member state and generation, the
coordinator, the clocks, the subscription, the partitions owned, the rejoin flag, the
outstanding listener step and the events waiting for the driver.

The parts (`liveness`, `rebalance`, `flows`, `member`) each act on one `MemberCore`; only
`MemberCore` changes the member state, through the transition table.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from krafka.errors import InvalidStateError, KrafkaError
from krafka.sansio.actions import next_op
from krafka.sansio.backoff import BackoffPolicy
from krafka.sansio.group.classic.assignors import (
    PartitionAssignor,
    RebalanceProtocol,
    choose_rebalance_protocol,
)
from krafka.sansio.group.classic.heartbeat import HeartbeatClock
from krafka.sansio.group.classic.state import (
    NO_GENERATION,
    TRANSITIONS,
    Generation,
    MemberEvent,
    MemberState,
)
from krafka.sansio.group.classic.subscription import GroupSubscription
from krafka.sansio.group.config import GroupConfig
from krafka.sansio.group.coordinator import GroupCoordinator
from krafka.sansio.group.events import (
    AssignPartitions,
    CommitPositions,
    CommitReason,
    GroupFailed,
    LosePartitions,
    Partitions,
    RevokePartitions,
    Step,
)
from krafka.sansio.transitions import transition

log = logging.getLogger("krafka.group")
_StepT = TypeVar("_StepT", CommitPositions, RevokePartitions, LosePartitions, AssignPartitions)


@dataclass(slots=True, eq=False)
class MemberCore:
    config: GroupConfig
    assignors: Sequence[PartitionAssignor]
    rand: Callable[[], float] = random.random
    protocol: RebalanceProtocol = field(init=False)
    backoff: BackoffPolicy = field(init=False)
    coordinator: GroupCoordinator = field(init=False)
    clock: HeartbeatClock = field(init=False)
    subscription: GroupSubscription = field(default_factory=GroupSubscription)
    state: MemberState = MemberState.UNJOINED
    generation: Generation = NO_GENERATION
    #: The generation whose assignment was last applied (Java's groupMetadata): what
    #: transactional offset commits carry, so a fenced member's are refused.
    applied: Generation = NO_GENERATION
    #: The partitions assigned in that generation (sticky assignors' user data), kept after
    #: they were revoked or lost.
    last_assigned: Partitions = frozenset()
    owned: Partitions = frozenset()
    rejoin_needed: bool = True
    rejoin_reason: str = "initial join"
    #: Java's needsJoinPrepare: commit and revoke before the next JoinGroup.
    needs_prepare: bool = True
    #: A rebalance may only start when the application polls (Java's joinGroupIfNeeded).
    polled: bool = False
    #: A rebalance cycle is under way (started by a poll, continues until stable or fatal).
    cycle: bool = False
    closed: bool = False
    step: Step | None = None
    events: list[Any] = field(default_factory=list)

    def __post_init__(self) -> None:
        config = self.config
        self.protocol = choose_rebalance_protocol(self.assignors)
        self.backoff = BackoffPolicy(
            initial=config.retry_backoff, maximum=config.retry_backoff_max, max_retries=None
        )
        self.coordinator = GroupCoordinator(config.group_id)
        self.clock = HeartbeatClock(
            config.heartbeat_interval,
            config.session_timeout,
            config.max_poll_interval,
            self.backoff,
            self.rand,
        )

    # -- the state table ------------------------------------------------------------------------

    def move(self, event: MemberEvent) -> None:
        new = TRANSITIONS.get((self.state, event))
        if new is None:
            raise InvalidStateError(f"group member: no transition {self.state} x {event}")
        transition(log, f"group {self.config.group_id!r} member", self.state, new, event.name)
        self.state = new

    def request_rejoin(self, reason: str) -> None:
        if not self.rejoin_needed:
            log.info("group %r: rejoin needed: %s", self.config.group_id, reason)
        self.rejoin_needed = True
        self.rejoin_reason = reason

    def reset(self, reason: str, *, reset_member_id: bool) -> None:
        """Java's resetStateAndRejoin: no generation (the member id kept unless told), UNJOINED,
        prepare again before the next JoinGroup."""
        log.info("group %r: resetting generation: %s", self.config.group_id, reason)
        member_id = "" if reset_member_id else self.generation.member_id
        self.generation = Generation(member_id=member_id)
        self.move(MemberEvent.RESET)
        self.needs_prepare = True
        self.request_rejoin(reason)

    def fail(self, error: KrafkaError) -> None:
        """An error the application must see: the rebalance cycle stops until it polls again."""
        log.warning("group %r: %s", self.config.group_id, error)
        self.events.append(GroupFailed(error))
        self.cycle = False
        self.polled = False

    # -- listener steps -------------------------------------------------------------------------

    def commit_step(self, reason: CommitReason) -> CommitPositions:
        eager = self.protocol is RebalanceProtocol.EAGER and reason is CommitReason.REBALANCE
        return self._issue(CommitPositions(next_op(), self.owned, reason, eager))

    def revoke_step(self, partitions: Partitions) -> RevokePartitions:
        step = RevokePartitions(next_op(), partitions, self.generation.generation_id)
        return self._issue(step)

    def lose_step(self, reason: str) -> LosePartitions:
        return self._issue(LosePartitions(next_op(), self.owned, reason))

    def assign_step(self, assignment: Partitions) -> AssignPartitions:
        added = assignment - self.owned
        self.owned = assignment
        step = AssignPartitions(next_op(), added, assignment, self.generation.generation_id)
        return self._issue(step)

    def _issue(self, step: _StepT) -> _StepT:
        assert self.step is None, f"step {self.step} is still outstanding"
        self.step = step
        self.events.append(step)
        return step

    def drop(self, partitions: Partitions) -> None:
        self.owned = self.owned - partitions

    @property
    def lost_pending(self) -> bool:
        """Partitions are owned under a generation that was lost (fenced, expired, left)."""
        return bool(self.owned) and self.generation.lost


__all__ = ["MemberCore"]
