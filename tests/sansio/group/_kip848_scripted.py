"""A KIP-848 member in a scripted conversation: the test plays the driver and the coordinator."""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from typing import Any, TypeVar

from krafka.protocol.error_codes import ErrorCode
from krafka.protocol.messages import (
    ConsumerGroupHeartbeatRequest,
    ConsumerGroupHeartbeatResponse,
)
from krafka.sansio.actions import Coordinator, CoordinatorMoved, SendRequest
from krafka.sansio.group import GroupConfig
from krafka.sansio.group.events import Step
from krafka.sansio.group.kip848.member import ConsumerMember
from krafka.structs import OffsetAndMetadata, TopicPartition
from krafka.testing.conversation import Conversation

E = TypeVar("E")
GROUP = "g"
IDS = {name: uuid.UUID(int=i + 1) for i, name in enumerate(["a", "b", "c", "d"])}
HB = ConsumerGroupHeartbeatResponse


def tps(*specs: str) -> frozenset[TopicPartition]:
    """tps("a-0", "a-1") -> {TopicPartition("a", 0), TopicPartition("a", 1)}."""
    out = set()
    for spec in specs:
        topic, _, partition = spec.rpartition("-")
        out.add(TopicPartition(topic, int(partition)))
    return frozenset(out)


def assignment(partitions: Iterable[TopicPartition]) -> HB.Assignment:
    by_topic: dict[uuid.UUID, list[int]] = {}
    for tp in sorted(partitions):
        by_topic.setdefault(IDS[tp.topic], []).append(tp.partition)
    return HB.Assignment(
        topic_partitions=[HB.TopicPartitions(topic_id=t, partitions=p) for t, p in by_topic.items()]
    )


def owned_in(request: ConsumerGroupHeartbeatRequest) -> frozenset[TopicPartition] | None:
    """The TopicPartitions a heartbeat carries, as names (None: not sent)."""
    if request.topic_partitions is None:
        return None
    names = {v: k for k, v in IDS.items()}
    return frozenset(
        TopicPartition(names[t.topic_id], p) for t in request.topic_partitions for p in t.partitions
    )


def roundtrip(request: Any, version: int) -> Any:
    """The request as a broker at `version` would read it."""
    return type(request).decode(request.encode(version), version)


class Kip848:
    """A `ConsumerMember` and the conversation with it."""

    def __init__(
        self,
        *,
        instance_id: str | None = None,
        auto_commit: bool = False,
        server_assignor: str | None = None,
        rack: str | None = None,
        version: int = 1,
        **config: Any,
    ) -> None:
        settings: dict[str, Any] = {
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
            client_rack=rack,
            **settings,
        )
        self.ids = iter(f"member-{i}" for i in range(1, 100))
        self.member = ConsumerMember(
            self.config,
            server_assignor=server_assignor,
            rand=lambda: 0.5,
            new_id=lambda: next(self.ids),
        )
        self.version = version
        self.talk = Conversation(self.member, versions={68: version})
        self.member.update_topic_ids(IDS, 0.0)

    @property
    def now(self) -> float:
        return self.talk.now

    def advance(self, seconds: float) -> None:
        self.talk.advance(seconds)

    def subscribe(self, *topics: str) -> None:
        self.member.subscribe(topics, self.now)

    def poll(self) -> None:
        self.member.poll(self.now)

    # -- what came out --------------------------------------------------------------------------

    def expect(self, kind: type[Any]) -> SendRequest[Any]:
        sent = self.talk.expect(kind)
        if kind.__name__.endswith("HeartbeatRequest"):
            assert sent.target == Coordinator(GROUP), "heartbeats go to the group coordinator"
        return sent

    def request(self, sent: SendRequest[Any]) -> Any:
        return self.talk.request(sent)

    def events_of(self, kind: type[E]) -> list[E]:
        self.talk.step()
        found = [e for e in self.talk.events if isinstance(e, kind)]
        self.talk.events = [e for e in self.talk.events if not isinstance(e, kind)]
        return found

    def step(self) -> Step | None:
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
        self,
        step: Any,
        offsets: Mapping[TopicPartition, OffsetAndMetadata] | None = None,
        error: BaseException | None = None,
    ) -> None:
        self.member.listener_done(step.step, self.now, offsets, error)

    def nothing_sent(self) -> None:
        self.talk.expect_nothing()

    # -- the coordinator's side -----------------------------------------------------------------

    def coordinator_moved(self) -> None:
        """The member told its driver the coordinator moved (the driver finds the new one)."""
        assert self.events_of(CoordinatorMoved) == [CoordinatorMoved(GROUP)]

    def heartbeat(self) -> tuple[SendRequest[Any], ConsumerGroupHeartbeatRequest]:
        """The next heartbeat; checks it survives the wire at the negotiated version."""
        sent = self.expect(ConsumerGroupHeartbeatRequest)
        request = self.request(sent)
        assert roundtrip(request, self.version) == request
        return sent, request

    def reply(
        self,
        sent: SendRequest[Any],
        *,
        epoch: int = 1,
        assigned: Iterable[TopicPartition] | None = None,
        interval_ms: int = 5000,
        code: int = ErrorCode.NONE,
        member_id: str | None = None,
    ) -> None:
        request = self.request(sent)
        self.talk.reply(
            sent,
            HB(
                error_code=code,
                member_id=member_id if member_id is not None else request.member_id,
                member_epoch=epoch,
                heartbeat_interval_ms=interval_ms,
                assignment=None if assigned is None else assignment(assigned),
            ),
        )

    def answer_steps(self) -> list[Step]:
        """Answer every listener step until none is asked for; returns them."""
        out: list[Step] = []
        while (step := self.step()) is not None:
            out.append(step)
            self.answer(step)
        return out

    def join(self, *topics: str, assigned: Iterable[TopicPartition] = (), epoch: int = 1) -> None:
        """Subscribe, poll, join with `assigned`, reconcile, ack."""
        self.subscribe(*topics)
        self.poll()
        sent, _ = self.heartbeat()
        self.reply(sent, epoch=epoch, assigned=assigned)
        self.poll()
        self.answer_steps()
        sent, request = self.heartbeat()
        assert owned_in(request) == frozenset(assigned)
        self.reply(sent, epoch=epoch)


__all__ = ["GROUP", "HB", "IDS", "Kip848", "assignment", "owned_in", "roundtrip", "tps"]
