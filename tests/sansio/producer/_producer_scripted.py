"""Helpers driving the `ProducerEngine` through its contract with scripted broker responses
(protocol objects, round-tripped through the wire format), a fake cluster and a hand-moved
clock."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from krafka.codec import decode_batches
from krafka.errors import KrafkaError
from krafka.protocol.messages import (
    AddPartitionsToTxnRequest,
    AddPartitionsToTxnResponse,
    InitProducerIdRequest,
    InitProducerIdResponse,
    ProduceRequest,
    ProduceResponse,
)
from krafka.sansio.actions import (
    AnyBroker,
    Broker,
    Coordinator,
    CoordinatorType,
    RefreshMetadata,
    SendRequest,
)
from krafka.sansio.metadata import PartitionInfo
from krafka.sansio.producer import ProducerConfig, ProducerEngine, RecordHandle, TxnState
from krafka.testing.conversation import Conversation

TP = ("t", 0)
PRODUCE_VERSION = 9
TIMESTAMP = 1_700_000_000_000


def partition_response(partition: int, error_code: int = 0, base_offset: int = 0) -> Any:
    cls = ProduceResponse.TopicProduceResponse.PartitionProduceResponse
    return cls(index=partition, error_code=error_code, base_offset=base_offset)


def produce_response(results: Mapping[tuple[str, int], tuple[int, int]]) -> Any:
    """`{(topic, partition): (error_code, base_offset)}` -> a ProduceResponse."""
    by_topic: dict[str, list[Any]] = {}
    for (topic, partition), (code, offset) in results.items():
        by_topic.setdefault(topic, []).append(partition_response(partition, code, offset))
    return ProduceResponse(
        responses=[
            ProduceResponse.TopicProduceResponse(name=t, partition_responses=parts)
            for t, parts in by_topic.items()
        ]
    )


class Cluster:
    """A fake cluster's metadata view: topics "t" and "u" of 16 partitions; partitions not in
    `leaders` are led by broker 1 (None: no leader known)."""

    def __init__(self) -> None:
        self.partition_counts: dict[str, int] = {"t": 16, "u": 16}
        self.topic_errors: dict[str, int] = {}
        self.leaders: dict[tuple[str, int], int | None] = {}

    def partition(self, topic: str, partition: int) -> PartitionInfo | None:
        if topic not in self.partition_counts:
            return None
        leader = self.leaders.get((topic, partition), 1)
        return None if leader is None else PartitionInfo(topic, partition, leader)


@dataclass(frozen=True)
class Sent:
    """A Produce request the engine asked for, as the broker reads it."""

    sent: SendRequest[Any]
    request: ProduceRequest

    @property
    def node_id(self) -> int:
        target = self.sent.target
        assert isinstance(target, Broker)
        return target.node_id

    @property
    def payloads(self) -> dict[tuple[str, int], bytes]:
        """The record batch bytes per partition, in request order."""
        return {
            (topic.name, part.index): bytes(part.records)
            for topic in self.request.topic_data
            for part in topic.partition_data
        }

    @property
    def partitions(self) -> set[tuple[str, int]]:
        return set(self.payloads)


class Harness:
    """A `ProducerEngine` on a fake cluster (`leaders`), driven through a `Conversation`; the
    producer id is granted at once unless `identity` is None."""

    def __init__(
        self,
        config: ProducerConfig | None = None,
        *,
        identity: tuple[int, int] | None = (1000, 0),
        transactional: bool = False,
    ) -> None:
        self.config = config or ProducerConfig(linger=0.0, retry_backoff=0.01)
        assert transactional == (self.config.transactional_id is not None)
        self.cluster = Cluster()
        self.leaders = self.cluster.leaders
        self.engine = ProducerEngine(self.config, self.cluster, rand=lambda: 0.5)
        self.accumulator = self.engine.accumulator
        self.sender = self.engine.sender
        self.txn = self.engine.transactions
        self.talk = Conversation(self.engine)
        #: The topics the last `drain` asked metadata for.
        self.stale: frozenset[str] = frozenset()
        if self.txn is not None and identity is not None:
            self.grant_id(*identity)

    @property
    def now(self) -> float:
        return self.talk.now

    @now.setter
    def now(self, value: float) -> None:
        self.talk.now = value

    def advance(self, seconds: float) -> None:
        self.talk.now += seconds

    def step(self) -> None:
        """`next_actions`, with the driver's part: a metadata refresh asked for is served at
        once (the fake cluster is always current)."""
        self.talk.step()
        asked = [e for e in self.talk.events if isinstance(e, RefreshMetadata)]
        if asked:
            self.stale = frozenset(t for e in asked for t in (e.topics or ()))
            self.talk.events[:] = [e for e in self.talk.events if e not in asked]
            self.engine.metadata_updated(self.now)

    def wants_producer_id(self) -> bool:
        """The engine asks for InitProducerId now (first id or an epoch bump)."""
        self.step()
        return any(
            isinstance(self.talk.request(s), InitProducerIdRequest) for s in self.talk.outbox
        )

    def grant_id(self, producer_id: int, epoch: int) -> None:
        """Answer the engine's InitProducerId (asking for the first id if needed)."""
        assert self.txn is not None
        if self.txn.state is TxnState.UNINITIALIZED:
            self.engine.initialize(self.now)
        sent = self.talk.expect(InitProducerIdRequest)
        txn_id = self.config.transactional_id
        expected = (
            AnyBroker() if txn_id is None else Coordinator(txn_id, CoordinatorType.TRANSACTION)
        )
        assert sent.target == expected
        response = InitProducerIdResponse(producer_id=producer_id, producer_epoch=epoch)
        self.talk.reply(sent, response)
        self.step()

    def begin_with(self, *tps: tuple[str, int]) -> None:
        """Begin a transaction and add `tps` to it (answering AddPartitionsToTxn)."""
        assert self.txn is not None
        self.engine.begin(self.now)
        for tp in tps:
            self.txn.may_send_to(tp)
        self.answer_add_partitions()

    def answer_add_partitions(self, code: int = 0) -> set[tuple[str, int]]:
        """Answer the engine's AddPartitionsToTxn; returns the partitions it asked for."""
        sent = self.talk.expect(AddPartitionsToTxnRequest)
        request = self.talk.request(sent)
        asked = {(t.name, p) for t in request.v3_and_below_topics for p in t.partitions}
        topic_cls = AddPartitionsToTxnResponse.AddPartitionsToTxnTopicResult
        part_cls = topic_cls.AddPartitionsToTxnPartitionResult
        results = [
            topic_cls(
                name=topic,
                results_by_partition=[
                    part_cls(partition_index=p, partition_error_code=code)
                    for t, p in sorted(asked)
                    if t == topic
                ],
            )
            for topic in sorted({t for t, _ in asked})
        ]
        self.talk.reply(sent, AddPartitionsToTxnResponse(results_by_topic_v3_and_below=results))
        self.step()
        return asked

    def send(
        self, value: bytes, tp: tuple[str, int] = TP, key: bytes | None = None
    ) -> RecordHandle:
        handle = self.engine.append(tp[0], tp[1], TIMESTAMP, key, value, None, self.now, 1)
        assert isinstance(handle, RecordHandle)
        return handle

    def confirm(self, tp: tuple[str, int] = TP, value: bytes = b"warm-up..") -> None:
        """Send one batch to `tp` and acknowledge it: an idempotent producer pipelines a
        partition's batches only once the broker acknowledged one under its producer id."""
        self.send(value, tp)
        (plan,) = self.drain()
        self.answer(plan)

    def drain(self) -> list[Sent]:
        """Every Produce request the engine asked for by now (after a `next_actions`)."""
        self.step()
        produce = [s for s in self.talk.outbox if isinstance(s.request, ProduceRequest)]
        for sent in produce:
            self.talk.outbox.remove(sent)
        return [Sent(s, decode_request(s)) for s in produce]

    def answer(
        self,
        plan: Sent,
        codes: Mapping[tuple[str, int], int] | int = 0,
        base_offset: int = 0,
    ) -> None:
        if isinstance(codes, int):
            codes = {tp: codes for tp in plan.partitions}
        response = produce_response({tp: (code, base_offset) for tp, code in codes.items()})
        self.talk.reply(plan.sent, response)

    def fail(self, plan: Sent, error: KrafkaError) -> None:
        self.talk.fail(plan.sent, error)


def decode_request(sent: SendRequest[Any]) -> ProduceRequest:
    """The Produce request as a broker decodes it."""
    request = sent.request
    assert isinstance(request, ProduceRequest)
    return ProduceRequest.decode(request.encode(PRODUCE_VERSION), PRODUCE_VERSION)


def sequences(plan: Sent) -> dict[tuple[str, int], tuple[int, int, int]]:
    """(base_sequence, producer_epoch, record count) per partition, decoded from the wire."""
    out = {}
    for tp, payload in plan.payloads.items():
        (batch,) = decode_batches(payload)
        out[tp] = (batch.base_sequence, batch.producer_epoch, len(batch.records))
    return out


def values(plan: Sent, tp: tuple[str, int] = TP) -> list[bytes]:
    return [r.value for b in decode_batches(plan.payloads[tp]) for r in b.records]
