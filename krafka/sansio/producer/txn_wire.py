"""Transaction coordinator requests and responses in protocol terms.

The transaction machine speaks in steps, partitions and offsets; this module alone knows the
shapes of InitProducerId, AddPartitionsToTxn, AddOffsetsToTxn, TxnOffsetCommit and EndTxn.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

from krafka.protocol.messages import (
    AddOffsetsToTxnRequest,
    AddPartitionsToTxnRequest,
    AddPartitionsToTxnResponse,
    EndTxnRequest,
    InitProducerIdRequest,
    TxnOffsetCommitRequest,
    TxnOffsetCommitResponse,
)
from krafka.sansio.producer.config import ProducerConfig
from krafka.sansio.producer.idempotence import ProducerIdentity
from krafka.structs import ConsumerGroupMetadata, OffsetAndMetadata, TopicPartition

#: AddPartitionsToTxn v4+ is broker-to-broker (KIP-890); clients use v3 at most.
ADD_PARTITIONS_MAX_VERSION: Final = 3
#: InitProducerId v0-v2 cannot bump an epoch; Tansu answers them UNKNOWN_SERVER_ERROR.
INIT_PRODUCER_ID_MIN_VERSION: Final = 3


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


def add_partitions_errors(response: AddPartitionsToTxnResponse) -> dict[TopicPartition, int]:
    """Error codes per partition of an AddPartitionsToTxn (v0-v3) response (0 = added)."""
    out: dict[TopicPartition, int] = {}
    for topic in response.results_by_topic_v3_and_below:
        for part in topic.results_by_partition:
            out[TopicPartition(topic.name, part.partition_index)] = part.partition_error_code
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
    offsets: Mapping[TopicPartition, OffsetAndMetadata],
    group: ConsumerGroupMetadata,
) -> TxnOffsetCommitRequest:
    by_topic: dict[str, list[Any]] = {}
    part_cls = TxnOffsetCommitRequest.TxnOffsetCommitRequestTopic.TxnOffsetCommitRequestPartition
    for (topic, partition), position in offsets.items():
        by_topic.setdefault(topic, []).append(
            part_cls(
                partition_index=partition,
                committed_offset=position.offset,
                committed_leader_epoch=-1
                if position.leader_epoch is None
                else position.leader_epoch,
                committed_metadata=position.metadata,
            )
        )
    topic_cls = TxnOffsetCommitRequest.TxnOffsetCommitRequestTopic
    return TxnOffsetCommitRequest(
        transactional_id=transactional_id,
        group_id=group.group_id,
        producer_id=identity.producer_id,
        producer_epoch=identity.producer_epoch,
        generation_id=group.generation_id,
        member_id=group.member_id,
        group_instance_id=group.group_instance_id,
        topics=[topic_cls(name=t, partitions=ps) for t, ps in by_topic.items()],
    )


def txn_offset_commit_errors(response: TxnOffsetCommitResponse) -> dict[TopicPartition, int]:
    return {
        TopicPartition(topic.name, part.partition_index): part.error_code
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
