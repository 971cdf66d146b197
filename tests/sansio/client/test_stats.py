"""Per-connection metrics of `ClientCore` (`core.stats`), through scripted conversations."""

from __future__ import annotations

import pytest
from _requester import Requester

from krafka.protocol import ApiKey
from krafka.protocol.error_codes import ErrorCode
from krafka.protocol.messages import (
    FetchRequest,
    FetchResponse,
    ListOffsetsRequest,
    ListOffsetsResponse,
    ProduceRequest,
    ProduceResponse,
    SaslAuthenticateResponse,
    SaslHandshakeResponse,
)
from krafka.sansio.actions import Broker, LeaderOf, SendRequest
from krafka.sansio.client import ClientConfig, ClientCore
from krafka.sansio.client.stats import UNKNOWN_NODE
from krafka.sansio.sasl import PlainMechanism
from krafka.testing.scripted_cluster import ScriptedCluster, metadata_response

B1, B2, B3 = ("b1", 9092), ("b2", 9092), ("b3", 9092)
BROKERS = {1: B1, 2: B2, 3: B3}


def started(config: ClientConfig | None = None) -> tuple[ScriptedCluster, Requester]:
    cluster = ScriptedCluster(ClientCore(config or ClientConfig("b1:9092"), now=0.0))
    requester = Requester()
    cluster.core.add(requester)
    cluster.answer(cluster.take(ApiKey.METADATA, B1), metadata_response(BROKERS, {"t": [1, 2]}))
    return cluster, requester


def list_offsets(partition: int) -> SendRequest[ListOffsetsResponse]:
    part = ListOffsetsRequest.ListOffsetsTopic.ListOffsetsPartition(partition_index=partition)
    topic = ListOffsetsRequest.ListOffsetsTopic(name="t", partitions=[part])
    return SendRequest(LeaderOf("t", partition), ListOffsetsRequest(topics=[topic]))


def test_requests_answers_latency_and_bytes_are_counted_per_client_node_and_api() -> None:
    cluster, requester = started()
    for partition in (0, 0, 1):
        requester.ask(list_offsets(partition))
    asked = [cluster.take(ApiKey.LIST_OFFSETS) for _ in range(3)]
    cluster.advance(0.25)
    for one in asked:
        cluster.answer(one, ListOffsetsResponse(topics=[]))
    metrics = cluster.core.stats.snapshot(cluster.now)
    api = metrics.apis["ListOffsets"]
    assert api["request-total"] == 3 and api["response-total"] == 3
    assert api["request-latency-avg"] == pytest.approx(0.25)
    assert api["request-latency-max"] == pytest.approx(0.25)
    assert api["request-size-avg"] > 0
    assert metrics.nodes[1]["request-total"] == 2
    assert metrics.nodes[2]["request-total"] == 1
    assert metrics.node_apis[1, "ListOffsets"]["response-total"] == 2
    assert metrics.apis["Metadata"]["request-total"] == 1
    assert metrics.node_apis[UNKNOWN_NODE, "Metadata"]["request-total"] == 1
    client = metrics.client
    assert client["request-total"] == 4 and client["response-total"] == 4
    assert client["request-rate"] > 0 and client["response-rate"] > 0
    assert client["outgoing-byte-total"] > api["request-size-avg"] * 3
    assert client["incoming-byte-total"] > 0 and client["incoming-byte-rate"] > 0
    assert metrics.nodes[2]["outgoing-byte-total"] > 0
    assert client["connection-count"] == client["connection-creation-total"] == 3
    assert client["connection-creation-rate"] > 0


def test_closed_connections_and_unanswered_requests_are_counted() -> None:
    cluster, requester = started()
    requester.ask(list_offsets(1))
    asked = cluster.take(ApiKey.LIST_OFFSETS, B2)
    cluster.drop(asked.conn_id)
    client = cluster.core.stats.snapshot(cluster.now).client
    assert client["connection-close-total"] == 1
    assert client["connection-count"] == client["connection-creation-total"] - 1
    assert client["request-failed-total"] >= 1
    assert client["connection-close-rate"] > 0


def test_produce_and_fetch_throttle_times_are_counted_in_seconds() -> None:
    cluster, requester = started()
    requester.ask(SendRequest(Broker(1), ProduceRequest(acks=-1, timeout_ms=1000)))
    requester.ask(SendRequest(Broker(2), FetchRequest(max_wait_ms=0)))
    produce = cluster.take(ApiKey.PRODUCE)
    fetch = cluster.take(ApiKey.FETCH)
    cluster.answer(produce, ProduceResponse(throttle_time_ms=400))
    cluster.answer(fetch, FetchResponse(throttle_time_ms=100, error_code=ErrorCode.NONE))
    client = cluster.core.stats.snapshot(cluster.now).client
    assert client["produce-throttle-time-max"] == pytest.approx(0.4)
    assert client["produce-throttle-time-avg"] == pytest.approx(0.4)
    assert client["fetch-throttle-time-max"] == pytest.approx(0.1)


def _login(cluster: ScriptedCluster, lifetime_ms: int, code: int = ErrorCode.NONE) -> None:
    cluster.answer(cluster.take(ApiKey.SASL_HANDSHAKE), SaslHandshakeResponse(mechanisms=["PLAIN"]))
    done = SaslAuthenticateResponse(error_code=code, session_lifetime_ms=lifetime_ms)
    cluster.answer(cluster.take(ApiKey.SASL_AUTHENTICATE), done)


@pytest.mark.parametrize("renewed", [True, False])
def test_authentications_and_reauthentications_are_counted(renewed: bool) -> None:
    config = ClientConfig("b1:9092", sasl=lambda: PlainMechanism("alice", "hunter2"))
    cluster = ScriptedCluster(ClientCore(config, now=0.0))
    _login(cluster, lifetime_ms=10_000)
    cluster.answer(cluster.take(ApiKey.METADATA, B1), metadata_response(BROKERS, {}))
    cluster.advance(9.5)
    _login(cluster, 10_000, ErrorCode.NONE if renewed else ErrorCode.SASL_AUTHENTICATION_FAILED)
    client = cluster.core.stats.snapshot(cluster.now).client
    assert client["successful-authentication-total"] == 1
    assert client["successful-reauthentication-total"] == (1 if renewed else 0)
    assert client["failed-reauthentication-total"] == (0 if renewed else 1)
    assert client["failed-authentication-total"] == 0


def test_a_refused_login_is_a_failed_authentication() -> None:
    config = ClientConfig("b1:9092", sasl=lambda: PlainMechanism("alice", "wrong"))
    cluster = ScriptedCluster(ClientCore(config, now=0.0))
    _login(cluster, 0, ErrorCode.SASL_AUTHENTICATION_FAILED)
    client = cluster.core.stats.snapshot(cluster.now).client
    assert client["failed-authentication-total"] == 1
    assert client["successful-authentication-total"] == 0


def test_a_snapshot_without_now_is_as_of_the_last_time_the_core_saw() -> None:
    cluster, _ = started()
    assert cluster.core.stats.snapshot().client["request-total"] == 1
    assert cluster.core.stats.snapshot().as_dict()["connection-metrics"]["request-total"] == 1
