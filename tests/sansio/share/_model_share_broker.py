"""A model share-group cluster for model-based tests: one coordinator and share-partition
leaders that keep each record's state (available, acquired by a member, accepted, archived)
exactly as KIP-932 describes, check every request the client sends against it, and count what
could go wrong (a settlement for a record the member never acquired, or settled twice)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from _share_scripted import IDS, NAMES, batch

from krafka.protocol.error_codes import ErrorCode
from krafka.protocol.messages import (
    ShareAcknowledgeRequest,
    ShareAcknowledgeResponse,
    ShareFetchRequest,
    ShareFetchResponse,
    ShareGroupHeartbeatRequest,
    ShareGroupHeartbeatResponse,
)
from krafka.sansio.share.acknowledgements import GAP, AcknowledgeType
from krafka.structs import TopicPartition

SF, SA, HB = ShareFetchResponse, ShareAcknowledgeResponse, ShareGroupHeartbeatResponse


class State(Enum):
    AVAILABLE = "available"
    ACQUIRED = "acquired"
    ACCEPTED = "accepted"
    ARCHIVED = "archived"


@dataclass
class RecordState:
    state: State = State.AVAILABLE
    deliveries: int = 0
    acquisition: int = 0  # which acquisition holds it (0: none)
    gap: bool = False


@dataclass
class ModelCluster:
    partitions: dict[TopicPartition, int]  # partition -> leader
    records: int = 8
    max_deliveries: int = 4
    gaps: frozenset[int] = frozenset({3})  # offsets with no record (a control batch, say)
    state: dict[TopicPartition, list[RecordState]] = field(default_factory=dict)
    sessions: dict[int, int] = field(default_factory=dict)  # node -> next expected epoch
    session_partitions: dict[int, set[TopicPartition]] = field(default_factory=dict)
    acquisitions: int = 0
    settled_twice: int = 0
    unknown_settlements: int = 0
    accepted_by_client: set[tuple[TopicPartition, int]] = field(default_factory=set)
    lose_next_session: bool = False

    def __post_init__(self) -> None:
        for tp in self.partitions:
            self.state[tp] = [RecordState(gap=o in self.gaps) for o in range(self.records)]

    # -- answering ------------------------------------------------------------------------------

    def answer(self, node: int, request: Any) -> Any:
        if isinstance(request, ShareGroupHeartbeatRequest):
            return self._heartbeat(request)
        if isinstance(request, ShareFetchRequest):
            return self._fetch(node, request)
        assert isinstance(request, ShareAcknowledgeRequest)
        return self._acknowledge(node, request)

    def _heartbeat(self, request: ShareGroupHeartbeatRequest) -> HB:
        if request.member_epoch == -1:
            return HB(member_id=request.member_id, member_epoch=-1)
        by_topic: dict[uuid.UUID, list[int]] = {}
        for tp in sorted(self.partitions):
            by_topic.setdefault(IDS[tp.topic], []).append(tp.partition)
        assignment = HB.Assignment(
            topic_partitions=[
                HB.TopicPartitions(topic_id=t, partitions=p) for t, p in by_topic.items()
            ]
        )
        return HB(member_id=request.member_id, member_epoch=1, heartbeat_interval_ms=1000,
                  assignment=assignment)  # fmt: skip

    def _session(self, node: int, epoch: int, *, opening: bool) -> int:
        """The top-level code for a request at `epoch`; opens/moves/closes the session."""
        if epoch == 0:
            if not opening:
                return ErrorCode.INVALID_REQUEST
            self.release_node(node)
            self.sessions[node] = 1
            return ErrorCode.NONE
        expected = self.sessions.get(node)
        if expected is None:
            return ErrorCode.SHARE_SESSION_NOT_FOUND
        if epoch == -1:
            return ErrorCode.NONE
        if self.lose_next_session:
            self.lose_next_session = False
            self.release_node(node)
            del self.sessions[node]
            return ErrorCode.SHARE_SESSION_NOT_FOUND
        if epoch != expected:
            self.release_node(node)
            del self.sessions[node]
            return ErrorCode.INVALID_SHARE_SESSION_EPOCH
        self.sessions[node] = expected + 1
        return ErrorCode.NONE

    def _fetch(self, node: int, request: ShareFetchRequest) -> SF:
        code = self._session(node, request.share_session_epoch, opening=True)
        if code != ErrorCode.NONE:
            return SF(error_code=code)
        in_session = self.session_partitions.setdefault(node, set())
        if request.share_session_epoch == 0:
            in_session.clear()
        acks: dict[TopicPartition, list[Any]] = {}
        for topic in request.topics:
            for part in topic.partitions:
                tp = TopicPartition(NAMES[topic.topic_id], part.partition_index)
                assert self.partitions[tp] == node, f"{tp} fetched from node {node}"
                in_session.add(tp)
                acks[tp] = part.acknowledgement_batches
        for topic in request.forgotten_topics_data:
            in_session.difference_update(
                TopicPartition(NAMES[topic.topic_id], p) for p in topic.partitions
            )
        responses: dict[uuid.UUID, list[Any]] = {}
        budget = request.max_records
        for tp in sorted(in_session | set(acks)):
            ack_code = self._settle(tp, acks.get(tp, []))
            records, acquired = self._acquire(tp, budget) if tp in in_session else (None, [])
            budget -= len(acquired)
            responses.setdefault(IDS[tp.topic], []).append(
                SF.ShareFetchableTopicResponse.PartitionData(
                    partition_index=tp.partition, acknowledge_error_code=ack_code, records=records,
                    acquired_records=[
                        SF.ShareFetchableTopicResponse.PartitionData.AcquiredRecords(
                            first_offset=f, last_offset=last, delivery_count=c)
                        for f, last, c in acquired
                    ],
                )
            )  # fmt: skip
        return SF(
            acquisition_lock_timeout_ms=30000,
            responses=[
                SF.ShareFetchableTopicResponse(topic_id=t, partitions=p)
                for t, p in responses.items()
            ],
        )

    def _acknowledge(self, node: int, request: ShareAcknowledgeRequest) -> SA:
        code = self._session(node, request.share_session_epoch, opening=False)
        if code != ErrorCode.NONE:
            return SA(error_code=code)
        responses: dict[uuid.UUID, list[Any]] = {}
        for topic in request.topics:
            for part in topic.partitions:
                tp = TopicPartition(NAMES[topic.topic_id], part.partition_index)
                ack_code = self._settle(tp, part.acknowledgement_batches)
                responses.setdefault(topic.topic_id, []).append(
                    SA.ShareAcknowledgeTopicResponse.PartitionData(
                        partition_index=tp.partition, error_code=ack_code
                    )
                )
        if request.share_session_epoch == -1:
            self.release_node(node)
            self.sessions.pop(node, None)
        return SA(
            responses=[
                SA.ShareAcknowledgeTopicResponse(topic_id=t, partitions=p)
                for t, p in responses.items()
            ]
        )

    # -- record states --------------------------------------------------------------------------

    def _acquire(
        self, tp: TopicPartition, budget: int
    ) -> tuple[bytes | None, list[tuple[int, int, int]]]:
        data, acquired = b"", []
        for offset, rec in enumerate(self.state[tp]):
            if budget <= 0:
                break
            if rec.state is not State.AVAILABLE:
                continue
            self.acquisitions += 1
            rec.state, rec.acquisition = State.ACQUIRED, self.acquisitions
            rec.deliveries += 1
            budget -= 1
            acquired.append((offset, offset, rec.deliveries))
            if not rec.gap:
                data += batch(offset, [b"%s-%d-%d" % (tp.topic.encode(), tp.partition, offset)])
        return (data or None), acquired

    def _settle(self, tp: TopicPartition, batches: list[Any]) -> int:
        code = ErrorCode.NONE
        for b in batches:
            types = list(b.acknowledge_types)
            for index, offset in enumerate(range(b.first_offset, b.last_offset + 1)):
                kind = types[0] if len(types) == 1 else types[index]
                code = self._settle_one(tp, offset, kind) or code
        return code

    def _settle_one(self, tp: TopicPartition, offset: int, kind: int) -> int:
        if not 0 <= offset < self.records:
            self.unknown_settlements += 1
            return ErrorCode.INVALID_RECORD_STATE
        rec = self.state[tp][offset]
        if rec.state is not State.ACQUIRED:
            if rec.state in (State.ACCEPTED, State.ARCHIVED) and rec.acquisition == -1:
                self.settled_twice += 1
            return ErrorCode.INVALID_RECORD_STATE
        if kind == GAP:
            assert rec.gap, f"GAP for {tp} offset {offset}, which has a record"
            rec.state = State.ARCHIVED
        elif kind == AcknowledgeType.ACCEPT:
            rec.state = State.ACCEPTED
            self.accepted_by_client.add((tp, offset))
        elif kind == AcknowledgeType.REJECT:
            rec.state = State.ARCHIVED
        elif kind == AcknowledgeType.RELEASE:
            self._release(rec)
            return ErrorCode.NONE
        rec.acquisition = -1  # settled for good
        return ErrorCode.NONE

    def _release(self, rec: RecordState) -> None:
        rec.acquisition = 0
        rec.state = State.ARCHIVED if rec.deliveries >= self.max_deliveries else State.AVAILABLE

    def release_node(self, node: int) -> None:
        for tp, leader in self.partitions.items():
            if leader == node:
                for rec in self.state[tp]:
                    if rec.state is State.ACQUIRED:
                        self._release(rec)

    def acquired(self) -> int:
        return sum(r.state is State.ACQUIRED for recs in self.state.values() for r in recs)

    def finished(self) -> bool:
        return all(
            r.state in (State.ACCEPTED, State.ARCHIVED)
            for recs in self.state.values()
            for r in recs
        )
