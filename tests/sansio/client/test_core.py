"""`ClientCore` driven through scripted conversations: routing, lanes, coordinators, versions,
connection loss, without a broker."""

from __future__ import annotations

from typing import Any

import pytest
from _requester import Requester

from krafka.errors import (
    AuthenticationError,
    KafkaConnectionError,
    KafkaTimeoutError,
    KrafkaError,
    UnsupportedVersionError,
)
from krafka.protocol import ApiKey
from krafka.protocol.error_codes import ErrorCode
from krafka.protocol.messages import (
    DescribeClusterResponse,
    ListOffsetsRequest,
    ListOffsetsResponse,
    OffsetFetchRequest,
    OffsetFetchResponse,
    ProduceRequest,
    SaslAuthenticateResponse,
    SaslHandshakeResponse,
)
from krafka.sansio.actions import (
    AnyBroker,
    Broker,
    Completed,
    Coordinator,
    CoordinatorMoved,
    LeaderOf,
    SendRequest,
)
from krafka.sansio.admin.cluster import DescribeCluster
from krafka.sansio.admin.operation import AdminOperation
from krafka.sansio.admin.routing import ToAnyBroker
from krafka.sansio.admin.topics import CLUSTER
from krafka.sansio.client import (
    Authenticated,
    ClientConfig,
    ClientCore,
    MachineEvent,
    MetadataFailed,
    MetadataUpdated,
    Rebootstrapped,
)
from krafka.sansio.producer import ProducerConfig, ProducerEngine
from krafka.sansio.sasl import PlainMechanism
from krafka.testing.scripted_cluster import (
    ALL_VERSIONS,
    Asked,
    ScriptedCluster,
    coordinator_response,
    metadata_response,
)

B1, B2, B3 = ("b1", 9092), ("b2", 9092), ("b3", 9092)
BROKERS = {1: B1, 2: B2, 3: B3}


def started(**config: Any) -> tuple[ScriptedCluster, Requester]:
    """A core that bootstrapped from b1 and knows topic t (leaders 1, 2)."""
    cluster = ScriptedCluster(ClientCore(ClientConfig("b1:9092", **config), now=0.0))
    requester = Requester()
    cluster.core.add(requester)
    meta = cluster.take(ApiKey.METADATA, B1)
    cluster.answer(meta, metadata_response(BROKERS, {"t": [1, 2]}))
    return cluster, requester


def list_offsets(partition: int = 0, stamp: int = -1) -> ListOffsetsRequest:
    part = ListOffsetsRequest.ListOffsetsTopic.ListOffsetsPartition(
        partition_index=partition, timestamp=stamp
    )
    return ListOffsetsRequest(
        topics=[ListOffsetsRequest.ListOffsetsTopic(name="t", partitions=[part])]
    )


def offset_fetch(group: str = "g") -> SendRequest[OffsetFetchResponse]:
    return SendRequest(Coordinator(group), OffsetFetchRequest(group_id=group), max_version=7)


def test_the_bootstrap_refresh_goes_to_the_bootstrap_server_and_is_announced() -> None:
    cluster = ScriptedCluster(ClientCore(ClientConfig("b1:9092,b2:9092"), now=0.0))
    meta = cluster.take(ApiKey.METADATA)
    assert meta.address == B1
    events = cluster.answer(meta, metadata_response(BROKERS, {}))
    assert [e for e in events if isinstance(e, MetadataUpdated)] == [MetadataUpdated(1)]
    assert cluster.core.cluster.broker(3) is not None


def test_a_leader_target_waits_for_metadata_then_goes_to_the_leader() -> None:
    cluster, requester = started()
    sent = SendRequest(LeaderOf("u", 1), list_offsets(1))
    requester.ask(sent)
    meta = cluster.take(ApiKey.METADATA)
    assert "u" in [t.name for t in meta.body.topics]
    assert cluster.pending(ApiKey.LIST_OFFSETS) == []
    cluster.answer(meta, metadata_response(BROKERS, {"t": [1, 2], "u": [3, 2]}))
    asked = cluster.take(ApiKey.LIST_OFFSETS)
    assert asked.address == B2
    cluster.answer(asked, ListOffsetsResponse(topics=[]))
    assert requester.outcome(sent) == ListOffsetsResponse(topics=[])


