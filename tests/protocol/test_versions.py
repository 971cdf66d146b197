"""Header versions and version negotiation."""

from __future__ import annotations

import pytest

from krafka.errors import UnsupportedVersionError
from krafka.protocol import (
    ApiKey,
    RequestHeader,
    ResponseHeader,
    header_versions,
    negotiate_version,
)


def test_header_versions() -> None:
    assert header_versions(ApiKey.METADATA, 8) == (1, 0)
    assert header_versions(ApiKey.METADATA, 9) == (2, 1)
    assert header_versions(ApiKey.API_VERSIONS, 3) == (2, 0)
    assert header_versions(ApiKey.API_VERSIONS, 2) == (1, 0)
    assert header_versions(7, 0) == (0, 0)
    assert header_versions(ApiKey.PRODUCE, 9) == (2, 1)
    with pytest.raises(UnsupportedVersionError):
        header_versions(ApiKey.METADATA, 99)


def test_headers_encode() -> None:
    hdr = RequestHeader(request_api_key=3, request_api_version=12, correlation_id=7, client_id="k")
    assert hdr.encode(1) == bytes.fromhex("0003000c00000007") + b"\x00\x01k"
    assert hdr.encode(2) == bytes.fromhex("0003000c00000007") + b"\x00\x01k\x00"
    assert hdr.encode(0) == bytes.fromhex("0003000c00000007")
    buf = bytes.fromhex("0000002a00") + b"body"
    resp, off = ResponseHeader.decode_prefix(buf, 1)
    assert resp.correlation_id == 42 and buf[off:] == b"body"
    _resp0, off0 = ResponseHeader.decode_prefix(buf, 0)
    assert off0 == 4


def test_negotiate() -> None:
    assert negotiate_version(ApiKey.METADATA, 0, 9) == 9
    assert negotiate_version(ApiKey.METADATA, 0, 99) == 12
    with pytest.raises(UnsupportedVersionError):
        negotiate_version(ApiKey.METADATA, 50, 60)
