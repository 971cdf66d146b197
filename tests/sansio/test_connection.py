"""BrokerConnection with scripted bytes: framing, pipelining, gating, timeouts, throttling."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from krafka.errors import (
    KafkaConnectionError,
    KafkaTimeoutError,
    KrafkaError,
    RemoteProtocolError,
    UnsupportedVersionError,
)
from krafka.protocol import ApiKey
from krafka.protocol.messages import (
    ApiVersionsResponse,
    HeartbeatRequest,
    HeartbeatResponse,
    MetadataRequest,
    MetadataResponse,
    ProduceRequest,
)
from krafka.sansio.connection import (
    TRANSITIONS,
    BrokerConnection,
    ConnectionConfig,
    ConnectionState,
    Priority,
)
from krafka.sansio.events import (
    ConnectionClosed,
    ConnectionReady,
    RequestFailed,
    ResponseReceived,
)
from krafka.sansio.framing import FrameReader, frame
from krafka.testing.scripted import api_versions, negotiate, response_bytes, sent_by


def _ready(config: ConnectionConfig | None = None, now: float = 0.0) -> BrokerConnection:
    conn = BrokerConnection(config, now=now)
    events = negotiate(conn, now)
    assert isinstance(events[-1], ConnectionReady)
    assert conn.state is ConnectionState.READY
    return conn


def _metadata() -> MetadataRequest:
    return MetadataRequest(topics=[])


def test_transition_table_is_closed_under_enums() -> None:
    for (state, _), target in TRANSITIONS.items():
        assert isinstance(state, ConnectionState) and isinstance(target, ConnectionState)


def test_api_versions_first_then_queued_requests_flow() -> None:
    conn = BrokerConnection(now=0.0)
    cid = conn.send_request(_metadata(), 0.0)
    (first,) = sent_by(conn)
    assert first.api_key == ApiKey.API_VERSIONS and first.version == 4
    assert first.body.client_software_name == "krafka"
    events = conn.receive_data(response_bytes(first, api_versions()), 0.1)
    assert isinstance(events[0], ConnectionReady)
    assert events[0].api_versions[ApiKey.METADATA].max_version == 12
    (meta,) = sent_by(conn)
    assert meta.api_key == ApiKey.METADATA and meta.version == 12 and meta.correlation_id == cid
    events = conn.receive_data(response_bytes(meta, MetadataResponse()), 0.2)
    assert events == [ResponseReceived(cid, ApiKey.METADATA, 12, MetadataResponse(), 0)]


def test_response_split_into_single_bytes() -> None:
    conn = _ready()
    cid = conn.send_request(_metadata(), 1.0)
    (meta,) = sent_by(conn)
    data = response_bytes(meta, MetadataResponse(cluster_id="c"))
    for i in range(len(data) - 1):
        assert conn.receive_data(data[i : i + 1], 1.0) == []
    (event,) = conn.receive_data(data[-1:], 1.0)
    assert isinstance(event, ResponseReceived) and event.correlation_id == cid
    assert event.response.cluster_id == "c"


def test_pipelining_respects_max_in_flight_and_order() -> None:
    conn = _ready(ConnectionConfig(max_in_flight=2))
    cids = [conn.send_request(_metadata(), 0.0) for _ in range(4)]
    wire = sent_by(conn)
    assert [s.correlation_id for s in wire] == cids[:2]
    assert conn.in_flight == 2 and conn.queued == 2
    both = response_bytes(wire[0], MetadataResponse()) + response_bytes(wire[1], MetadataResponse())
    events = conn.receive_data(both, 0.1)
    assert [e.correlation_id for e in events if isinstance(e, ResponseReceived)] == cids[:2]
    assert [s.correlation_id for s in sent_by(conn)] == cids[2:]


def test_out_of_order_correlation_id_is_a_protocol_error() -> None:
    conn = _ready()
    first = conn.send_request(_metadata(), 0.0)
    second = conn.send_request(_metadata(), 0.0)
    wire = sent_by(conn)
    events = conn.receive_data(response_bytes(wire[1], MetadataResponse()), 0.1)
    failed = {e.correlation_id for e in events if isinstance(e, RequestFailed)}
    assert failed == {first, second}
    closed = events[-1]
    assert isinstance(closed, ConnectionClosed)
    assert isinstance(closed.error, RemoteProtocolError) and "does not match" in str(closed.error)
    assert conn.closed


def test_unknown_correlation_id_with_nothing_in_flight() -> None:
    conn = _ready()
    conn.send_request(_metadata(), 0.0)
    (meta,) = sent_by(conn)
    conn.receive_data(response_bytes(meta, MetadataResponse()), 0.0)
    events = conn.receive_data(response_bytes(meta, MetadataResponse(), correlation_id=99), 0.0)
    assert isinstance(events[-1], ConnectionClosed)
    assert "none in flight" in str(events[-1].error)


def test_garbage_and_oversized_frames_close_with_remote_protocol_error() -> None:
    conn = _ready(ConnectionConfig(max_frame_size=1000))
    conn.send_request(_metadata(), 0.0)
    events = conn.receive_data(b"\x7f\xff\xff\xff", 0.0)
    assert isinstance(events[-1], ConnectionClosed)
    assert isinstance(events[-1].error, RemoteProtocolError)


def test_undecodable_body_is_a_protocol_error() -> None:
    conn = _ready()
    conn.send_request(_metadata(), 0.0)
    (meta,) = sent_by(conn)
    header = response_bytes(meta, MetadataResponse())[4:9]  # correlation id + empty tags
    events = conn.receive_data(frame(header + b"\xff\xff\xff"), 0.0)
    assert isinstance(events[-1], ConnectionClosed)
    assert isinstance(events[-1].error, RemoteProtocolError)


def test_the_request_whose_answer_cannot_be_decoded_fails_too() -> None:
    """A caller waiting for a response the broker garbled hears that its request failed (the
    mock cluster's JoinGroup error answers carry a null protocol name)."""
    conn = _ready()
    cid = conn.send_request(_metadata(), 0.0)
    later = conn.send_request(_metadata(), 0.0)
    meta, _ = sent_by(conn)
    header = response_bytes(meta, MetadataResponse())[4:9]
    events = conn.receive_data(frame(header + b"\xff\xff\xff"), 0.0)
    failed = {e.correlation_id: e.error for e in events if isinstance(e, RequestFailed)}
    assert set(failed) == {cid, later}
    assert isinstance(failed[cid], RemoteProtocolError)  # its own answer was broken
    assert isinstance(failed[later], KafkaConnectionError)  # lost with the connection


def test_eof_mid_frame_fails_pending_requests() -> None:
    conn = _ready()
    cid = conn.send_request(_metadata(), 0.0)
    (meta,) = sent_by(conn)
    conn.receive_data(response_bytes(meta, MetadataResponse())[:6], 0.0)
    events = conn.receive_data(b"", 0.0)
    assert isinstance(events[0], RequestFailed) and events[0].correlation_id == cid
    assert isinstance(events[0].error, KafkaConnectionError)
    assert isinstance(events[1], ConnectionClosed) and "mid-frame" in str(events[1].error)
    with pytest.raises(Exception, match="closed"):
        conn.send_request(_metadata(), 0.0)


def test_queued_request_times_out_alone() -> None:
    conn = _ready(ConnectionConfig(max_in_flight=1))
    conn.send_request(_metadata(), 0.0, timeout=10)
    queued = conn.send_request(_metadata(), 0.0, timeout=2)
    assert conn.next_deadline() == 2.0
    (event,) = conn.handle_timeout(2.0)
    assert event == RequestFailed(queued, event.error)
    assert isinstance(event.error, KafkaTimeoutError)
    assert conn.state is ConnectionState.READY


def test_the_deadline_is_the_earliest_request_on_the_wire_or_in_either_lane() -> None:
    conn = _ready(ConnectionConfig(max_in_flight=1))
    wire = conn.send_request(_metadata(), 0.0, timeout=10)
    normal = conn.send_request(_metadata(), 0.0, timeout=5)
    high = conn.send_request(_metadata(), 0.0, timeout=3, priority=Priority.HIGH)
    assert conn.next_deadline() == 3.0
    assert [e.correlation_id for e in conn.handle_timeout(3.0)] == [high]
    assert conn.next_deadline() == 5.0
    assert [e.correlation_id for e in conn.handle_timeout(5.0)] == [normal]
    assert conn.next_deadline() == 10.0
    failed = [e.correlation_id for e in conn.handle_timeout(10.0) if isinstance(e, RequestFailed)]
    assert failed == [wire] and conn.next_deadline() is None


def test_in_flight_timeout_closes_the_connection() -> None:
    conn = _ready()
    first = conn.send_request(_metadata(), 0.0, timeout=1)
    second = conn.send_request(_metadata(), 0.0, timeout=5)
    events = conn.handle_timeout(1.0)
    errors = {e.correlation_id: e.error for e in events if isinstance(e, RequestFailed)}
    assert isinstance(errors[first], KafkaTimeoutError)
    assert isinstance(errors[second], KafkaConnectionError) and errors[second].retriable
    assert conn.closed and conn.next_deadline() is None


def test_api_versions_timeout_closes() -> None:
    conn = BrokerConnection(ConnectionConfig(request_timeout=3), now=0.0)
    assert conn.next_deadline() == 3.0
    (event,) = conn.handle_timeout(3.0)
    assert isinstance(event, ConnectionClosed) and isinstance(event.error, KafkaTimeoutError)


def test_unsupported_api_fails_locally_and_never_reaches_the_broker() -> None:
    conn = BrokerConnection(now=0.0)
    early = conn.send_request(HeartbeatRequest(group_id="g"), 0.0)
    versions = {ApiKey.API_VERSIONS: (0, 4), ApiKey.METADATA: (0, 12)}
    events = negotiate(conn, 0.0, versions=versions)
    assert isinstance(events[0], RequestFailed) and events[0].correlation_id == early
    assert isinstance(events[0].error, UnsupportedVersionError)
    with pytest.raises(UnsupportedVersionError):
        conn.send_request(HeartbeatRequest(group_id="g"), 0.0)
    with pytest.raises(UnsupportedVersionError):
        conn.send_request(_metadata(), 0.0, version=13)
    assert sent_by(conn) == []


def test_version_range_intersection() -> None:
    conn = _ready()
    versions = {ApiKey.API_VERSIONS: (0, 4), ApiKey.METADATA: (0, 5)}
    conn = BrokerConnection(now=0.0)
    negotiate(conn, 0.0, versions=versions)
    assert conn.version_for(ApiKey.METADATA) == 5
    conn.send_request(_metadata(), 0.0)
    assert sent_by(conn)[0].version == 5


def test_api_versions_unsupported_version_retries_lower() -> None:
    conn = BrokerConnection(now=0.0)
    (first,) = sent_by(conn)
    reply = ApiVersionsResponse(
        error_code=35,
        api_keys=[ApiVersionsResponse.ApiVersion(api_key=18, min_version=0, max_version=2)],
    )
    assert conn.receive_data(response_bytes(first, reply), 0.0) == []
    (second,) = sent_by(conn)
    assert second.api_key == ApiKey.API_VERSIONS and second.version == 2
    events = conn.receive_data(response_bytes(second, api_versions()), 0.0)
    assert isinstance(events[-1], ConnectionReady)


def test_api_versions_v0_body_for_an_unknown_version() -> None:
    conn = BrokerConnection(now=0.0)
    (first,) = sent_by(conn)
    v0 = type(first)(first.api_key, 0, first.correlation_id, first.body)
    reply = ApiVersionsResponse(error_code=35, api_keys=[])
    assert conn.receive_data(response_bytes(v0, reply), 0.0) == []
    (second,) = sent_by(conn)
    assert second.version == 0


def test_api_versions_unparseable_unsupported_body_retries_v0() -> None:
    """librdkafka's mock cluster answers ApiVersions v3+ (it has 0-2) with this exact body:
    UNSUPPORTED_VERSION, a one-byte count, one entry without tagged fields, throttle time."""
    conn = BrokerConnection(now=0.0)
    (first,) = sent_by(conn)
    assert first.version >= 3
    body = bytes.fromhex("0023" "01" "0012" "0000" "0002" "00000000")  # fmt: skip
    header = first.correlation_id.to_bytes(4, "big")
    assert conn.receive_data(frame(header + body), 0.0) == []
    (second,) = sent_by(conn)
    assert second.api_key == ApiKey.API_VERSIONS and second.version == 0
    events = conn.receive_data(response_bytes(second, api_versions()), 0.0)
    assert isinstance(events[-1], ConnectionReady)


@pytest.mark.parametrize(
    ("version", "surplus", "accepted"),
    [
        (12, b"\x00", True),  # librdkafka's mock: top-level tags written twice
        (12, b"\x00\x00", False),
        (12, b"\x01", False),
        (8, b"\x00", False),  # not a flexible version: no tag section to repeat
    ],
)
def test_response_trailing_bytes(version: int, surplus: bytes, accepted: bool) -> None:
    conn = _ready()
    conn.send_request(_metadata(), 0.0, version=version)
    (sent,) = sent_by(conn)
    unframed = response_bytes(sent, MetadataResponse())[4:]
    events = conn.receive_data(frame(unframed + surplus), 0.0)
    if accepted:
        assert isinstance(events[-1], ResponseReceived)
    else:
        assert isinstance(events[-1], ConnectionClosed | RequestFailed)


def test_api_versions_unparseable_body_with_another_code_fails() -> None:
    conn = BrokerConnection(now=0.0)
    (first,) = sent_by(conn)
    header = first.correlation_id.to_bytes(4, "big")
    events = conn.receive_data(frame(header + bytes.fromhex("000101")), 0.0)
    assert isinstance(events[-1], ConnectionClosed)
    assert isinstance(events[-1].error, KrafkaError)


def test_throttle_holds_normal_lane_but_not_high() -> None:
    conn = _ready()
    conn.send_request(HeartbeatRequest(group_id="g"), 0.0)
    (hb,) = sent_by(conn)
    (event,) = conn.receive_data(response_bytes(hb, HeartbeatResponse(throttle_time_ms=500)), 10.0)
    assert isinstance(event, ResponseReceived) and event.throttle_time_ms == 500
    assert conn.throttle_until == pytest.approx(10.5)
    normal = conn.send_request(_metadata(), 10.1)
    assert sent_by(conn) == []
    high = conn.send_request(_metadata(), 10.1, priority=Priority.HIGH)
    assert [s.correlation_id for s in sent_by(conn)] == [high]
    assert conn.next_deadline() == pytest.approx(10.5)
    conn.handle_timeout(10.5)
    assert [s.correlation_id for s in sent_by(conn)] == [normal]


def test_high_priority_jumps_the_queue() -> None:
    conn = _ready(ConnectionConfig(max_in_flight=1))
    conn.send_request(_metadata(), 0.0)
    (first,) = sent_by(conn)
    conn.send_request(_metadata(), 0.0)
    high = conn.send_request(_metadata(), 0.0, priority=Priority.HIGH)
    assert conn.queued == 2
    conn.receive_data(response_bytes(first, MetadataResponse()), 0.0)
    assert [s.correlation_id for s in sent_by(conn)] == [high]


def test_produce_acks_zero_completes_without_response() -> None:
    conn = _ready()
    cid = conn.send_request(ProduceRequest(acks=0, timeout_ms=1000, topic_data=[]), 0.0)
    (event,) = conn.drain_events()
    assert event == ResponseReceived(cid, ApiKey.PRODUCE, 11, None)
    assert conn.in_flight == 0
    assert sent_by(conn)[0].api_key == ApiKey.PRODUCE


def test_orderly_close_fails_pending() -> None:
    conn = _ready()
    cid = conn.send_request(_metadata(), 0.0)
    events = conn.close()
    assert isinstance(events[0], RequestFailed) and events[0].correlation_id == cid
    assert events[-1] == ConnectionClosed(None)


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 8), st.data())
def test_pipelined_responses_under_any_chunking(n: int, data: st.DataObject) -> None:
    conn = _ready(ConnectionConfig(max_in_flight=8))
    cids = [conn.send_request(_metadata(), 0.0) for _ in range(n)]
    wire = sent_by(conn)
    stream = b"".join(
        response_bytes(s, MetadataResponse(cluster_id=str(i))) for i, s in enumerate(wire)
    )
    cuts = sorted(data.draw(st.lists(st.integers(0, len(stream)), max_size=12)))
    got: list[Any] = []
    start = 0
    for cut in [*cuts, len(stream)]:
        if cut > start:  # b"" would mean end of stream
            got += conn.receive_data(stream[start:cut], 0.0)
        start = max(start, cut)
    assert [e.correlation_id for e in got] == cids
    assert [e.response.cluster_id for e in got] == [str(i) for i in range(n)]


