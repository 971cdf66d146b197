"""A share consumer machine in a scripted conversation: the test plays the driver, the group
coordinator (node 1) and the partition leaders."""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from typing import Any

from krafka.codec import Record, encode_batch
from krafka.protocol import ApiKey
from krafka.protocol.error_codes import ErrorCode
from krafka.protocol.messages import (
    ShareAcknowledgeRequest,
    ShareAcknowledgeResponse,
    ShareFetchRequest,
    ShareFetchResponse,
    ShareGroupHeartbeatRequest,
    ShareGroupHeartbeatResponse,
)
from krafka.sansio.actions import Coordinator, CoordinatorMoved, SendRequest
from krafka.sansio.share import ShareConsumerMachine, ShareFetchConfig, ShareMember
from krafka.sansio.share.inflight import AcknowledgementMode
from krafka.structs import TopicPartition
from krafka.testing.conversation import Conversation

GROUP = "sg"
IDS = {"a": uuid.UUID(int=1), "b": uuid.UUID(int=2)}
NAMES = {v: k for k, v in IDS.items()}
HB = ShareGroupHeartbeatResponse
SF = ShareFetchResponse
SA = ShareAcknowledgeResponse


def tp(spec: str) -> TopicPartition:
    topic, _, partition = spec.rpartition("-")
    return TopicPartition(topic, int(partition))


def batch(base: int, values: Iterable[bytes]) -> bytes:
    records = [Record(i, 1000, None, v, []) for i, v in enumerate(values)]
    return encode_batch(records, "none", base, -1, -1, 0, False)


def acks_in(request: Any) -> dict[TopicPartition, list[tuple[int, int, list[int]]]]:
    """{partition: [(first, last, types)]} of a ShareFetch/ShareAcknowledge request."""
    out: dict[TopicPartition, list[tuple[int, int, list[int]]]] = {}
    for topic in request.topics:
        for part in topic.partitions:
            batches = [
                (b.first_offset, b.last_offset, list(b.acknowledge_types))
                for b in part.acknowledgement_batches
            ]
            if batches:
                out[TopicPartition(NAMES[topic.topic_id], part.partition_index)] = batches
    return out


def named_in(request: ShareFetchRequest) -> set[TopicPartition]:
    return {
        TopicPartition(NAMES[t.topic_id], p.partition_index)
        for t in request.topics
        for p in t.partitions
    }


def forgotten_in(request: ShareFetchRequest) -> set[TopicPartition]:
    return {
        TopicPartition(NAMES[t.topic_id], p)
        for t in request.forgotten_topics_data
        for p in t.partitions
    }


