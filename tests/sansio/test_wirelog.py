"""DEBUG lines of requests and answers (`krafka.wire`) and of machine transitions, from a
scripted conversation with a `ClientCore`."""

from __future__ import annotations

import logging
import re

import pytest

from krafka.protocol import ApiKey
from krafka.protocol.error_codes import ErrorCode
from krafka.protocol.messages import ListOffsetsRequest, ListOffsetsResponse
from krafka.sansio.actions import LeaderOf, SendRequest
from krafka.sansio.client import ClientConfig, ClientCore
from krafka.sansio.wirelog import error_summary
from krafka.testing.scripted_cluster import ScriptedCluster, metadata_response

B1, B2 = ("b1", 9092), ("b2", 9092)
_Topic = ListOffsetsResponse.ListOffsetsTopicResponse
_Partition = _Topic.ListOffsetsPartitionResponse


def _answer(*codes: int) -> ListOffsetsResponse:
    partitions = [_Partition(partition_index=i, error_code=c) for i, c in enumerate(codes)]
    return ListOffsetsResponse(topics=[_Topic(name="t", partitions=partitions)])


def test_errors_are_summarised_per_code_not_listed_per_partition() -> None:
    nl, unknown = ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    assert error_summary(_answer(0, 0)) == "ok"
    assert error_summary(_answer(nl, 0, nl, unknown)) == (
        "NOT_LEADER_OR_FOLLOWER x2, UNKNOWN_TOPIC_OR_PARTITION"
    )
    assert error_summary(None) == "no response expected"


def test_one_line_per_request_and_per_answer(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="krafka")
    cluster = ScriptedCluster(ClientCore(ClientConfig("b1:9092"), now=0.0))
    cluster.answer(cluster.take(ApiKey.METADATA), metadata_response({1: B1, 2: B2}, {"t": [2]}))
    part = ListOffsetsRequest.ListOffsetsTopic.ListOffsetsPartition(partition_index=0)
    body = ListOffsetsRequest(
        topics=[ListOffsetsRequest.ListOffsetsTopic(name="t", partitions=[part])]
    )
    cluster.core.send(SendRequest(LeaderOf("t", 0), body), cluster.now)
    asked = cluster.take(ApiKey.LIST_OFFSETS)
    cluster.advance(0.012)
    cluster.answer(asked, _answer(ErrorCode.NOT_LEADER_OR_FOLLOWER))
    wire = [r.getMessage() for r in caplog.records if r.name == "krafka.wire"]
    cid = asked.sent.correlation_id
    version = asked.sent.version
    assert f"send ListOffsets v{version} correlation_id={cid} to b2:9092 (node 2)" in wire
    assert (
        f"recv ListOffsets v{version} correlation_id={cid} from b2:9092 (node 2) in 12.0 ms: "
        "NOT_LEADER_OR_FOLLOWER"
    ) in wire
    assert any(re.fullmatch(r"send Metadata v\d+ correlation_id=\d+ to b1:9092 \(node -1\)", m)
               for m in wire)  # fmt: skip
    transitions = [r.getMessage() for r in caplog.records if r.name == "krafka.connection"]
    assert "broker connection: NEGOTIATING -> READY (NEGOTIATED)" in transitions
    metadata = [r.getMessage() for r in caplog.records if r.name == "krafka.metadata"]
    assert metadata[:2] == [
        "metadata: IDLE -> REFRESHING (round 1, 0 topics)",
        "metadata: REFRESHING -> IDLE (round 1 updated)",
    ]


def test_nothing_is_formatted_above_debug(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="krafka")
    cluster = ScriptedCluster(ClientCore(ClientConfig("b1:9092"), now=0.0))
    cluster.answer(cluster.take(ApiKey.METADATA), metadata_response({1: B1}, {"t": [1]}))
    assert not [r for r in caplog.records if r.levelno < logging.INFO]
