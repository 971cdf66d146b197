"""A group member in a scripted conversation: the test plays the driver and the coordinator."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, TypeVar

from _assignors import EagerRoundRobin

from krafka.protocol.error_codes import ErrorCode
from krafka.protocol.messages import (
    HeartbeatRequest,
    HeartbeatResponse,
    JoinGroupRequest,
    JoinGroupResponse,
    SyncGroupRequest,
    SyncGroupResponse,
)
from krafka.sansio.actions import Coordinator, CoordinatorMoved, SendRequest
from krafka.sansio.group import GroupConfig, GroupMember
from krafka.sansio.group.classic.assignors import Assignment, PartitionAssignor, Subscription
from krafka.sansio.group.classic.consumer_protocol import (
    decode_assignment,
    decode_subscription,
    encode_assignment,
    encode_subscription,
)
from krafka.sansio.group.events import Step
from krafka.structs import OffsetAndMetadata, TopicPartition
from krafka.testing.conversation import Conversation, commit_response

E = TypeVar("E")
GROUP = "g"


def tps(*specs: str) -> frozenset[TopicPartition]:
    """tps("t-0", "t-1") -> {TopicPartition("t", 0), TopicPartition("t", 1)}."""
    out = set()
    for spec in specs:
        topic, _, partition = spec.rpartition("-")
        out.add(TopicPartition(topic, int(partition)))
    return frozenset(out)


def metadata(topics: Iterable[str], owned: Iterable[TopicPartition] = (), gen: int = -1) -> bytes:
    return encode_subscription(Subscription(tuple(sorted(topics)), None, tuple(owned), gen))


class Member:
    """A `GroupMember` and the conversation with it."""

    def __init__(
        self,
        assignors: Sequence[PartitionAssignor] | None = None,
        *,
        instance_id: str | None = None,
        auto_commit: bool = False,
        **config: Any,
    ) -> None:
        settings: dict[str, Any] = {
            "session_timeout": 10.0,
            "heartbeat_interval": 1.0,
            "max_poll_interval": 30.0,
            "retry_backoff": 0.1,
            "retry_backoff_max": 0.1,
            "auto_commit_interval": 5.0,
        }
        settings.update(config)
        self.config = GroupConfig(
            group_id=GROUP,
            group_instance_id=instance_id,
            enable_auto_commit=auto_commit,
            **settings,
        )
        self.assignors = list(assignors) if assignors is not None else [EagerRoundRobin()]
        self.member = GroupMember(self.config, self.assignors, rand=lambda: 0.5)
        self.talk = Conversation(self.member)

    # -- time and the application ---------------------------------------------------------------

    @property
    def now(self) -> float:
        return self.talk.now

    def advance(self, seconds: float) -> None:
        self.talk.advance(seconds)

    def subscribe(self, *topics: str) -> None:
        self.member.subscribe(topics, self.now)

    def poll(self) -> None:
        self.member.poll(self.now)

    def topics(self, **counts: int) -> None:
        self.member.update_metadata(counts, self.now)

    # -- what came out --------------------------------------------------------------------------

    def request(self, sent: SendRequest[Any]) -> Any:
        return self.talk.request(sent)

    def expect(self, kind: type[Any]) -> SendRequest[Any]:
        sent = self.talk.expect(kind)
        assert sent.target == Coordinator(GROUP), "every group request goes to the coordinator"
        return sent

    def events_of(self, kind: type[E]) -> list[E]:
        self.talk.step()
        found = [e for e in self.talk.events if isinstance(e, kind)]
        self.talk.events = [e for e in self.talk.events if not isinstance(e, kind)]
        return found

    def step(self) -> Step | None:
        """The listener step the member asks for now, if any (taken from the events)."""
        self.talk.step()
        steps = [e for e in self.talk.events if hasattr(e, "step")]
        assert len(steps) <= 1, steps
        for s in steps:
            self.talk.events.remove(s)
        return steps[0] if steps else None

    def expect_step(self, kind: type[E]) -> E:
        step = self.step()
        assert isinstance(step, kind), f"expected a {kind.__name__}, got {step!r}"
        return step

    def answer(
        self, step: Any, offsets: dict[TopicPartition, OffsetAndMetadata] | None = None
    ) -> None:
        self.member.listener_done(step.step, self.now, offsets)

    def nothing_sent(self) -> None:
        self.talk.expect_nothing()

    # -- the coordinator's side -----------------------------------------------------------------

    def coordinator_moved(self) -> None:
        """The member told its driver the coordinator moved (the driver finds the new one)."""
        assert self.events_of(CoordinatorMoved) == [CoordinatorMoved(GROUP)]

    def join_request(self) -> tuple[SendRequest[Any], JoinGroupRequest]:
        sent = self.expect(JoinGroupRequest)
        return sent, self.request(sent)

    def reply_join(
        self,
        sent: SendRequest[Any],
        *,
        member_id: str = "m1",
        generation: int = 1,
        leader: str | None = None,
        members: dict[str, bytes] | None = None,
        protocol: str | None = None,
        code: int = 0,
        skip_assignment: bool = False,
    ) -> None:
        request = self.request(sent)
        leader = member_id if leader is None else leader
        if members is None and leader == member_id:
            members = {member_id: request.protocols[0].metadata}
        protocol = protocol or request.protocols[0].name
        self.talk.reply(
            sent,
            JoinGroupResponse(
                error_code=code,
                generation_id=generation,
                protocol_type="consumer",
                protocol_name=protocol,
                leader=leader,
                member_id=member_id,
                skip_assignment=skip_assignment,
                members=[
                    JoinGroupResponse.JoinGroupResponseMember(member_id=m, metadata=md)
                    for m, md in (members or {}).items()
                ],
            ),
        )

    def sync_request(self) -> tuple[SendRequest[Any], SyncGroupRequest]:
        sent = self.expect(SyncGroupRequest)
        return sent, self.request(sent)

    def reply_sync(
        self, sent: SendRequest[Any], partitions: Iterable[TopicPartition] = (), code: int = 0
    ) -> None:
        data = encode_assignment(Assignment(tuple(sorted(partitions)))) if code == 0 else b""
        request = self.request(sent)
        self.talk.reply(
            sent,
            SyncGroupResponse(
                error_code=code,
                protocol_type="consumer",
                protocol_name=request.protocol_name,
                assignment=data,
            ),
        )

    def leader_assignments(self, request: SyncGroupRequest) -> dict[str, frozenset[TopicPartition]]:
        return {
            a.member_id: frozenset(decode_assignment(a.assignment).partitions)
            for a in request.assignments
        }

    def subscription_sent(self, request: JoinGroupRequest) -> Subscription:
        return decode_subscription(request.protocols[0].metadata)

    def heartbeat(self, code: int = 0, *, wait: bool = True) -> SendRequest[Any]:
        """Let a heartbeat interval pass (unless told not to) and answer the heartbeat."""
        if wait:
            self.advance(self.config.heartbeat_interval)
        sent = self.expect(HeartbeatRequest)
        self.talk.reply(sent, HeartbeatResponse(error_code=code))
        return sent

    # -- whole sequences ------------------------------------------------------------------------

    def join_as_follower(
        self,
        assignment: Iterable[TopicPartition],
        *,
        member_id: str = "m1",
        generation: int = 1,
        answer_steps: bool = True,
    ) -> None:
        """JoinGroup (as a follower) then SyncGroup delivering `assignment`; answers the
        revoke/assign steps unless told not to."""
        sent, _ = self.join_request()
        self.reply_join(sent, member_id=member_id, generation=generation, leader="leader")
        sync, request = self.sync_request()
        assert request.assignments == []
        self.reply_sync(sync, assignment)
        if answer_steps:
            self.answer_steps_until_assigned()

    def answer_steps_until_assigned(self) -> Any:
        while True:
            step = self.step()
            assert step is not None, "expected a listener step"
            self.answer(step)
            if type(step).__name__ == "AssignPartitions":
                return step

    def start(self, *topics: str) -> None:
        """Subscribe and poll."""
        self.subscribe(*topics)
        self.poll()


__all__ = ["GROUP", "ErrorCode", "Member", "commit_response", "metadata", "tps"]