class Share:
    """A `ShareConsumerMachine` and the conversation with it."""

    def __init__(self, mode: str = "implicit", *, version: int = 1, **config: Any) -> None:
        self.ids = iter(f"m-{i}" for i in range(1, 100))
        self.member = ShareMember(GROUP, rand=lambda: 0.5, new_id=lambda: next(self.ids))
        self.machine = ShareConsumerMachine(
            GROUP,
            ShareFetchConfig(acknowledgement_mode=AcknowledgementMode(mode), **config),
            self.member,
        )
        versions = {ApiKey.SHARE_FETCH: version, ApiKey.SHARE_ACKNOWLEDGE: version}
        self.talk = Conversation(self.machine, versions=versions)

    @property
    def now(self) -> float:
        return self.talk.now

    def metadata(self, leaders: Mapping[str, int]) -> None:
        self.machine.update_metadata(IDS, {tp(s): n for s, n in leaders.items()}, self.now)

    def expect(self, kind: type[Any]) -> SendRequest[Any]:
        sent = self.talk.expect(kind)
        if kind.__name__.endswith("HeartbeatRequest"):
            assert sent.target == Coordinator(GROUP), "heartbeats go to the group coordinator"
        return sent

    def request(self, sent: SendRequest[Any]) -> Any:
        return self.talk.request(sent)

    def events_of(self, kind: type[Any]) -> list[Any]:
        self.talk.step()
        found = [e for e in self.talk.events if isinstance(e, kind)]
        self.talk.events = [e for e in self.talk.events if not isinstance(e, kind)]
        return found

    # -- the coordinator ------------------------------------------------------------------------

    def coordinator_moved(self) -> None:
        """The member told its driver the coordinator moved (the driver finds the new one)."""
        assert self.events_of(CoordinatorMoved) == [CoordinatorMoved(GROUP)]

    def heartbeat(self) -> tuple[SendRequest[Any], ShareGroupHeartbeatRequest]:
        sent = self.expect(ShareGroupHeartbeatRequest)
        return sent, self.request(sent)

    def reply_heartbeat(
        self,
        sent: SendRequest[Any],
        *,
        epoch: int = 1,
        assigned: Iterable[str] | None = None,
        code: int = ErrorCode.NONE,
        interval_ms: int = 5000,
    ) -> None:
        assignment = None
        if assigned is not None:
            by_topic: dict[uuid.UUID, list[int]] = {}
            for spec in sorted(assigned):
                p = tp(spec)
                by_topic.setdefault(IDS[p.topic], []).append(p.partition)
            assignment = HB.Assignment(
                topic_partitions=[
                    HB.TopicPartitions(topic_id=t, partitions=p) for t, p in by_topic.items()
                ]
            )
        self.talk.reply(
            sent,
            HB(error_code=code, member_id=self.request(sent).member_id, member_epoch=epoch,
               heartbeat_interval_ms=interval_ms, assignment=assignment),
        )  # fmt: skip

    def join(self, *assigned: str, leaders: Mapping[str, int] | None = None) -> None:
        """Subscribe to the assigned partitions' topics, poll, join, take the assignment."""
        self.machine.subscribe(sorted({tp(s).topic for s in assigned}), self.now)
        self.metadata(leaders or {s: 1 for s in assigned})
        self.machine.poll(self.now)
        sent, request = self.heartbeat()
        assert request.member_epoch == 0 and request.subscribed_topic_names
        self.reply_heartbeat(sent, assigned=assigned)
        sent, request = self.heartbeat()  # acknowledges the assignment at once
        self.reply_heartbeat(sent)

    # -- the partition leaders ------------------------------------------------------------------

    def fetch(self) -> tuple[SendRequest[Any], ShareFetchRequest]:
        sent = self.expect(ShareFetchRequest)
        return sent, self.request(sent)

    def reply_fetch(
        self,
        sent: SendRequest[Any],
        data: Mapping[str, tuple[bytes | None, list[tuple[int, int, int]]]] | None = None,
        *,
        code: int = ErrorCode.NONE,
        ack_codes: Mapping[str, int] | None = None,
        partition_codes: Mapping[str, int] | None = None,
        lock_ms: int = 30000,
    ) -> None:
        """`data`: {"a-0": (records, [(first, last, delivery count)])}; every partition the
        request named gets an entry."""
        request = self.request(sent)
        data = data or {}
        specs = {f"{t.topic}-{t.partition}" for t in named_in(request) | set(acks_in(request))}
        specs |= set(data)
        by_topic: dict[uuid.UUID, list[Any]] = {}
        for spec in sorted(specs):
            p = tp(spec)
            records, acquired = data.get(spec, (None, []))
            by_topic.setdefault(IDS[p.topic], []).append(
                SF.ShareFetchableTopicResponse.PartitionData(
                    partition_index=p.partition,
                    error_code=(partition_codes or {}).get(spec, 0),
                    acknowledge_error_code=(ack_codes or {}).get(spec, 0),
                    records=records,
                    acquired_records=[
                        SF.ShareFetchableTopicResponse.PartitionData.AcquiredRecords(
                            first_offset=f, last_offset=last, delivery_count=c
                        )
                        for f, last, c in acquired
                    ],
                )
            )
        responses = [
            SF.ShareFetchableTopicResponse(topic_id=t, partitions=p) for t, p in by_topic.items()
        ]
        self.talk.reply(
            sent, SF(error_code=code, acquisition_lock_timeout_ms=lock_ms, responses=responses)
        )

    def acknowledge(self) -> tuple[SendRequest[Any], ShareAcknowledgeRequest]:
        sent = self.expect(ShareAcknowledgeRequest)
        return sent, self.request(sent)

    def reply_acknowledge(
        self, sent: SendRequest[Any], *, code: int = 0, codes: Mapping[str, int] | None = None
    ) -> None:
        request = self.request(sent)
        by_topic: dict[uuid.UUID, list[Any]] = {}
        for p in sorted(acks_in(request)):
            spec = f"{p.topic}-{p.partition}"
            by_topic.setdefault(IDS[p.topic], []).append(
                SA.ShareAcknowledgeTopicResponse.PartitionData(
                    partition_index=p.partition, error_code=(codes or {}).get(spec, 0)
                )
            )
        responses = [
            SA.ShareAcknowledgeTopicResponse(topic_id=t, partitions=p) for t, p in by_topic.items()
        ]
        self.talk.reply(sent, SA(error_code=code, responses=responses))
