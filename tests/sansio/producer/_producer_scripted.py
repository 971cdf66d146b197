"""Helpers driving the sans-IO producer with scripted broker responses (protocol objects)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from krafka.codec import Record, decode_batches
from krafka.protocol.messages import ProduceRequest, ProduceResponse
from krafka.sansio.producer import (
    ProducerConfig,
    ProduceRequestPlan,
    RecordAccumulator,
    RecordHandle,
    Sender,
    wire,
)
from krafka.sansio.producer.idempotence import IdempotenceState
from krafka.sansio.producer.transaction import TransactionManager

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


class Harness:
    """An accumulator + sender with a fake single-broker cluster and a controllable clock."""

    def __init__(
        self,
        config: ProducerConfig | None = None,
        *,
        identity: tuple[int, int] | None = (1000, 0),
        transactional: bool = False,
    ) -> None:
        self.config = config or ProducerConfig(linger=0.0, retry_backoff=0.01)
        self.accumulator = RecordAccumulator(self.config)
        self.idempotence = IdempotenceState() if self.config.idempotent else None
        self.txn = (
            TransactionManager(self.config.transactional_id or "tx", 60.0)
            if transactional
            else None
        )
        self.sender = Sender(
            self.config, self.accumulator, idempotence=self.idempotence,
            transaction=self.txn, rand=lambda: 0.5,
        )  # fmt: skip
        if self.idempotence is not None and identity is not None:
            self.sender.producer_id_received(*identity)
        self.leaders: dict[tuple[str, int], int | None] = {}
        self.now = 0.0

    def send(
        self, value: bytes, tp: tuple[str, int] = TP, key: bytes | None = None
    ) -> RecordHandle:
        record = Record(0, 1_700_000_000_000, key, value, ())
        _, handle = self.accumulator.append(tp[0], tp[1], record, 21 + len(value), self.now, 1)
        return handle

    def drain(self) -> list[ProduceRequestPlan]:
        return self.sender.drain(self.now, lambda t, p: self.leaders.get((t, p), 1))

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
        self.now += seconds


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