def test_a_leader_lookup_does_not_note_use_but_note_use_keeps_a_topic() -> None:
    cluster, _ = started()
    view = cluster.core.cluster
    assert view.leader("t", 1) == 2
    assert view.leader("v", 0) is None
    assert "v" not in view.interest
    cluster.core.note_use("v", cluster.now)
    assert "v" in view.interest
    assert "v" in [t.name for t in cluster.take(ApiKey.METADATA).body.topics]


def test_coordinator_requests_take_their_own_connection_not_the_data_one() -> None:
    cluster, requester = started()
    fetch = SendRequest(LeaderOf("t", 0), list_offsets())
    requester.ask(fetch)
    data = cluster.take(ApiKey.LIST_OFFSETS)  # left unanswered, as a long poll
    commit = offset_fetch()
    requester.ask(commit)
    find = cluster.take(ApiKey.FIND_COORDINATOR)
    assert find.conn_id != data.conn_id
    cluster.answer(find, coordinator_response(find, 1, B1))
    asked = cluster.take(ApiKey.OFFSET_FETCH, B1)
    assert asked.conn_id not in (data.conn_id, find.conn_id)
    cluster.answer(asked, OffsetFetchResponse(topics=[]))
    assert requester.outcome(commit) == OffsetFetchResponse(topics=[])
    assert fetch not in requester.outcomes


def test_a_coordinator_is_cached_and_followed_when_it_moves() -> None:
    cluster, requester = started()
    first = offset_fetch()
    requester.ask(first)
    find = cluster.take(ApiKey.FIND_COORDINATOR)
    cluster.answer(find, coordinator_response(find, 1, B1))
    asked = cluster.take(ApiKey.OFFSET_FETCH, B1)
    cluster.answer(asked, OffsetFetchResponse(error_code=ErrorCode.NOT_COORDINATOR))
    assert first not in requester.outcomes  # resent, not answered
    find = cluster.take(ApiKey.FIND_COORDINATOR)
    cluster.answer(find, coordinator_response(find, 3, B3))
    asked = cluster.take(ApiKey.OFFSET_FETCH, B3)
    cluster.answer(asked, OffsetFetchResponse(topics=[]))
    assert requester.outcome(first) == OffsetFetchResponse(topics=[])
    second = offset_fetch()
    requester.ask(second)
    assert cluster.pending(ApiKey.FIND_COORDINATOR) == []
    cluster.take(ApiKey.OFFSET_FETCH, B3)


def test_coordinator_moved_from_a_machine_looks_the_coordinator_up_again() -> None:
    cluster, requester = started()
    requester.ask(offset_fetch())
    find = cluster.take(ApiKey.FIND_COORDINATOR)
    cluster.answer(find, coordinator_response(find, 1, B1))
    cluster.answer(cluster.take(ApiKey.OFFSET_FETCH, B1), OffsetFetchResponse(topics=[]))
    requester.ask(CoordinatorMoved("g"), offset_fetch())
    find = cluster.take(ApiKey.FIND_COORDINATOR)
    cluster.answer(find, coordinator_response(find, 2, B2))
    cluster.take(ApiKey.OFFSET_FETCH, B2)


def test_a_loading_coordinator_gets_the_request_again_after_backoff() -> None:
    cluster, requester = started()
    sent = offset_fetch()
    requester.ask(sent)
    find = cluster.take(ApiKey.FIND_COORDINATOR)
    cluster.answer(find, coordinator_response(find, 1, B1))
    loading = OffsetFetchResponse(error_code=ErrorCode.COORDINATOR_LOAD_IN_PROGRESS)
    cluster.answer(cluster.take(ApiKey.OFFSET_FETCH, B1), loading)
    assert cluster.pending(ApiKey.OFFSET_FETCH) == []
    deadline = cluster.core.next_deadline()
    assert deadline is not None and deadline > cluster.now
    cluster.advance_to_deadline()
    cluster.answer(cluster.take(ApiKey.OFFSET_FETCH, B1), OffsetFetchResponse(topics=[]))
    assert requester.outcome(sent) == OffsetFetchResponse(topics=[])


def test_a_read_only_request_is_resent_when_its_connection_drops_a_produce_is_not() -> None:
    cluster, requester = started()
    offsets = SendRequest(LeaderOf("t", 0), list_offsets())
    requester.ask(offsets)
    asked = cluster.take(ApiKey.LIST_OFFSETS, B1)
    cluster.drop(asked.conn_id)
    again = cluster.take(ApiKey.LIST_OFFSETS, B1)
    assert again.conn_id != asked.conn_id
    cluster.answer(again, ListOffsetsResponse(topics=[]))
    assert requester.outcome(offsets) == ListOffsetsResponse(topics=[])


