"""A model test of `ClientCore`: random request mixes under random connection drops,
coordinator moves, leader moves and time passing. Whatever happens, every request gets exactly
one outcome, no broker ever holds two copies of one request nor serves one twice, coordinator
requests are served by the coordinator of the moment, and the core never names a deadline
already past (the spin that hangs a driver)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest
from _requester import Requester
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from krafka.protocol import ApiKey
from krafka.protocol.error_codes import ErrorCode
from krafka.protocol.messages import (
    ListOffsetsRequest,
    ListOffsetsResponse,
    OffsetCommitRequest,
    OffsetCommitResponse,
    OffsetFetchRequest,
    OffsetFetchResponse,
)
from krafka.sansio.actions import AnyBroker, Coordinator, LeaderOf, SendRequest
from krafka.sansio.client import ClientConfig, ClientCore
from krafka.testing.scripted_cluster import (
    Asked,
    ScriptedCluster,
    coordinator_response,
    metadata_response,
)

NODES = {1: ("b1", 9092), 2: ("b2", 9092), 3: ("b3", 9092)}
GROUPS = ("g", "h")
PARTITIONS = 3


def list_offsets(ident: int, partition: int) -> ListOffsetsRequest:
    part = ListOffsetsRequest.ListOffsetsTopic.ListOffsetsPartition(
        partition_index=partition, timestamp=ident
    )
    topic = ListOffsetsRequest.ListOffsetsTopic(name="t", partitions=[part])
    return ListOffsetsRequest(topics=[topic])


def offset_fetch(ident: int, group: str) -> OffsetFetchRequest:
    topic = OffsetFetchRequest.OffsetFetchRequestTopic(name=f"id-{ident}", partition_indexes=[0])
    return OffsetFetchRequest(group_id=group, topics=[topic])


def offset_commit(ident: int, group: str) -> OffsetCommitRequest:
    """A commit (not safe to resend blindly, unlike OffsetFetch) naming its id as its topic."""
    part = OffsetCommitRequest.OffsetCommitRequestTopic.OffsetCommitRequestPartition(
        partition_index=0, committed_offset=ident
    )
    topic = OffsetCommitRequest.OffsetCommitRequestTopic(name=f"id-{ident}", partitions=[part])
    return OffsetCommitRequest(group_id=group, topics=[topic])


def moved_commit(asked: Asked) -> OffsetCommitResponse:
    """The per-partition NOT_COORDINATOR a commit gets from a broker that is not the
    coordinator: the answer goes to the machine (which retries and reports the move)."""
    parts = OffsetCommitResponse.OffsetCommitResponseTopic.OffsetCommitResponsePartition
    topic = OffsetCommitResponse.OffsetCommitResponseTopic(
        name=asked.body.topics[0].name,
        partitions=[parts(partition_index=0, error_code=ErrorCode.NOT_COORDINATOR)],
    )
    return OffsetCommitResponse(topics=[topic])


def not_leader(partition: int) -> ListOffsetsResponse:
    """What a broker that does not lead the partition answers (the machine's to handle)."""
    parts = ListOffsetsResponse.ListOffsetsTopicResponse.ListOffsetsPartitionResponse
    topic = ListOffsetsResponse.ListOffsetsTopicResponse(
        name="t",
        partitions=[parts(partition_index=partition, error_code=ErrorCode.NOT_LEADER_OR_FOLLOWER)],
    )
    return ListOffsetsResponse(topics=[topic])


def ident_of(asked: Asked) -> int | None:
    body = asked.body
    if asked.sent.api_key == ApiKey.LIST_OFFSETS:
        return int(body.topics[0].partitions[0].timestamp)
    if asked.sent.api_key in (ApiKey.OFFSET_FETCH, ApiKey.OFFSET_COMMIT):
        return int(body.topics[0].name.removeprefix("id-"))
    return None


@dataclass
class Model:
    """The brokers' truth: who leads each partition and coordinates each group."""

    cluster: ScriptedCluster
    requester: Requester
    leaders: list[int] = field(default_factory=lambda: [1, 2, 3])
    coordinators: dict[str, int] = field(default_factory=lambda: {"g": 1, "h": 2})
    sent: dict[int, SendRequest[Any]] = field(default_factory=dict)
    issued_at: dict[int, float] = field(default_factory=dict)
    served: dict[int, int] = field(default_factory=dict)

    def issue(self, kind: str, which: int) -> None:
        ident = 1000 + len(self.sent)
        if kind == "leader":
            partition = which % PARTITIONS
            sent: SendRequest[Any] = SendRequest(
                LeaderOf("t", partition), list_offsets(ident, partition)
            )
        elif kind == "coordinator":
            group = GROUPS[which % len(GROUPS)]
            sent = SendRequest(Coordinator(group), offset_fetch(ident, group), max_version=7)
        elif kind == "commit":
            group = GROUPS[which % len(GROUPS)]
            sent = SendRequest(Coordinator(group), offset_commit(ident, group), max_version=8)
        else:
            sent = SendRequest(AnyBroker(), list_offsets(ident, 0))
        self.sent[ident] = sent
        self.issued_at[ident] = self.cluster.now
        self.requester.ask(sent)
        self.check(self.cluster.step())

    def answer(self, which: int) -> None:
        """Answer the oldest request of one connection (a broker answers in order)."""
        pending = self.cluster.pending()
        if not pending:
            return
        conns = sorted({a.conn_id for a in pending})
        conn_id = conns[which % len(conns)]
        asked = next(a for a in pending if a.conn_id == conn_id)
        self.cluster.asked.remove(asked)
        self.check(self.cluster.answer(asked, self.response(asked)))

    def response(self, asked: Asked) -> Any:
        api = asked.sent.api_key
        if api == ApiKey.METADATA:
            return metadata_response(NODES, {"t": list(self.leaders)})
        if api == ApiKey.FIND_COORDINATOR:
            node = self.coordinators[asked.body.key or asked.body.coordinator_keys[0]]
            return coordinator_response(asked, node, NODES[node])
        ident = ident_of(asked)
        assert ident is not None, asked
        if api in (ApiKey.OFFSET_FETCH, ApiKey.OFFSET_COMMIT):
            if NODES[self.coordinators[asked.body.group_id]] != asked.address:
                if api == ApiKey.OFFSET_COMMIT:
                    return moved_commit(asked)
                return OffsetFetchResponse(error_code=ErrorCode.NOT_COORDINATOR)
            self.served[ident] = self.served.get(ident, 0) + 1
            if api == ApiKey.OFFSET_COMMIT:
                return OffsetCommitResponse(topics=[])
            return OffsetFetchResponse(topics=[])
        partition = asked.body.topics[0].partitions[0].partition_index
        target = self.sent[ident].target
        if isinstance(target, LeaderOf) and NODES.get(self.leaders[partition]) != asked.address:
            return not_leader(partition)
        self.served[ident] = self.served.get(ident, 0) + 1
        return ListOffsetsResponse(topics=[])

    def drop(self, which: int) -> None:
        opened = sorted(self.cluster.opened)
        if opened:
            self.check(self.cluster.drop(opened[which % len(opened)]))

    def move_coordinator(self, which: int) -> None:
        group = GROUPS[which % len(GROUPS)]
        self.coordinators[group] = 1 + (self.coordinators[group] % len(NODES))

    def move_leader(self, which: int) -> None:
        """The next broker leads the partition, or none does for a while (an election)."""
        partition = which % PARTITIONS
        cycle = [*NODES, -1]
        self.leaders[partition] = cycle[(cycle.index(self.leaders[partition]) + 1) % len(cycle)]

    def advance(self, seconds: float) -> None:
        self.check(self.cluster.advance(seconds))

    def check(self, events: list[Any]) -> None:
        core, now = self.cluster.core, self.cluster.now
        deadline = core.next_deadline()
        assert deadline is None or deadline > now, f"deadline {deadline} is not after {now}"
        idents = [i for a in self.cluster.asked if (i := ident_of(a)) is not None]
        assert len(idents) == len(set(idents)), f"a request is in flight twice: {idents}"
        assert all(n == 1 for n in self.served.values()), self.served

    def settle(self) -> None:
        """Answer everything until every request has its outcome."""
        for _ in range(400):
            if all(sent in self.requester.outcomes for sent in self.sent.values()):
                return
            if self.cluster.pending():
                self.answer(0)
            else:
                self.check(self.cluster.advance_to_deadline())
        raise AssertionError("requests without an outcome: " + repr(self.missing()))

    def missing(self) -> list[int]:
        return [i for i, s in self.sent.items() if s not in self.requester.outcomes]


ISSUE = ("leader", "coordinator", "commit", "any")
#: Answers are the commonest step, so that requests get far enough for a move or a drop to
#: catch them on the way.
STEP = st.tuples(
    st.sampled_from(
        [*ISSUE, *["answer"] * 8, "drop", "drop", "move_coordinator", "move_leader", "advance"]
    ),
    st.integers(0, 20),
)


def run(steps: list[tuple[str, Any]]) -> Model:
    cluster = ScriptedCluster(ClientCore(ClientConfig("b1:9092"), now=0.0))
    requester = Requester()
    cluster.core.add(requester)
    model = Model(cluster, requester)
    for op, arg in steps:
        if op in ISSUE:
            model.issue(op, arg)
        elif op == "advance":
            model.advance(arg / 10)
        else:
            getattr(model, op)(arg)
    model.settle()
    timeout = cluster.core.config.request_timeout
    for ident, sent in model.sent.items():
        (outcome,) = requester.outcomes[sent]
        fresh = requester.answered_at[sent] - model.issued_at[ident] < timeout
        served = model.served.get(ident, 0)
        if isinstance(sent.request, OffsetFetchRequest):
            assert outcome == OffsetFetchResponse(topics=[]) or not fresh, outcome
        elif isinstance(sent.request, OffsetCommitRequest):
            assert not isinstance(outcome, Exception) or not fresh, outcome
        success = outcome in (
            ListOffsetsResponse(topics=[]),
            OffsetFetchResponse(topics=[]),
            OffsetCommitResponse(topics=[]),
        )
        assert served == (1 if success else 0), (outcome, served)
    return model


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(STEP, max_size=60))
def test_requests_are_rerouted_never_lost_or_duplicated(steps: list[tuple[str, Any]]) -> None:
    run(steps)


@pytest.mark.slow
@settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(STEP, max_size=200))
def test_requests_are_rerouted_never_lost_or_duplicated_long(steps: list[tuple[str, Any]]) -> None:
    run(steps)
