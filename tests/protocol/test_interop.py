"""Differential checks against aiokafka's independent, hand-written protocol classes."""

from __future__ import annotations

import pytest

from krafka.protocol.messages import (
    FetchResponse,
    JoinGroupRequest,
    MetadataResponse,
    ProduceRequest,
)

aio_fetch = pytest.importorskip("aiokafka.protocol.fetch")
aio_group = pytest.importorskip("aiokafka.protocol.group")
aio_meta = pytest.importorskip("aiokafka.protocol.metadata")
aio_produce = pytest.importorskip("aiokafka.protocol.produce")


def test_metadata_response_v5_from_aiokafka() -> None:
    theirs = aio_meta.MetadataResponse_v5(
        7,
        [(1, "host-a", 9092, "rack1"), (2, "host-b", 9093, None)],
        "cluster",
        1,
        [(0, "orders", False, [(0, 3, 1, [1, 2], [1], []), (5, 4, -1, [], [], [2])])],
    )
    wire = theirs.encode()
    ours = MetadataResponse.decode(wire, 5)
    assert ours.brokers[1].rack is None and ours.cluster_id == "cluster"
    part = ours.topics[0].partitions[1]
    assert (part.error_code, part.partition_index, part.leader_id) == (5, 4, -1)
    assert part.offline_replicas == [2]
    assert ours.encode(5) == wire


def test_fetch_response_v11_both_ways() -> None:
    theirs = aio_fetch.FetchResponse_v11(
        0, 0, 0, [("t", [(0, 0, 100, 90, 0, [(7, 50)], -1, b"batch-bytes")])]
    )
    wire = theirs.encode()
    ours = FetchResponse.decode(wire, 11)
    part = ours.responses[0].partitions[0]
    assert part.aborted_transactions is not None
    assert part.aborted_transactions[0].producer_id == 7
    assert bytes(part.records or b"") == b"batch-bytes"
    assert ours.encode(11) == wire
    assert aio_fetch.FetchResponse_v11.decode(ours.encode(11)).encode() == wire


def test_produce_and_join_group_requests_match_aiokafka_bytes() -> None:
    topics = [("t", [(0, b"records-0"), (1, b"records-1")])]
    theirs = aio_produce.ProduceRequest_v7("tx", -1, 1000, topics)
    ours = ProduceRequest(
        transactional_id="tx",
        acks=-1,
        timeout_ms=1000,
        topic_data=[
            ProduceRequest.TopicProduceData(
                name="t",
                partition_data=[
                    ProduceRequest.TopicProduceData.PartitionProduceData(index=i, records=r)
                    for i, r in topics[0][1]
                ],
            )
        ],
    )
    assert ours.encode(7) == theirs.encode()
    join = aio_group.JoinGroupRequest_v2("g", 6000, 30000, "", "consumer", [("range", b"m")])
    mine = JoinGroupRequest(
        group_id="g",
        session_timeout_ms=6000,
        rebalance_timeout_ms=30000,
        member_id="",
        protocol_type="consumer",
        protocols=[JoinGroupRequest.JoinGroupRequestProtocol(name="range", metadata=b"m")],
    )
    assert mine.encode(2) == join.encode()