def test_a_connection_the_peer_closed_is_handed_back_to_close() -> None:
    """An embedder closes sockets only on `CloseConnection`, also after reading b"" (the
    selectors example relies on it: a socket left open at EOF would wake its loop forever)."""
    cluster, requester = started()
    requester.ask(SendRequest(LeaderOf("t", 0), list_offsets()))
    asked = cluster.take(ApiKey.LIST_OFFSETS, B1)
    cluster.drop(asked.conn_id)
    assert asked.conn_id in cluster.closed


def test_a_dropped_coordinator_connection_reroutes_to_the_coordinator_found_next() -> None:
    cluster, requester = started()
    sent = offset_fetch()
    requester.ask(sent)
    find = cluster.take(ApiKey.FIND_COORDINATOR)
    cluster.answer(find, coordinator_response(find, 1, B1))
    cluster.drop(cluster.take(ApiKey.OFFSET_FETCH, B1).conn_id)
    find = cluster.take(ApiKey.FIND_COORDINATOR)
    cluster.answer(find, coordinator_response(find, 2, B2))
    cluster.answer(cluster.take(ApiKey.OFFSET_FETCH, B2), OffsetFetchResponse(topics=[]))
    assert requester.outcome(sent) == OffsetFetchResponse(topics=[])


def test_versions_are_negotiated_within_the_requests_bounds() -> None:
    versions = dict(ALL_VERSIONS)
    versions[ApiKey.LIST_OFFSETS] = (0, 5)
    cluster = ScriptedCluster(ClientCore(ClientConfig("b1:9092"), now=0.0), versions=versions)
    requester = Requester()
    cluster.core.add(requester)
    cluster.answer(cluster.take(ApiKey.METADATA), metadata_response(BROKERS, {"t": [1]}))
    capped = SendRequest(AnyBroker(), list_offsets(), max_version=3)
    too_new = SendRequest(AnyBroker(), list_offsets(), min_version=6)
    top = SendRequest(Broker(1), list_offsets())
    requester.ask(capped, too_new, top)
    asked = [cluster.take(ApiKey.LIST_OFFSETS), cluster.take(ApiKey.LIST_OFFSETS)]
    assert sorted(a.sent.version for a in asked) == [3, 5]
    assert isinstance(requester.outcome(too_new), UnsupportedVersionError)


def test_an_api_the_broker_lacks_fails_locally_and_sends_nothing() -> None:
    versions = {k: v for k, v in ALL_VERSIONS.items() if k != ApiKey.LIST_OFFSETS}
    cluster = ScriptedCluster(ClientCore(ClientConfig("b1:9092"), now=0.0), versions=versions)
    requester = Requester()
    cluster.core.add(requester)
    cluster.answer(cluster.take(ApiKey.METADATA), metadata_response(BROKERS, {"t": [1]}))
    sent = SendRequest(AnyBroker(), list_offsets())
    requester.ask(sent)
    assert cluster.pending(ApiKey.LIST_OFFSETS) == []
    assert isinstance(requester.outcome(sent), UnsupportedVersionError)


def test_an_unreachable_broker_fails_the_request_after_the_connect_timeout() -> None:
    cluster, requester = started(connect_timeout=1.0)
    cluster.refuse[B2] = KafkaConnectionError("b2:9092: Connection refused")
    sent = SendRequest(Broker(2), list_offsets())
    requester.ask(sent)
    cluster.step()
    for _ in range(50):
        if sent in requester.outcomes:
            break
        cluster.advance_to_deadline()
    assert isinstance(requester.outcome(sent), KafkaConnectionError)
    assert cluster.now <= 1.0 + 1e-6


def test_the_deadline_is_never_in_the_past_once_stepped() -> None:
    cluster, requester = started()
    requester.ask(SendRequest(LeaderOf("t", 0), list_offsets()))
    cluster.step()
    deadline = cluster.core.next_deadline()
    assert deadline is None or deadline > cluster.now


