"""Hostile bytes: every decode failure is a RemoteProtocolError naming API, version and field."""

from __future__ import annotations

import contextlib
import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from krafka.errors import KrafkaError, LocalProtocolError, ProtocolError, RemoteProtocolError
from krafka.protocol.error_codes import ErrorCode
from krafka.protocol.messages import (
    ApiVersionsResponse,
    FetchResponse,
    MetadataRequest,
    MetadataResponse,
    ProduceRequest,
    SyncGroupResponse,
)
from krafka.protocol.messages.fetch_response import FetchableTopicResponse, PartitionData
from krafka.protocol.messages.metadata_response import MetadataResponseTopic
from krafka.protocol.schema import ApiMessage

from .strategies import struct_strategy


def _metadata(version: int, names: list[str]) -> bytes:
    topics = [MetadataResponseTopic(name=n) for n in names]
    return MetadataResponse(topics=topics).encode(version)


def test_string_length_exceeds_remaining_names_the_field() -> None:
    data = _metadata(12, ["a", "b", "c", "dd"])
    i = data.rindex(b"\x03dd")  # compact string: length + 1
    bad = data[:i] + bytes([0xF1, 0xA2, 0x04]) + data[i + 1 :]  # uvarint 70001 -> length 70000
    with pytest.raises(RemoteProtocolError) as info:
        MetadataResponse.decode(bad, 12)
    msg = str(info.value)
    assert msg.startswith("MetadataResponse v12: topics[3].name: string length 70000 exceeds")
    assert isinstance(info.value, ProtocolError) and isinstance(info.value, KrafkaError)


def test_bad_utf8() -> None:
    data = _metadata(1, ["a", "b"])
    i = data.rindex(b"\x00\x01b")
    bad = data[: i + 2] + b"\xff" + data[i + 3 :]
    expected = r"MetadataResponse v1: topics\[1\].name: invalid UTF-8"
    with pytest.raises(RemoteProtocolError, match=expected):
        MetadataResponse.decode(bad, 1)


def test_negative_and_absurd_array_lengths() -> None:
    # MetadataResponse v1: brokers array count is the first int32.
    good = _metadata(1, ["a"])
    for count, what in ((-5, "negative length -5"), (-1, "null array"), (2**31 - 1, "exceeds")):
        bad = struct.pack(">i", count) + good[4:]
        with pytest.raises(RemoteProtocolError, match=rf"MetadataResponse v1: brokers: .*{what}"):
            MetadataResponse.decode(bad, 1)


def test_truncated_at_every_offset() -> None:
    part = PartitionData(partition_index=1, records=b"x" * 20, aborted_transactions=[])
    resp = FetchResponse(responses=[FetchableTopicResponse(topic="t", partitions=[part])])
    for version in (4, 11, 12, 16):
        data = resp.encode(version)
        FetchResponse.decode(data, version)
        for cut in range(len(data)):
            with pytest.raises(RemoteProtocolError, match=rf"^FetchResponse v{version}: "):
                FetchResponse.decode(data[:cut], version)


def test_trailing_bytes_rejected_but_prefix_decode_allows() -> None:
    data = ApiVersionsResponse().encode(3)
    with pytest.raises(RemoteProtocolError, match="trailing bytes"):
        ApiVersionsResponse.decode(data + b"\x00", 3)
    obj, end = ApiVersionsResponse.decode_prefix(data + b"\x00", 3)
    assert end == len(data) and obj == ApiVersionsResponse()


def test_tagged_field_size_overrun() -> None:
    data = bytearray(ApiVersionsResponse().encode(3))
    # last byte is the (empty) tag section: claim one tag of 100 bytes
    data[-1:] = b"\x01\x05\x64"
    with pytest.raises(RemoteProtocolError, match="tagged"):
        ApiVersionsResponse.decode(bytes(data), 3)


