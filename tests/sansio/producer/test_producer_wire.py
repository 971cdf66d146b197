"""Producer requests encode with the generated protocol classes and decode back unchanged."""

from __future__ import annotations

from _producer_scripted import Harness

from krafka.codec import decode_batches
from krafka.protocol.error_codes import ErrorCode
from krafka.protocol.messages import (
    AddPartitionsToTxnRequest,
    AddPartitionsToTxnResponse,
    EndTxnRequest,
    InitProducerIdRequest,
    ProduceRequest,
    TxnOffsetCommitRequest,
)
from krafka.sansio.producer import ProducerConfig, txn_wire
from krafka.sansio.producer.config import Acks
from krafka.sansio.producer.idempotence import ProducerIdentity
from krafka.structs import ConsumerGroupMetadata, OffsetAndMetadata, TopicPartition

ID = ProducerIdentity(5, 2)


def test_produce_request_round_trips_at_every_record_batch_version() -> None:
    config = ProducerConfig(acks=Acks.ALL, linger=0.0, transactional_id="tx")
    h = Harness(config, transactional=True)
    h.cluster.partition_counts.update({"a": 2, "b": 1})
    h.begin_with(("a", 1), ("b", 0))
    h.engine.append("a", 1, 1, b"k", b"v", [("h", b"1")], 0.0, 1)
    h.engine.append("b", 0, 2, None, None, None, 0.0, 1)
    (plan,) = h.drain()
    request = plan.sent.request
    assert isinstance(request, ProduceRequest)
    for version in range(3, 12):
        back = ProduceRequest.decode(request.encode(version), version)
        assert back.acks == -1 and back.transactional_id == "tx"
        got = {
            (t.name, p.index): decode_batches(bytes(p.records))[0].records
            for t in back.topic_data
            for p in t.partition_data
        }
        assert got[("a", 1)][0].key == b"k" and got[("a", 1)][0].headers == [("h", b"1")]
        assert got[("b", 0)][0].value is None


def test_init_producer_id_asks_for_a_bump_with_the_current_identity() -> None:
    config = ProducerConfig(transactional_id="tx", transaction_timeout=30.0)
    fresh = txn_wire.init_producer_id_request(config, None)
    bump = txn_wire.init_producer_id_request(config, ID)
    assert (fresh.producer_id, fresh.producer_epoch) == (-1, -1)
    assert (bump.producer_id, bump.producer_epoch) == (5, 2)
    assert bump.transaction_timeout_ms == 30_000
    assert InitProducerIdRequest.decode(bump.encode(3), 3) == bump


def test_add_partitions_uses_the_client_versions() -> None:
    request = txn_wire.add_partitions_request("tx", ID, [("a", 0), ("a", 2), ("b", 1)])
    back = AddPartitionsToTxnRequest.decode(request.encode(3), 3)
    assert {t.name: t.partitions for t in back.v3_and_below_topics} == {"a": [0, 2], "b": [1]}
    topic = AddPartitionsToTxnResponse.AddPartitionsToTxnTopicResult
    part = topic.AddPartitionsToTxnPartitionResult
    response = AddPartitionsToTxnResponse(
        results_by_topic_v3_and_below=[
            topic(
                name="a",
                results_by_partition=[
                    part(partition_index=0, partition_error_code=ErrorCode.CONCURRENT_TRANSACTIONS)
                ],
            )
        ]
    )
    assert txn_wire.add_partitions_errors(response) == {("a", 0): ErrorCode.CONCURRENT_TRANSACTIONS}


def test_txn_offset_commit_and_end_txn() -> None:
    offsets = {TopicPartition("t", 3): OffsetAndMetadata(42, "m")}
    group = ConsumerGroupMetadata("g", 7, "member")
    request = txn_wire.txn_offset_commit_request("tx", ID, offsets, group)
    back = TxnOffsetCommitRequest.decode(request.encode(3), 3)
    assert back.generation_id == 7 and back.member_id == "member"
    (topic,) = back.topics
    assert topic.partitions[0].committed_offset == 42
    end = txn_wire.end_txn_request("tx", ID, committed=True)
    assert EndTxnRequest.decode(end.encode(3), 3).committed is True