@pytest.mark.parametrize("lane_api", [ApiKey.METADATA])
def test_metadata_takes_the_control_connection(lane_api: ApiKey) -> None:
    cluster, requester = started()
    requester.ask(SendRequest(LeaderOf("t", 0), list_offsets()))
    data: Asked = cluster.take(ApiKey.LIST_OFFSETS, B1)
    cluster.core.refresh_metadata(["t"], cluster.now)
    cluster.advance(1.0)
    meta = cluster.take(lane_api)
    assert meta.conn_id != data.conn_id


def test_sasl_runs_on_every_connection_before_its_first_request() -> None:
    config = ClientConfig("b1:9092", sasl=lambda: PlainMechanism("alice", "hunter2"))
    cluster = ScriptedCluster(ClientCore(config, now=0.0))
    handshake = cluster.take(ApiKey.SASL_HANDSHAKE, B1)
    assert cluster.pending(ApiKey.METADATA) == []
    cluster.answer(handshake, SaslHandshakeResponse(mechanisms=["PLAIN"]))
    auth = cluster.take(ApiKey.SASL_AUTHENTICATE, B1)
    assert auth.body.auth_bytes == b"\0alice\0hunter2"
    events = cluster.answer(auth, SaslAuthenticateResponse())
    assert Authenticated("b1:9092", "PLAIN", 0, False) in events
    cluster.take(ApiKey.METADATA, B1)


def test_a_refused_login_fails_the_round_with_the_authentication_error() -> None:
    config = ClientConfig("b1:9092", sasl=lambda: PlainMechanism("alice", "wrong"))
    cluster = ScriptedCluster(ClientCore(config, now=0.0))
    cluster.answer(cluster.take(ApiKey.SASL_HANDSHAKE), SaslHandshakeResponse(mechanisms=["PLAIN"]))
    refused = SaslAuthenticateResponse(
        error_code=ErrorCode.SASL_AUTHENTICATION_FAILED, error_message="bad password"
    )
    events = cluster.answer(cluster.take(ApiKey.SASL_AUTHENTICATE), refused)
    (failed,) = [e for e in events if isinstance(e, MetadataFailed)]
    assert isinstance(failed.error, AuthenticationError)
    assert "b1:9092" in str(failed.error)


def test_rebootstrap_closes_the_old_brokers_and_forgets_coordinators() -> None:
    cluster, requester = started()
    requester.ask(offset_fetch())
    find = cluster.take(ApiKey.FIND_COORDINATOR)
    cluster.answer(find, coordinator_response(find, 2, B2))
    asked = cluster.take(ApiKey.OFFSET_FETCH, B2)
    cluster.answer(asked, OffsetFetchResponse(topics=[]))
    cluster.core.report_error(ErrorCode.REBOOTSTRAP_REQUIRED)
    events = cluster.advance(1.0)
    assert [e for e in events if isinstance(e, Rebootstrapped)]
    assert asked.conn_id in cluster.closed
    meta = cluster.take(ApiKey.METADATA)
    assert meta.address == B1 and meta.conn_id != find.conn_id
    cluster.answer(meta, metadata_response({4: ("b4", 9092)}, {"t": [4]}))
    requester.ask(offset_fetch())
    find = cluster.take(ApiKey.FIND_COORDINATOR)  # the old coordinator is forgotten
    cluster.answer(find, coordinator_response(find, 4, ("b4", 9092)))
    cluster.take(ApiKey.OFFSET_FETCH, ("b4", 9092))


def test_two_admin_operations_in_one_core_complete_under_their_own_op_ids() -> None:
    cluster, _ = started()
    first = AdminOperation(DescribeCluster(False), ToAnyBroker(), [CLUSTER], timeout=30.0)
    second = AdminOperation(DescribeCluster(False), ToAnyBroker(), [CLUSTER], timeout=30.0)
    cluster.core.add(first)
    cluster.core.add(second)
    ops = [first.start(cluster.now), second.start(cluster.now)]
    assert ops[0] != ops[1]
    for cluster_id in ("c1", "c2"):
        asked = cluster.take(ApiKey.DESCRIBE_CLUSTER)
        cluster.answer(asked, DescribeClusterResponse(cluster_id=cluster_id, controller_id=1))
    done = {
        e.event.op: (e.machine, e.event.value[CLUSTER].cluster_id)
        for e in cluster.events
        if isinstance(e, MachineEvent) and isinstance(e.event, Completed)
    }
    assert done == {ops[0]: (first, "c1"), ops[1]: (second, "c2")}


