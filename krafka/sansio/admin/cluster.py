"""The cluster: its brokers and controller (DescribeCluster, or Metadata on brokers without
it), and the log directories of brokers (DescribeLogDirs)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from krafka.errors import KrafkaError, UnsupportedVersionError
from krafka.protocol.error_codes import ErrorCode
from krafka.protocol.messages import (
    ApiKey,
    DescribeClusterRequest,
    DescribeClusterResponse,
    DescribeLogDirsRequest,
    DescribeLogDirsResponse,
    MetadataRequest,
    MetadataResponse,
)
from krafka.sansio.actions import Versioned
from krafka.sansio.admin.acls import AclOperation, authorized_operations
from krafka.sansio.admin.operation import Call, Handler
from krafka.sansio.admin.outcome import (
    NOTHING_MOVES,
    Done,
    ItemResult,
    Resend,
    error_from,
    for_code,
    for_failure,
)
from krafka.sansio.admin.routing import METADATA_MAX_VERSION, Target
from krafka.structs import TopicPartition

_CLUSTER_OPERATIONS_METADATA: Final = (8, 10)


@dataclass(frozen=True, slots=True)
class Node:
    """A broker: id, address and rack."""

    node_id: int
    host: str
    port: int
    rack: str | None = None

    def __str__(self) -> str:
        return f"{self.node_id} ({self.host}:{self.port})"


@dataclass(frozen=True, slots=True)
class ClusterDescription:
    cluster_id: str | None
    controller: Node | None
    nodes: tuple[Node, ...]
    authorized_operations: frozenset[AclOperation] | None = None


class DescribeCluster(Handler[str]):
    """DescribeCluster (KIP-700); a broker without it is asked for Metadata instead."""

    what = "describe cluster"

    def __init__(self, include_authorized_operations: bool) -> None:
        self.authorized = include_authorized_operations
        self.use_metadata = False

    def requests(self, target: Target, keys: Sequence[str]) -> list[Call[str]]:
        authorized = self.authorized
        if not self.use_metadata:
            request = DescribeClusterRequest(include_cluster_authorized_operations=authorized)
            return [Call(request, tuple(keys))]

        def build(version: int) -> MetadataRequest:
            low, high = _CLUSTER_OPERATIONS_METADATA
            return MetadataRequest(
                topics=[],
                allow_auto_topic_creation=version < 4,
                include_cluster_authorized_operations=authorized and low <= version <= high,
            )

        metadata = Versioned(ApiKey.METADATA, build)
        return [Call(metadata, tuple(keys), max_version=METADATA_MAX_VERSION)]

    def on_failure(self, call: Call[str], error: KrafkaError) -> Mapping[str, ItemResult]:
        if isinstance(error, UnsupportedVersionError) and not self.use_metadata:
            self.use_metadata = True
            return dict.fromkeys(call.keys, Resend())
        return dict.fromkeys(call.keys, for_failure(error))

    def on_response(
        self, call: Call[str], target: Target, response: Any
    ) -> Mapping[str, ItemResult]:
        if isinstance(response, MetadataResponse):
            nodes = {
                int(b.node_id): Node(int(b.node_id), str(b.host), int(b.port), b.rack)
                for b in response.brokers
            }
            bits = int(response.cluster_authorized_operations)
            description = _cluster(response.cluster_id, response.controller_id, nodes, bits)
            return dict.fromkeys(call.keys, Done(description))
        assert isinstance(response, DescribeClusterResponse)
        code = int(response.error_code)
        outcome = for_code(code, "describe cluster", response.error_message, moved=NOTHING_MOVES)
        if outcome is not None:
            return dict.fromkeys(call.keys, outcome)
        nodes = {
            int(b.broker_id): Node(int(b.broker_id), str(b.host), int(b.port), b.rack)
            for b in response.brokers
        }
        bits = int(response.cluster_authorized_operations)
        description = _cluster(response.cluster_id, response.controller_id, nodes, bits)
        return dict.fromkeys(call.keys, Done(description))


def _cluster(
    cluster_id: str | None, controller_id: int, nodes: Mapping[int, Node], bits: int
) -> ClusterDescription:
    return ClusterDescription(
        cluster_id=cluster_id,
        controller=nodes.get(int(controller_id)),
        nodes=tuple(nodes[n] for n in sorted(nodes)),
        authorized_operations=authorized_operations(bits),
    )


@dataclass(frozen=True, slots=True)
class ReplicaInfo:
    """One replica in a log directory: its size in bytes, how far it lags the log end (a
    future replica being moved here), and whether it is that future replica."""

    size: int
    offset_lag: int
    is_future: bool


@dataclass(frozen=True, slots=True)
class LogDirDescription:
    """A broker's log directory: its replicas, its error (an offline dir), and its capacity
    (None from brokers before Kafka 3.3)."""

    path: str
    error: KrafkaError | None
    replicas: Mapping[TopicPartition, ReplicaInfo]
    total_bytes: int | None = None
    usable_bytes: int | None = None


class DescribeLogDirs(Handler[int]):
    """Each broker (an item) describes all of its log directories."""

    what = "describe log dirs"

    def describe(self, key: int) -> str:
        return f"broker {key}"

    def requests(self, target: Target, keys: Sequence[int]) -> list[Call[int]]:
        return [Call(DescribeLogDirsRequest(topics=None), (k,)) for k in keys]

    def on_response(
        self, call: Call[int], target: Target, response: Any
    ) -> Mapping[int, ItemResult]:
        assert isinstance(response, DescribeLogDirsResponse)
        (broker,) = call.keys
        what = f"describe log dirs of broker {broker}"
        outcome = for_code(int(response.error_code), what, moved=NOTHING_MOVES)
        if outcome is not None:
            return {broker: outcome}
        dirs = {str(r.log_dir): _log_dir(r, broker) for r in response.results}
        return {broker: Done(dirs)}


def _log_dir(result: Any, broker: int) -> LogDirDescription:
    code = int(result.error_code)
    error = (
        None
        if code == ErrorCode.NONE
        else error_from(code, f"log dir {result.log_dir!r} of broker {broker}")
    )
    replicas = {
        TopicPartition(str(t.name), int(p.partition_index)): ReplicaInfo(
            int(p.partition_size), int(p.offset_lag), bool(p.is_future_key)
        )
        for t in result.topics
        for p in t.partitions
    }
    total, usable = int(result.total_bytes), int(result.usable_bytes)
    return LogDirDescription(
        path=str(result.log_dir),
        error=error,
        replicas=replicas,
        total_bytes=total if total >= 0 else None,
        usable_bytes=usable if usable >= 0 else None,
    )


__all__ = [
    "ClusterDescription",
    "DescribeCluster",
    "DescribeLogDirs",
    "LogDirDescription",
    "Node",
    "ReplicaInfo",
]