def test_frames_split_by_the_transport_answer_like_bytes() -> None:
    """`receive_frames` (a transport that reads frames itself, `FrameReader.get_buffer`)
    answers the requests as the same bytes fed to `receive_data` do, a bytearray payload (a
    large frame read in place) included; a frame that breaks the protocol fails the
    connection with what was wrong."""
    conn = _ready(ConnectionConfig(max_in_flight=8))
    cids = [conn.send_request(_metadata(), 0.0) for _ in range(3)]
    reader = FrameReader()
    for i, sent in enumerate(sent_by(conn)):
        reader.feed(response_bytes(sent, MetadataResponse(cluster_id=str(i))))
    payloads = reader.frames()
    payloads[1] = bytearray(payloads[1])
    got = conn.receive_frames(payloads, 0.0)
    assert [e.correlation_id for e in got] == cids
    assert [e.response.cluster_id for e in got] == ["0", "1", "2"]
    conn.send_request(_metadata(), 0.0)
    events = conn.receive_frames([b"\x00\x00\x00\x63"], 0.0)
    assert isinstance(events[-1], ConnectionClosed)
    assert "correlation id 99" in str(events[-1].error)


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=300))
def test_hostile_bytes_never_escape_as_other_exceptions(blob: bytes) -> None:
    conn = _ready()
    conn.send_request(_metadata(), 0.0)
    sent_by(conn)
    for event in conn.receive_data(blob, 0.0):
        if isinstance(event, ConnectionClosed):
            assert isinstance(event.error, KrafkaError)