def test_a_closed_core_fails_what_is_pending_and_has_nothing_left_to_do() -> None:
    cluster, requester = started()
    sent = SendRequest(LeaderOf("t", 0), list_offsets())
    requester.ask(sent)
    asked = cluster.take(ApiKey.LIST_OFFSETS)
    cluster.core.close(cluster.now)
    cluster.step()
    assert isinstance(requester.outcome(sent), KafkaConnectionError)
    assert asked.conn_id in cluster.closed
    assert cluster.core.next_deadline() is None
    assert cluster.advance(600.0) == []
    assert cluster.pending() == []


def test_a_failed_coordinator_lookup_is_retried_after_backoff() -> None:
    cluster, requester = started()
    sent = offset_fetch()
    requester.ask(sent)
    find = cluster.take(ApiKey.FIND_COORDINATOR)
    unavailable = ErrorCode.COORDINATOR_NOT_AVAILABLE
    cluster.answer(find, coordinator_response(find, -1, ("", -1), unavailable))
    assert cluster.pending(ApiKey.FIND_COORDINATOR) == []
    deadline = cluster.core.next_deadline()
    assert deadline is not None and cluster.now < deadline < cluster.now + 1.0
    cluster.advance_to_deadline()
    find = cluster.take(ApiKey.FIND_COORDINATOR)
    cluster.answer(find, coordinator_response(find, 2, B2))
    cluster.answer(cluster.take(ApiKey.OFFSET_FETCH, B2), OffsetFetchResponse(topics=[]))
    assert requester.outcome(sent) == OffsetFetchResponse(topics=[])


def test_a_refused_coordinator_lookup_fails_the_requests_waiting_for_it() -> None:
    cluster, requester = started()
    sent = offset_fetch()
    requester.ask(sent)
    find = cluster.take(ApiKey.FIND_COORDINATOR)
    denied = ErrorCode.GROUP_AUTHORIZATION_FAILED
    cluster.answer(find, coordinator_response(find, -1, ("", -1), denied))
    assert type(requester.outcome(sent)).__name__ == "GroupAuthorizationFailedError"


def test_reads_spread_over_the_data_connections_produce_keeps_to_one() -> None:
    cluster, requester = started(connections_per_broker=2)
    reads = [SendRequest(Broker(1), list_offsets()) for _ in range(2)]
    produces = [SendRequest(Broker(1), ProduceRequest(acks=1)) for _ in range(3)]
    requester.ask(*reads, *produces)
    assert len({cluster.take(ApiKey.LIST_OFFSETS, B1).conn_id for _ in reads}) == 2
    assert len({cluster.take(ApiKey.PRODUCE, B1).conn_id for _ in produces}) == 1


def test_an_idle_connection_is_closed_and_opened_again_when_needed() -> None:
    cluster, requester = started(connections_max_idle=5.0)
    sent = SendRequest(Broker(2), list_offsets())
    requester.ask(sent)
    asked = cluster.take(ApiKey.LIST_OFFSETS, B2)
    cluster.answer(asked, ListOffsetsResponse(topics=[]))
    cluster.advance(4.0)
    assert asked.conn_id not in cluster.closed
    cluster.advance(1.5)
    assert cluster.closed.get(asked.conn_id) is False  # closed politely, not reset
    requester.ask(SendRequest(Broker(2), list_offsets()))
    assert cluster.take(ApiKey.LIST_OFFSETS, B2).conn_id != asked.conn_id


def test_a_request_timing_out_while_its_connection_handshakes_names_the_broker() -> None:
    cluster, requester = started(connect_timeout=10.0)
    cluster.silent.add(B2)
    sent = SendRequest(Broker(2), list_offsets(), timeout=0.5)
    requester.ask(sent)
    cluster.step()
    cluster.advance_to_deadline()
    error = requester.outcome(sent)
    assert isinstance(error, KafkaTimeoutError)
    assert "b2:9092 (node 2) accepted the connection but the ApiVersions handshake" in str(error)
    assert "within 0.5s" in str(error) and cluster.now == 0.5
    assert list(cluster.closed.values()) == [True]  # nobody waits for it: given up


