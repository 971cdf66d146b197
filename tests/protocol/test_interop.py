"""Differential checks against aiokafka's independent, hand-written protocol classes."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from krafka.protocol import REQUESTS, RESPONSES
from krafka.protocol.messages import (
    ApiVersionsResponse,
    FetchResponse,
    JoinGroupRequest,
    MetadataResponse,
    ProduceRequest,
)
from krafka.protocol.schema import ApiMessage

from .strategies import struct_strategy

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


def _kafka_python_classes() -> dict[str, Any]:
    api_message = pytest.importorskip("kafka.protocol.api_message")
    for mod in ("admin", "consumer", "metadata", "producer"):
        pytest.importorskip(f"kafka.protocol.{mod}")

    def walk(c: Any) -> Iterator[Any]:
        for s in c.__subclasses__():
            yield s
            yield from walk(s)

    return {c.__name__: c for c in walk(api_message.ApiMessage) if "_v" not in c.__name__}


KRAFKA_CLASSES = sorted([*REQUESTS.values(), *RESPONSES.values()], key=lambda c: c.__name__)


@pytest.mark.parametrize("cls", KRAFKA_CLASSES, ids=lambda c: c.__name__)
@settings(max_examples=3, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_kafka_python_reencodes_our_bytes(cls: type[ApiMessage], data: st.DataObject) -> None:
    """kafka-python 3 builds its codecs from (its own copy of) the same JSON schemas, with an
    independent implementation: our bytes, decoded and re-encoded there, must come back equal."""
    other = _kafka_python_classes().get(cls.__name__)
    if other is None:
        pytest.skip("kafka-python does not implement this API")
    for version in range(cls.MIN_VERSION, min(cls.MAX_VERSION, other.max_version) + 1):
        obj = data.draw(struct_strategy(cls, version, tags=False), label=f"v{version}")
        if cls is ApiVersionsResponse:
            obj.error_code = 0  # kafka-python reads any error response as v0
        wire = obj.encode(version)
        theirs = other.decode(wire, version=version)
        for attr in ("_header", "_min_version", "_max_version"):
            if not hasattr(theirs, attr):
                setattr(theirs, attr, None)
        assert theirs.encode(version=version) == wire, f"{cls.__name__} v{version}"
