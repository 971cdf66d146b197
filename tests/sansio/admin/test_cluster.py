"""Cluster handlers: DescribeCluster (and its Metadata fallback) and DescribeLogDirs."""

from __future__ import annotations

import pytest
from _admin_scripted import answer_metadata, metadata, start, take

from krafka.errors import KafkaStorageError, UnsupportedVersionError
from krafka.protocol.error_codes import ErrorCode
from krafka.protocol.messages import (
    ApiKey,
    DescribeClusterRequest,
    DescribeClusterResponse,
    DescribeLogDirsRequest,
    DescribeLogDirsResponse,
)
from krafka.sansio.admin.acls import AclOperation
from krafka.sansio.admin.cluster import DescribeCluster, DescribeLogDirs, Node
from krafka.sansio.admin.routing import ToAnyBroker, ToBrokers
from krafka.sansio.admin.topics import CLUSTER
from krafka.structs import TopicPartition


def test_describe_cluster_reads_nodes_controller_and_operations() -> None:
    _, talk, op = start(DescribeCluster(True), ToAnyBroker(), [CLUSTER])
    sent, request = take(talk, DescribeClusterRequest)
    assert request.include_cluster_authorized_operations
    B = DescribeClusterResponse.DescribeClusterBroker
    talk.reply(
        sent,
        DescribeClusterResponse(
            cluster_id="c1",
            controller_id=2,
            brokers=[
                B(broker_id=2, host="h2", port=2, rack="r2"),
                B(broker_id=1, host="h1", port=1),
            ],
            cluster_authorized_operations=1 << AclOperation.ALTER,
        ),
    )
    cluster = talk.outcome(op)[CLUSTER]
    assert cluster.cluster_id == "c1"
    assert cluster.controller == Node(2, "h2", 2, "r2")
    assert [n.node_id for n in cluster.nodes] == [1, 2]
    assert cluster.authorized_operations == {AclOperation.ALTER}


def test_describe_cluster_without_the_api_asks_metadata() -> None:
    _, talk, op = start(DescribeCluster(False), ToAnyBroker(), [CLUSTER])
    sent, _ = take(talk, DescribeClusterRequest)
    talk.fail(sent, UnsupportedVersionError("DescribeCluster is not supported"))
    request = answer_metadata(talk, metadata(controller=3))
    assert request.topics == []
    cluster = talk.outcome(op)[CLUSTER]
    assert cluster.controller is not None and cluster.controller.node_id == 3
    assert len(cluster.nodes) == 3 and cluster.cluster_id == "scripted"
    assert cluster.authorized_operations is None


def test_describe_cluster_error_is_raised() -> None:
    _, talk, op = start(DescribeCluster(True), ToAnyBroker(), [CLUSTER])
    sent, _ = take(talk, DescribeClusterRequest)
    talk.reply(sent, DescribeClusterResponse(error_code=ErrorCode.CLUSTER_AUTHORIZATION_FAILED))
    assert type(talk.outcome(op)[CLUSTER]).__name__ == "ClusterAuthorizationFailedError"


@pytest.mark.parametrize("version", [1, 3, 4])
def test_log_dirs_are_described_per_broker(version: int) -> None:
    _, talk, op = start(
        DescribeLogDirs(), ToBrokers(lambda b: b), [2], versions={ApiKey.DESCRIBE_LOG_DIRS: version}
    )
    answer_metadata(talk, metadata())
    sent, request = take(talk, DescribeLogDirsRequest)
    assert sent.target.node_id == 2 and request.topics is None
    R = DescribeLogDirsResponse.DescribeLogDirsResult
    T = R.DescribeLogDirsTopic
    P = T.DescribeLogDirsPartition
    sizes = {"total_bytes": 1000, "usable_bytes": 400} if version >= 4 else {}
    talk.reply(
        sent,
        DescribeLogDirsResponse(
            results=[
                R(
                    log_dir="/d1",
                    topics=[
                        T(
                            name="t",
                            partitions=[P(partition_index=0, partition_size=77, offset_lag=0)],
                        )
                    ],
                    **sizes,
                ),
                R(log_dir="/d2", error_code=ErrorCode.KAFKA_STORAGE_ERROR),
            ]
        ),
    )
    dirs = talk.outcome(op)[2]
    d1, d2 = dirs["/d1"], dirs["/d2"]
    assert d1.error is None and d1.replicas[TopicPartition("t", 0)].size == 77
    assert (d1.total_bytes, d1.usable_bytes) == ((1000, 400) if version >= 4 else (None, None))
    assert isinstance(d2.error, KafkaStorageError)