def test_a_metadata_round_passes_over_a_broker_in_reconnect_backoff() -> None:
    cluster = ScriptedCluster(ClientCore(ClientConfig("b1:9092"), now=0.0, rand=lambda: 0.0))
    requester = Requester()
    cluster.core.add(requester)
    cluster.answer(cluster.take(ApiKey.METADATA, B1), metadata_response(BROKERS, {"t": [1]}))
    cluster.refuse[B2] = KafkaConnectionError("b2:9092: Connection refused")
    sent = SendRequest(Broker(2), list_offsets())
    requester.ask(sent)
    cluster.step()
    while sent not in requester.outcomes:
        cluster.advance_to_deadline()
    cluster.core.refresh_metadata(["u"], cluster.now)
    (meta,) = cluster.pending(ApiKey.METADATA)
    assert meta.address != B2  # random order would have asked b2 first


# -- deadlines: every timer a request, a link or a machine holds is the core's deadline, and
# stepping at it (not before) does what was due


def test_a_lingering_batch_makes_the_core_deadline_and_goes_out_at_it() -> None:
    cluster, _ = started()
    config = ProducerConfig(linger=0.25, enable_idempotence=False, acks=1)
    engine = ProducerEngine(config, cluster.core.cluster)
    cluster.core.add(engine)
    cluster.advance(1.0)
    engine.append("t", 0, 1_700_000_000_000, None, b"v", None, cluster.now, 1)
    assert cluster.core.next_deadline() == pytest.approx(1.25)  # before a step, as io wakes it
    cluster.advance(0.2)
    assert cluster.pending(ApiKey.PRODUCE) == []
    assert cluster.core.next_deadline() == pytest.approx(1.25)
    cluster.advance_to_deadline()
    (produce,) = cluster.pending(ApiKey.PRODUCE)
    assert produce.address == B1 and isinstance(produce.sent.body, ProduceRequest)
    assert cluster.now == pytest.approx(1.25)


def test_a_request_on_the_wire_fails_at_its_own_timeout_not_before() -> None:
    cluster, requester = started()
    sent = SendRequest(Broker(2), list_offsets(), timeout=2.0)
    requester.ask(sent)
    cluster.take(ApiKey.LIST_OFFSETS, B2)
    assert cluster.core.next_deadline() == pytest.approx(2.0)
    cluster.advance(1.9)
    assert sent not in requester.outcomes
    cluster.advance_to_deadline()
    assert isinstance(requester.outcome(sent), KafkaTimeoutError)
    assert requester.answered_at[sent] == pytest.approx(2.0)


def test_the_earliest_of_several_links_and_lanes_is_the_deadline() -> None:
    cluster, requester = started()
    late = SendRequest(Broker(1), list_offsets(), timeout=7.0)
    soon = SendRequest(Broker(2), list_offsets(), timeout=3.0)
    requester.ask(late, soon)
    cluster.take(ApiKey.LIST_OFFSETS, B1)
    cluster.take(ApiKey.LIST_OFFSETS, B2)
    assert cluster.core.next_deadline() == pytest.approx(3.0)
    cluster.advance_to_deadline()
    assert isinstance(requester.outcome(soon), KafkaTimeoutError)
    assert late not in requester.outcomes
    assert cluster.core.next_deadline() == pytest.approx(7.0)
    cluster.advance_to_deadline()
    assert isinstance(requester.outcome(late), KafkaTimeoutError)


def test_a_request_waiting_for_metadata_fails_at_its_timeout() -> None:
    cluster, requester = started()
    cluster.advance(1.0)  # past the refresh backoff: the round for u goes out at once
    sent = SendRequest(LeaderOf("u", 0), list_offsets(), timeout=1.5)
    requester.ask(sent)
    assert len(cluster.pending(ApiKey.METADATA)) == 1  # never answered
    assert cluster.core.next_deadline() == pytest.approx(2.5)
    cluster.advance(1.4)
    assert sent not in requester.outcomes
    cluster.advance_to_deadline()
    assert isinstance(requester.outcome(sent), KrafkaError)
    assert requester.answered_at[sent] == pytest.approx(2.5)


def test_a_request_waiting_for_its_connection_fails_at_its_timeout() -> None:
    cluster, requester = started(connect_timeout=10.0)
    cluster.silent.add(B2)  # the connection never gets past ApiVersions
    sent = SendRequest(Broker(2), list_offsets(), timeout=0.75)
    requester.ask(sent)
    cluster.step()
    assert cluster.core.next_deadline() == pytest.approx(0.75)
    cluster.advance(0.7)
    assert sent not in requester.outcomes
    cluster.advance_to_deadline()
    assert isinstance(requester.outcome(sent), KafkaTimeoutError)
    assert requester.answered_at[sent] == pytest.approx(0.75)