@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_random_corruption_raises_only_protocol_errors(data: st.DataObject) -> None:
    classes: list[type[ApiMessage]] = [MetadataResponse, FetchResponse, ApiVersionsResponse]
    cls = data.draw(st.sampled_from(classes))
    version = data.draw(st.integers(cls.MIN_VERSION, cls.MAX_VERSION))
    raw = bytearray(data.draw(struct_strategy(cls, version)).encode(version))
    for _ in range(data.draw(st.integers(1, 4))):
        if raw:
            raw[data.draw(st.integers(0, len(raw) - 1))] = data.draw(st.integers(0, 255))
    try:
        cls.decode(bytes(raw), version)
    except RemoteProtocolError as e:
        assert str(e).startswith(f"{cls.__name__} v{version}: ")


@given(st.binary(max_size=64))
@settings(max_examples=200, deadline=None)
def test_random_bytes(raw: bytes) -> None:
    for cls, version in ((FetchResponse, 12), (MetadataResponse, 9), (ApiVersionsResponse, 0)):
        with contextlib.suppress(RemoteProtocolError):
            cls.decode(raw, version)


def test_encode_errors_are_local() -> None:
    with pytest.raises(LocalProtocolError, match=r"MetadataRequest v3: topics\[0\].name: None"):
        MetadataRequest(topics=[MetadataRequest.MetadataRequestTopic(name=None)]).encode(3)
    with pytest.raises(LocalProtocolError, match="out of range for int16"):
        ProduceRequest(acks=70000).encode(9)
    with pytest.raises(LocalProtocolError, match="expected str"):
        MetadataRequest(topics=[MetadataRequest.MetadataRequestTopic(name=b"x")]).encode(1)  # type: ignore[arg-type]
    # allow_auto_topic_creation (default True) is absent before v4 and not ignorable
    with pytest.raises(LocalProtocolError, match="allow_auto_topic_creation: field is not in v3"):
        MetadataRequest(allow_auto_topic_creation=False).encode(3)
    with pytest.raises(LocalProtocolError, match="not flexible"):
        MetadataRequest(unknown_tagged_fields=((5, b"x"),)).encode(8)


@pytest.mark.slow
@settings(max_examples=3000, deadline=None)
@given(data=st.data())
def test_fuzz_every_response_decoder(data: st.DataObject) -> None:
    """Long run (`-m slow`): mutated valid responses of every API only raise protocol errors."""
    from krafka.protocol import RESPONSES

    cls = data.draw(st.sampled_from(sorted(RESPONSES.values(), key=lambda c: c.__name__)))
    version = data.draw(st.integers(cls.MIN_VERSION, cls.MAX_VERSION))
    raw = bytearray(data.draw(struct_strategy(cls, version)).encode(version))
    for _ in range(data.draw(st.integers(1, 6))):
        if raw:
            raw[data.draw(st.integers(0, len(raw) - 1))] = data.draw(st.integers(0, 255))
    cut = data.draw(st.integers(0, len(raw)))
    try:
        cls.decode(bytes(raw[:cut]), version)
    except RemoteProtocolError as e:
        assert str(e).startswith(f"{cls.__name__} v{version}: ")


@pytest.mark.parametrize("version", [0, 3, 4, 5])
def test_null_non_nullable_bytes_read_as_empty(version: int) -> None:
    """librdkafka (and its mock cluster) write an errored SyncGroup's MemberState as null; the
    error code must still reach the member. Null strings and arrays stay errors."""
    flex = version >= 4
    throttle = struct.pack(">i", 0) if version >= 1 else b""
    null = b"\x00" if flex else struct.pack(">i", -1)
    names = b"\x00\x00" if version >= 5 else b""  # null compact protocol type and name
    tags = b"\x00" if flex else b""
    data = throttle + struct.pack(">h", ErrorCode.REBALANCE_IN_PROGRESS) + names + null + tags
    response = SyncGroupResponse.decode(data, version)
    assert response.error_code == ErrorCode.REBALANCE_IN_PROGRESS and response.assignment == b""