def test_failed_requests_bytes_are_never_sent_later() -> None:
    conn = _ready()
    conn.send_request(_metadata(), 0.0, timeout=1)
    conn.send_request(ProduceRequest(acks=1, timeout_ms=1000, topic_data=[]), 0.0, timeout=10)
    events = conn.handle_timeout(1.0)
    assert isinstance(events[-1], ConnectionClosed)
    assert conn.data_to_send() == b""


def test_pre_kip219_versions_are_not_throttled_by_the_client() -> None:
    conn = BrokerConnection(now=0.0)
    negotiate(conn, versions={ApiKey.API_VERSIONS: (0, 4), ApiKey.HEARTBEAT: (0, 1)})
    conn.send_request(HeartbeatRequest(group_id="g"), 0.0)
    (hb,) = sent_by(conn)
    assert hb.version == 1
    conn.receive_data(response_bytes(hb, HeartbeatResponse(throttle_time_ms=500)), 0.0)
    assert conn.throttle_until == 0.0  # the broker already delayed its answer


def _produce(records: bytes) -> ProduceRequest:
    part = ProduceRequest.TopicProduceData.PartitionProduceData(index=0, records=records)
    topic = ProduceRequest.TopicProduceData(name="t", partition_data=[part])
    return ProduceRequest(acks=1, timeout_ms=1000, topic_data=[topic])


def test_a_request_reaches_the_socket_with_its_records_copied_once() -> None:
    """Encoding, the header, the size prefix and the outgoing buffer share one copy of a
    megabyte batch: the bytes `data_to_send` returns are the only new ones, and the connection
    keeps no copy of a request once it went out."""
    import gc
    import tracemalloc

    conn = _ready()
    records = bytes(range(256)) * 4096
    gc.collect()
    tracemalloc.start()
    try:
        cid = conn.send_request(_produce(records), 1.0)
        data = conn.data_to_send()
        _, peak = tracemalloc.get_traced_memory()
        del data
        current, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(records) < peak < 1.2 * len(records)
    assert current < 0.2 * len(records)
    conn.send_request(_produce(records), 2.0)
    (sent,) = sent_by(conn)
    assert sent.correlation_id == cid + 1 and sent.body == _produce(records)
