"""Produce requests and responses in protocol terms (`krafka.protocol.messages`).

The sender speaks in plans and partition results; this module is the only place that knows the
Produce message classes' shapes (`txn_wire` does the same for the transaction requests).
"""

from __future__ import annotations

from typing import Any

from krafka.protocol.messages import ProduceRequest, ProduceResponse
from krafka.sansio.producer.accumulator import TopicPartition
from krafka.sansio.producer.config import ProducerConfig
from krafka.sansio.producer.sender import PartitionResult, ProduceRequestPlan


def produce_request(plan: ProduceRequestPlan, config: ProducerConfig) -> ProduceRequest:
    """The Produce request carrying `plan`'s batches (one per partition)."""
    by_topic: dict[str, list[Any]] = {}
    part_cls = ProduceRequest.TopicProduceData.PartitionProduceData
    for (topic, partition), batch in plan.batches.items():
        by_topic.setdefault(topic, []).append(part_cls(index=partition, records=batch.payload))
    return ProduceRequest(
        transactional_id=config.transactional_id,
        acks=int(config.acks),
        timeout_ms=int(config.request_timeout * 1000),
        topic_data=[
            ProduceRequest.TopicProduceData(name=topic, partition_data=parts)
            for topic, parts in by_topic.items()
        ],
    )


def produce_results(response: ProduceResponse | None) -> dict[TopicPartition, PartitionResult]:
    """Per-partition outcomes of a Produce response (empty for acks=0's None)."""
    if response is None:
        return {}
    out: dict[TopicPartition, PartitionResult] = {}
    for topic in response.responses:
        for part in topic.partition_responses:
            out[(topic.name, part.index)] = PartitionResult(
                error_code=part.error_code,
                base_offset=part.base_offset,
                log_append_time=part.log_append_time_ms,
                error_message=part.error_message,
            )
    return out
