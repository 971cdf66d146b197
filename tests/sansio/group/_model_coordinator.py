"""An in-process model of a classic group coordinator, and a network of real members around it.

The model keeps Kafka's group states (Empty, PreparingRebalance, CompletingRebalance, Stable),
holds JoinGroup answers until every member rejoined (or the rebalance timeout passed), holds
followers' SyncGroup answers until the leader's assignment arrived, answers Heartbeat and
OffsetCommit by generation, expires silent members, and (KIP-394) asks new members to rejoin
with the member id it gives them. It is a test model: one group, dynamic members, node 1.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from krafka.errors import KafkaConnectionError
from krafka.protocol.error_codes import ErrorCode
from krafka.protocol.messages import (
    HeartbeatRequest,
    HeartbeatResponse,
    JoinGroupRequest,
    JoinGroupResponse,
    LeaveGroupRequest,
    LeaveGroupResponse,
    OffsetCommitRequest,
    OffsetCommitResponse,
    OffsetFetchRequest,
    OffsetFetchResponse,
    SyncGroupRequest,
    SyncGroupResponse,
)
from krafka.sansio.actions import SendRequest
from krafka.sansio.group import GroupMember
from krafka.sansio.group.events import AssignPartitions, CommitPositions
from krafka.structs import OffsetAndMetadata, TopicPartition
from krafka.testing.conversation import Conversation, commit_response

C = ErrorCode


class GroupState(Enum):
    EMPTY = "Empty"
    PREPARING = "PreparingRebalance"
    COMPLETING = "CompletingRebalance"
    STABLE = "Stable"


@dataclass(slots=True)
class _Member:
    member_id: str
    session_timeout: float
    rebalance_timeout: float
    protocols: list[tuple[str, bytes]] = field(default_factory=list)
    last_seen: float = 0.0
    join: tuple[Any, SendRequest[Any]] | None = None  # (talk, sent) waiting for the answer
    sync: tuple[Any, SendRequest[Any]] | None = None
    assignment: bytes = b""


class ModelCoordinator:
    def __init__(self) -> None:
        self.state = GroupState.EMPTY
        self.generation = 0
        self.leader: str | None = None
        self.protocol: str | None = None
        self.members: dict[str, _Member] = {}
        self.pending_ids: set[str] = set()
        self.committed: dict[TopicPartition, OffsetAndMetadata] = {}
        self.rebalance_deadline = 0.0
        self.ready: list[tuple[Any, SendRequest[Any], Any]] = []
        self.history: list[tuple[int, dict[str, bytes]]] = []
        self._ids = itertools.count(1)

    # -- requests -------------------------------------------------------------------------------

    def handle(self, talk: Any, sent: SendRequest[Any], request: Any, now: float) -> Any:
        """The answer to `request`, or None when it is held (JoinGroup, SyncGroup)."""
        if isinstance(request, JoinGroupRequest):
            return self._join(talk, sent, request, now)
        if isinstance(request, SyncGroupRequest):
            return self._sync(talk, sent, request, now)
        if isinstance(request, HeartbeatRequest):
            return HeartbeatResponse(error_code=self._heartbeat(request, now))
        if isinstance(request, LeaveGroupRequest):
            for identity in request.members or []:
                self.remove(identity.member_id, now)
            if request.member_id:
                self.remove(request.member_id, now)
            return LeaveGroupResponse()
        if isinstance(request, OffsetCommitRequest):
            return self._commit(request)
        if isinstance(request, OffsetFetchRequest):
            return self._fetch(request)
        raise AssertionError(f"the model does not answer {type(request).__name__}")

    def _join(
        self, talk: Any, sent: SendRequest[Any], request: JoinGroupRequest, now: float
    ) -> Any:
        member_id = request.member_id
        if not member_id:
            member_id = f"member-{next(self._ids)}"
            self.pending_ids.add(member_id)
            return JoinGroupResponse(error_code=C.MEMBER_ID_REQUIRED, member_id=member_id)
        if member_id not in self.members and member_id not in self.pending_ids:
            return JoinGroupResponse(error_code=C.UNKNOWN_MEMBER_ID, member_id=member_id)
        self.pending_ids.discard(member_id)
        member = self.members.get(member_id)
        if member is None:
            member = self.members[member_id] = _Member(
                member_id,
                request.session_timeout_ms / 1000,
                request.rebalance_timeout_ms / 1000,
            )
        member.protocols = [(p.name, p.metadata) for p in request.protocols]
        member.last_seen = now
        member.join = (talk, sent)
        if member.sync is not None:  # a sync still waiting is answered: the group moved on
            self._answer(member.sync, SyncGroupResponse(error_code=C.REBALANCE_IN_PROGRESS))
            member.sync = None
        if self.state is not GroupState.PREPARING:
            self._prepare(now)
        self.tick(now)
        return None

    def _sync(
        self, talk: Any, sent: SendRequest[Any], request: SyncGroupRequest, now: float
    ) -> Any:
        member = self.members.get(request.member_id)
        if member is None:
            return SyncGroupResponse(error_code=C.UNKNOWN_MEMBER_ID)
        if request.generation_id != self.generation:
            return SyncGroupResponse(error_code=C.ILLEGAL_GENERATION)
        if self.state is GroupState.PREPARING:
            return SyncGroupResponse(error_code=C.REBALANCE_IN_PROGRESS)
        member.last_seen = now
        if self.state is GroupState.STABLE:
            return self._sync_answer(member)
        member.sync = (talk, sent)
        if request.member_id == self.leader:
            given = {a.member_id: a.assignment for a in request.assignments}
            self.history.append((self.generation, given))
            for m in self.members.values():
                m.assignment = given.get(m.member_id, b"")
            self.state = GroupState.STABLE
            for m in self.members.values():
                if m.sync is not None:
                    self._answer(m.sync, self._sync_answer(m))
                    m.sync = None
        return None

    def _sync_answer(self, member: _Member) -> SyncGroupResponse:
        return SyncGroupResponse(
            protocol_type="consumer", protocol_name=self.protocol, assignment=member.assignment
        )

    def _heartbeat(self, request: HeartbeatRequest, now: float) -> int:
        member = self.members.get(request.member_id)
        if member is None:
            return C.UNKNOWN_MEMBER_ID
        if request.generation_id != self.generation:
            return C.ILLEGAL_GENERATION
        member.last_seen = now
        return C.REBALANCE_IN_PROGRESS if self.state is GroupState.PREPARING else C.NONE

    def _commit_code(self, request: OffsetCommitRequest) -> int:
        if request.generation_id_or_member_epoch < 0 and not request.member_id:
            return C.NONE if not self.members else C.UNKNOWN_MEMBER_ID
        if request.member_id not in self.members:
            return C.UNKNOWN_MEMBER_ID
        if request.generation_id_or_member_epoch != self.generation:
            return C.ILLEGAL_GENERATION
        if self.state is GroupState.COMPLETING:
            return C.REBALANCE_IN_PROGRESS
        return C.NONE

    def _commit(self, request: OffsetCommitRequest) -> OffsetCommitResponse:
        code = self._commit_code(request)
        topic = OffsetCommitResponse.OffsetCommitResponseTopic
        part = topic.OffsetCommitResponsePartition
        for t in request.topics:
            for p in t.partitions:
                if code == C.NONE:
                    self.committed[TopicPartition(t.name, p.partition_index)] = OffsetAndMetadata(
                        p.committed_offset, p.committed_metadata or ""
                    )
        return OffsetCommitResponse(
            topics=[
                topic(
                    name=t.name,
                    partitions=[
                        part(partition_index=p.partition_index, error_code=code)
                        for p in t.partitions
                    ],
                )
                for t in request.topics
            ]
        )

    def _fetch(self, request: OffsetFetchRequest) -> OffsetFetchResponse:
        group = OffsetFetchResponse.OffsetFetchResponseGroup
        topics = group.OffsetFetchResponseTopics
        part = topics.OffsetFetchResponsePartitions
        out = []
        for t in request.groups[0].topics or []:
            parts = []
            for p in t.partition_indexes:
                om = self.committed.get(TopicPartition(t.name, p))
                offset = -1 if om is None else om.offset
                parts.append(part(partition_index=p, committed_offset=offset))
            out.append(topics(name=t.name, partitions=parts))
        return OffsetFetchResponse(groups=[group(group_id="g", topics=out)])

    # -- the group ------------------------------------------------------------------------------

    def _prepare(self, now: float) -> None:
        self.state = GroupState.PREPARING
        timeouts = [m.rebalance_timeout for m in self.members.values()] or [0.0]
        self.rebalance_deadline = now + max(timeouts)

    def remove(self, member_id: str, now: float) -> None:
        member = self.members.pop(member_id, None)
        if member is None:
            return
        for waiting in (member.join, member.sync):
            if waiting is not None:
                self._answer(waiting, _error_for(waiting[1], C.UNKNOWN_MEMBER_ID))
        if self.leader == member_id:
            self.leader = None
        if not self.members:
            self.state, self.leader = GroupState.EMPTY, None
        elif self.state is not GroupState.PREPARING:
            self._prepare(now)
        self.tick(now)

    def tick(self, now: float) -> None:
        """Expire silent members; complete a rebalance when everyone rejoined (or timed out)."""
        for member in list(self.members.values()):
            waiting = member.join is not None or member.sync is not None
            if not waiting and now - member.last_seen > member.session_timeout:
                self.remove(member.member_id, now)
        if self.state is not GroupState.PREPARING or not self.members:
            return
        late = [m for m in self.members.values() if m.join is None]
        if late and now < self.rebalance_deadline:
            return
        for member in late:
            self.members.pop(member.member_id)
            if member.sync is not None:
                self._answer(member.sync, SyncGroupResponse(error_code=C.UNKNOWN_MEMBER_ID))
        if not self.members:
            self.state = GroupState.EMPTY
            return
        self._complete_join()

    def _complete_join(self) -> None:
        self.generation += 1
        if self.leader not in self.members:
            self.leader = next(iter(self.members))
        leader = self.members[self.leader]
        common = set.intersection(*({n for n, _ in m.protocols} for m in self.members.values()))
        self.protocol = next(n for n, _ in leader.protocols if n in common)
        self.state = GroupState.COMPLETING
        for member in self.members.values():
            everyone = [
                JoinGroupResponse.JoinGroupResponseMember(
                    member_id=m.member_id, metadata=dict(m.protocols)[self.protocol]
                )
                for m in self.members.values()
            ]
            assert member.join is not None
            self._answer(
                member.join,
                JoinGroupResponse(
                    generation_id=self.generation,
                    protocol_type="consumer",
                    protocol_name=self.protocol,
                    leader=self.leader,
                    member_id=member.member_id,
                    members=everyone if member.member_id == self.leader else [],
                ),
            )
            member.join = None

    def _answer(self, waiting: tuple[Any, SendRequest[Any]], response: Any) -> None:
        talk, sent = waiting
        self.ready.append((talk, sent, response))


def _error_for(sent: SendRequest[Any], code: int) -> Any:
    request = sent.request
    if isinstance(request, JoinGroupRequest):
        return JoinGroupResponse(error_code=code)
    return SyncGroupResponse(error_code=code)


#: Errors the network may answer instead of the model (transport and coordinator trouble).
CHAOS: dict[type, list[int]] = {
    JoinGroupRequest: [C.COORDINATOR_LOAD_IN_PROGRESS, C.NOT_COORDINATOR, C.REBALANCE_IN_PROGRESS],
    SyncGroupRequest: [C.NOT_COORDINATOR, C.COORDINATOR_LOAD_IN_PROGRESS, C.REBALANCE_IN_PROGRESS],
    HeartbeatRequest: [
        C.NOT_COORDINATOR,
        C.COORDINATOR_LOAD_IN_PROGRESS,
        C.COORDINATOR_NOT_AVAILABLE,
    ],
    OffsetCommitRequest: [
        C.NOT_COORDINATOR,
        C.COORDINATOR_LOAD_IN_PROGRESS,
        C.UNKNOWN_TOPIC_OR_PARTITION,
    ],
}


class Network:
    """Members (each a `Conversation` on one clock) and the model coordinator between them."""

    def __init__(self, coordinator: ModelCoordinator, rand: random.Random) -> None:
        self.coordinator = coordinator
        self.rand = rand
        self.now = 0.0
        self.talks: list[Conversation] = []
        self.chaos = 0.0
        self.failures = 0.0

    def add(
        self, member: GroupMember, talk_class: type[Conversation] = Conversation
    ) -> Conversation:
        talk = talk_class(member, now=self.now)
        self.talks.append(talk)
        return talk

    def advance(self, seconds: float) -> None:
        self.now += seconds
        for talk in self.talks:
            talk.now = self.now
        self.coordinator.tick(self.now)

    def deliver(self, talk: Conversation) -> None:
        """Everything `talk`'s member asked for goes to the coordinator (or fails)."""
        talk.step()
        while talk.outbox:
            sent = talk.outbox.pop(0)
            request = talk.request(sent)
            roll = self.rand.random()
            if roll < self.failures:
                talk.fail(sent, KafkaConnectionError("chaos: connection reset"))
                continue
            codes = CHAOS.get(type(request))
            if codes and roll < self.failures + self.chaos:
                talk.reply(sent, _chaos_response(request, self.rand.choice(codes)))
                continue
            response = self.coordinator.handle(talk, sent, request, self.now)
            if response is not None:
                talk.reply(sent, response)
            talk.step()
        self.flush()

    def flush(self) -> None:
        while self.coordinator.ready:
            talk, sent, response = self.coordinator.ready.pop(0)
            talk.now = self.now
            talk.reply(sent, response)


def _chaos_response(request: Any, code: int) -> Any:
    if isinstance(request, JoinGroupRequest):
        return JoinGroupResponse(error_code=code)
    if isinstance(request, SyncGroupRequest):
        return SyncGroupResponse(error_code=code)
    if isinstance(request, HeartbeatRequest):
        return HeartbeatResponse(error_code=code)
    return commit_response(request, code)


def answer_steps(
    talk: Conversation, positions: Callable[[TopicPartition], int] | None = None
) -> list[Any]:
    """Answer every listener step `talk`'s member asked for (positions for commits); returns
    the steps answered."""
    answered = []
    while True:
        talk.step()
        steps = [e for e in talk.events if hasattr(e, "step")]
        if not steps:
            return answered
        for step in steps:
            talk.events.remove(step)
            offsets = None
            if isinstance(step, CommitPositions) and positions is not None:
                offsets = {tp: OffsetAndMetadata(positions(tp)) for tp in step.partitions}
            talk.machine.listener_done(step.step, talk.now, offsets)  # type: ignore[attr-defined]
            answered.append(step)


__all__ = ["CHAOS", "AssignPartitions", "GroupState", "ModelCoordinator", "Network", "answer_steps"]
