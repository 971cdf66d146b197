"""Targeted checks of the schema language's semantics."""

from __future__ import annotations

import uuid

import pytest

from krafka.errors import LocalProtocolError
from krafka.protocol import index_by_key
from krafka.protocol.messages import (
    ApiVersionsResponse,
    DescribeClientQuotasResponse,
    FetchRequest,
    FetchResponse,
    MetadataRequest,
    ProduceRequest,
)
from krafka.protocol.messages.fetch_response import FetchableTopicResponse, PartitionData


def test_unknown_tags_survive_and_are_merged_in_tag_order() -> None:
    resp = ApiVersionsResponse(
        finalized_features_epoch=7, unknown_tagged_fields=((0x50, b"zz"), (2000, b""))
    )
    data = resp.encode(3)
    back = ApiVersionsResponse.decode(data, 3)
    assert back.unknown_tagged_fields == ((0x50, b"zz"), (2000, b""))
    assert back.finalized_features_epoch == 7 and back.explicit_tags == frozenset({1})
    assert back.encode(3) == data
    # tags are written in ascending order: known tag 1 before unknown 0x50 and 2000
    assert data.endswith(b"\x03" + b"\x01\x08" + (7).to_bytes(8, "big") + b"\x50\x02zz\xd0\x0f\x00")


def test_default_tagged_fields_are_omitted_unless_explicit() -> None:
    assert ApiVersionsResponse().encode(3).endswith(b"\x00")
    forced = ApiVersionsResponse(explicit_tags=frozenset({1})).encode(3)
    assert forced.endswith(b"\x01\x01\x08" + b"\xff" * 8)


def test_ignorable_fields_are_dropped_silently() -> None:
    # FetchResponse.throttle_time_ms is ignorable and absent in v0
    resp = FetchResponse(throttle_time_ms=100)
    assert FetchResponse.decode(resp.encode(0), 0).throttle_time_ms == 0
    # ...but a non-ignorable one (session_id, v7+) is not
    with pytest.raises(LocalProtocolError, match="session_id: field is not in v6"):
        FetchResponse(session_id=5).encode(6)


def test_defaults_from_schema() -> None:
    req = FetchRequest()
    assert req.replica_id == -1 and req.max_bytes == 0x7FFFFFFF and req.isolation_level == 0
    assert req.cluster_id is None and req.replica_state.replica_epoch == -1
    part = PartitionData()
    assert part.last_stable_offset == -1 and part.records is None
    assert part.current_leader.leader_id == -1
    assert MetadataRequest().allow_auto_topic_creation is True


def test_records_are_zero_copy_and_accept_any_buffer() -> None:
    payload = bytearray(b"batch" * 10)
    req = ProduceRequest(
        topic_data=[
            ProduceRequest.TopicProduceData(
                name="t",
                partition_data=[
                    ProduceRequest.TopicProduceData.PartitionProduceData(
                        index=0, records=memoryview(payload)
                    )
                ],
            )
        ]
    )
    data = req.encode(9)
    assert payload in data
    part = PartitionData(records=bytes(payload))
    resp = FetchResponse(responses=[FetchableTopicResponse(topic="t", partitions=[part])])
    wire = bytearray(resp.encode(11))
    got = FetchResponse.decode(wire, 11).responses[0].partitions[0].records
    assert isinstance(got, memoryview) and got.obj is wire and got == payload


def test_uuid_and_float64() -> None:
    topic_id = uuid.uuid4()
    resp = FetchResponse(responses=[FetchableTopicResponse(topic_id=topic_id)])
    assert FetchResponse.decode(resp.encode(13), 13).responses[0].topic_id == topic_id
    entry = DescribeClientQuotasResponse.EntryData(
        values=[DescribeClientQuotasResponse.EntryData.ValueData(key="rate", value=2.5)]
    )
    q = DescribeClientQuotasResponse(entries=[entry])
    assert DescribeClientQuotasResponse.decode(q.encode(1), 1) == q


def test_map_key_index() -> None:
    resp = ApiVersionsResponse(
        api_keys=[
            ApiVersionsResponse.ApiVersion(api_key=3, max_version=12),
            ApiVersionsResponse.ApiVersion(api_key=0, max_version=11),
        ]
    )
    idx = index_by_key(resp.api_keys)
    assert idx[3].max_version == 12 and idx[0].max_version == 11


def test_request_header_client_id_is_never_compact() -> None:
    from krafka.protocol import RequestHeader

    hdr = RequestHeader(request_api_key=18, request_api_version=3, correlation_id=1)
    assert hdr.encode(2) == bytes.fromhex("0012000300000001" + "0000" + "00")
    assert RequestHeader(client_id=None).encode(2).endswith(b"\xff\xff\x00")


def test_credentials_stay_out_of_repr() -> None:
    from krafka.protocol.messages import AlterUserScramCredentialsRequest, SaslAuthenticateRequest

    req = SaslAuthenticateRequest(auth_bytes=b"\x00alice\x00hunter2")
    assert "hunter2" not in repr(req)
    upsert = AlterUserScramCredentialsRequest.ScramCredentialUpsertion(
        name="alice", salt=b"NaCl", salted_password=b"s3cret"
    )
    assert "s3cret" not in repr(upsert) and "NaCl" not in repr(upsert)
