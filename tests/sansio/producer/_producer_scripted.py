"""Helpers driving the sans-IO producer with scripted broker responses (protocol objects)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from krafka.codec import decode_batches
from krafka.protocol.messages import (
    AddPartitionsToTxnRequest,
    AddPartitionsToTxnResponse,
    FindCoordinatorRequest,
    FindCoordinatorResponse,
    InitProducerIdRequest,
    InitProducerIdResponse,
    ProduceRequest,
    ProduceResponse,
)
from krafka.sansio.producer import (
    ProducerConfig,
    ProducerCore,
    ProduceRequestPlan,
    RecordHandle,
    TxnState,
    wire,
)
from krafka.testing.conversation import Conversation

TP = ("t", 0)
PRODUCE_VERSION = 9


def partition_response(partition: int, error_code: int = 0, base_offset: int = 0) -> Any:
    cls = ProduceResponse.TopicProduceResponse.PartitionProduceResponse
    return cls(index=partition, error_code=error_code, base_offset=base_offset)


def produce_response(results: Mapping[tuple[str, int], tuple[int, int]]) -> Any:
    """`{(topic, partition): (error_code, base_offset)}` -> a decoded ProduceResponse."""
    by_topic: dict[str, list[Any]] = {}
    for (topic, partition), (code, offset) in results.items():
        by_topic.setdefault(topic, []).append(partition_response(partition, code, offset))
    response = ProduceResponse(
        responses=[
            ProduceResponse.TopicProduceResponse(name=t, partition_responses=parts)
            for t, parts in by_topic.items()
        ]
    )
    # Round-trip through the wire format, as a real broker answer would arrive.
    return ProduceResponse.decode(response.encode(PRODUCE_VERSION), PRODUCE_VERSION)


class Leaders(dict[tuple[str, int], "int | None"]):
    """A fake cluster's leaders (partitions not listed are led by broker 1)."""

    def leader_id(self, topic: str, partition: int, now: float) -> int | None:
        return self.get((topic, partition), 1)


class Harness:
    """The producer's sans-IO core with a fake single-broker cluster and a controllable clock;
    the transaction machine (producer ids, transactions) is driven by a scripted conversation."""

    def __init__(
        self,
        config: ProducerConfig | None = None,
        *,
        identity: tuple[int, int] | None = (1000, 0),
        transactional: bool = False,
    ) -> None:
        self.config = config or ProducerConfig(linger=0.0, retry_backoff=0.01)
        assert transactional == (self.config.transactional_id is not None)
        self.core = ProducerCore.build(self.config, rand=lambda: 0.5)
        self.accumulator = self.core.accumulator
        self.sender = self.core.sender
        self.txn = self.core.transactions
        self.talk = Conversation(self.txn) if self.txn is not None else None
        self.leaders = Leaders()
        #: The topics the last `drain` asked metadata for.
        self.stale: frozenset[str] = frozenset()
        if self.txn is not None and identity is not None:
            self.grant_id(*identity)

    @property
    def now(self) -> float:
        return self.talk.now if self.talk is not None else self._now

    @now.setter
    def now(self, value: float) -> None:
        if self.talk is not None:
            self.talk.now = value
        self._now = value

    _now = 0.0

    def wants_producer_id(self) -> bool:
        """The transaction machine asks for InitProducerId now (first id or an epoch bump)."""
        assert self.talk is not None
        self.talk.step()
        return any(
            isinstance(self.talk.request(s), InitProducerIdRequest) for s in self.talk.outbox
        )

    def grant_id(self, producer_id: int, epoch: int) -> None:
        """Answer the machine's InitProducerId (asking for the first id if needed)."""
        assert self.txn is not None and self.talk is not None
        if self.txn.state is TxnState.UNINITIALIZED:
            self.txn.initialize(self.now)
        if self.config.transactional_id is not None:
            lookup = self.talk.expect(FindCoordinatorRequest)
            key = self.talk.request(lookup).coordinator_keys[0]
            entry = FindCoordinatorResponse.Coordinator(key=key, node_id=1, host="b", port=1)
            self.talk.reply(lookup, FindCoordinatorResponse(coordinators=[entry]))
        sent = self.talk.expect(InitProducerIdRequest)
        response = InitProducerIdResponse(producer_id=producer_id, producer_epoch=epoch)
        self.talk.reply(sent, response)
        self.talk.step()

    def begin_with(self, *tps: tuple[str, int]) -> None:
        """Begin a transaction and add `tps` to it (answering AddPartitionsToTxn)."""
        assert self.txn is not None and self.talk is not None
        self.txn.begin(self.now)
        for tp in tps:
            self.txn.may_send_to(tp)
        self.answer_add_partitions()

    def answer_add_partitions(self, code: int = 0) -> set[tuple[str, int]]:
        """Answer the machine's AddPartitionsToTxn; returns the partitions it asked for."""
        assert self.talk is not None
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
        self.talk.step()
        return asked

    def send(
        self, value: bytes, tp: tuple[str, int] = TP, key: bytes | None = None
    ) -> RecordHandle:
        _, handle = self.accumulator.append(
            tp[0], tp[1], 1_700_000_000_000, key, value, None, 21 + len(value), self.now, 1
        )
        return handle

    def confirm(self, tp: tuple[str, int] = TP, value: bytes = b"warm-up..") -> None:
        """Send one batch to `tp` and acknowledge it: an idempotent producer pipelines a
        partition's batches only once the broker acknowledged one under its producer id."""
        self.send(value, tp)
        (plan,) = self.drain()
        self.answer(plan)

    def drain(self) -> list[ProduceRequestPlan]:
        drained = self.sender.drain(self.now, self.leaders)
        self.stale = drained.stale_topics
        return drained.plans

    def answer(
        self,
        plan: ProduceRequestPlan,
        codes: Mapping[tuple[str, int], int] | int = 0,
        base_offset: int = 0,
    ) -> None:
        if isinstance(codes, int):
            codes = {tp: codes for tp in plan.batches}
        response = produce_response({tp: (code, base_offset) for tp, code in codes.items()})
        self.sender.on_response(plan, wire.produce_results(response), self.now)

    def advance(self, seconds: float) -> None:
        self.now = self.now + seconds


def sequences(plan: ProduceRequestPlan) -> dict[tuple[str, int], tuple[int, int, int]]:
    """(base_sequence, producer_epoch, record count) per partition, decoded from the wire."""
    request = wire.produce_request(plan, ProducerConfig())
    decoded = ProduceRequest.decode(request.encode(PRODUCE_VERSION), PRODUCE_VERSION)
    out = {}
    for topic in decoded.topic_data:
        for part in topic.partition_data:
            (batch,) = decode_batches(bytes(part.records))
            out[(topic.name, part.index)] = (
                batch.base_sequence,
                batch.producer_epoch,
                len(batch.records),
            )
    return out


def values(plan: ProduceRequestPlan, tp: tuple[str, int] = TP) -> list[bytes]:
    payload = plan.batches[tp].payload
    assert payload is not None
    return [r.value for b in decode_batches(payload) for r in b.records]
