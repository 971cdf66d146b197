"""Producer requests and responses in protocol terms (`krafka.protocol.messages`).

The sender and transaction manager speak in plans and partition results; this module is the
only place that knows the generated message classes' shapes and version differences.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from krafka.protocol.messages import (
    AddOffsetsToTxnRequest,
    AddPartitionsToTxnRequest,
    EndTxnRequest,
    InitProducerIdRequest,
    ProduceRequest,
    TxnOffsetCommitRequest,
)
from krafka.sansio.producer.accumulator import TopicPartition
from krafka.sansio.producer.config import ProducerConfig
from krafka.sansio.producer.idempotence import ProducerIdentity
from krafka.sansio.producer.sender import PartitionResult, ProduceRequestPlan

#: AddPartitionsToTxn v4+ is broker-to-broker (KIP-890); clients use v3 at most.
ADD_PARTITIONS_MAX_VERSION = 3
#: InitProducerId v0-v2 cannot bump an epoch; Tansu answers them UNKNOWN_SERVER_ERROR.
INIT_PRODUCER_ID_MIN_VERSION = 3


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


def produce_results(response: Any) -> dict[TopicPartition, PartitionResult]:
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


def init_producer_id_request(
    config: ProducerConfig, current: ProducerIdentity | None
) -> InitProducerIdRequest:
    """InitProducerId: a fresh id, or (with `current`) an epoch bump of the same id (KIP-360)."""
    return InitProducerIdRequest(
        transactional_id=config.transactional_id,
        transaction_timeout_ms=int(config.transaction_timeout * 1000),
        producer_id=current.producer_id if current is not None else -1,
        producer_epoch=current.producer_epoch if current is not None else -1,
    )


def add_partitions_request(
    transactional_id: str, identity: ProducerIdentity, tps: Iterable[TopicPartition]
) -> AddPartitionsToTxnRequest:
    by_topic: dict[str, list[int]] = {}
    for topic, partition in tps:
        by_topic.setdefault(topic, []).append(partition)
    topic_cls = AddPartitionsToTxnRequest.AddPartitionsToTxnTopic
    return AddPartitionsToTxnRequest(
        v3_and_below_transactional_id=transactional_id,
        v3_and_below_producer_id=identity.producer_id,
        v3_and_below_producer_epoch=identity.producer_epoch,
        v3_and_below_topics=[topic_cls(name=t, partitions=ps) for t, ps in by_topic.items()],
    )


def add_partitions_errors(response: Any) -> dict[TopicPartition, int]:
    """Error codes per partition of an AddPartitionsToTxn (v0-v3) response (0 = added)."""
    out: dict[TopicPartition, int] = {}
    for topic in response.results_by_topic_v3_and_below:
        for part in topic.results_by_partition:
            out[(topic.name, part.partition_index)] = part.partition_error_code
    return out


def add_offsets_request(
    transactional_id: str, identity: ProducerIdentity, group_id: str
) -> AddOffsetsToTxnRequest:
    return AddOffsetsToTxnRequest(
        transactional_id=transactional_id,
        producer_id=identity.producer_id,
        producer_epoch=identity.producer_epoch,
        group_id=group_id,
    )


def txn_offset_commit_request(
    transactional_id: str,
    identity: ProducerIdentity,
    offsets: Mapping[TopicPartition, tuple[int, str | None]],
    group_id: str,
    generation_id: int = -1,
    member_id: str = "",
    group_instance_id: str | None = None,
) -> TxnOffsetCommitRequest:
    by_topic: dict[str, list[Any]] = {}
    part_cls = TxnOffsetCommitRequest.TxnOffsetCommitRequestTopic.TxnOffsetCommitRequestPartition
    for (topic, partition), (offset, metadata) in offsets.items():
        by_topic.setdefault(topic, []).append(
            part_cls(
                partition_index=partition, committed_offset=offset, committed_metadata=metadata
            )
        )
    topic_cls = TxnOffsetCommitRequest.TxnOffsetCommitRequestTopic
    return TxnOffsetCommitRequest(
        transactional_id=transactional_id,
        group_id=group_id,
        producer_id=identity.producer_id,
        producer_epoch=identity.producer_epoch,
        generation_id=generation_id,
        member_id=member_id,
        group_instance_id=group_instance_id,
        topics=[topic_cls(name=t, partitions=ps) for t, ps in by_topic.items()],
    )


def txn_offset_commit_errors(response: Any) -> dict[TopicPartition, int]:
    return {
        (topic.name, part.partition_index): part.error_code
        for topic in response.topics
        for part in topic.partitions
    }


def end_txn_request(
    transactional_id: str, identity: ProducerIdentity, committed: bool
) -> EndTxnRequest:
    return EndTxnRequest(
        transactional_id=transactional_id,
        producer_id=identity.producer_id,
        producer_epoch=identity.producer_epoch,
        committed=committed,
    )
