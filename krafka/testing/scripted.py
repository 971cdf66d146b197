"""A scripted broker for driving `krafka.sansio.connection.BrokerConnection` with exact bytes.

For tests of sans-IO machines on top of the connection (no sockets, no clocks)."""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any

from krafka.protocol import REQUESTS, ApiKey, RequestHeader, ResponseHeader, header_versions
from krafka.protocol.messages import ApiVersionsResponse
from krafka.sansio.connection import BrokerConnection
from krafka.sansio.framing import FrameReader, frame

DEFAULT_VERSIONS: dict[ApiKey, tuple[int, int]] = {
    ApiKey.PRODUCE: (3, 11),
    ApiKey.FETCH: (4, 12),
    ApiKey.METADATA: (0, 12),
    ApiKey.FIND_COORDINATOR: (0, 6),
    ApiKey.HEARTBEAT: (0, 4),
    ApiKey.SASL_HANDSHAKE: (0, 1),
    ApiKey.API_VERSIONS: (0, 4),
    ApiKey.SASL_AUTHENTICATE: (0, 2),
}


@dataclass(frozen=True)
class Sent:
    api_key: ApiKey
    version: int
    correlation_id: int
    body: Any


def parse_requests(data: bytes) -> list[Sent]:
    reader = FrameReader()
    reader.feed(data)
    out = []
    for payload in reader.frames():
        api_key, version = struct.unpack_from(">hh", payload)
        req_hdr_v, _ = header_versions(api_key, version)
        header, offset = RequestHeader.decode_prefix(payload, req_hdr_v)
        body = REQUESTS[ApiKey(api_key)].decode(payload[offset:], version)
        out.append(Sent(ApiKey(api_key), version, header.correlation_id, body))
    return out


def response_bytes(sent: Sent, body: Any, correlation_id: int | None = None) -> bytes:
    _, resp_hdr_v = header_versions(sent.api_key, sent.version)
    cid = sent.correlation_id if correlation_id is None else correlation_id
    header = ResponseHeader(correlation_id=cid).encode(resp_hdr_v)
    return frame(header + body.encode(sent.version))


def api_versions(
    versions: dict[ApiKey, tuple[int, int]] | None = None, error_code: int = 0
) -> ApiVersionsResponse:
    table = DEFAULT_VERSIONS if versions is None else versions
    keys = [
        ApiVersionsResponse.ApiVersion(api_key=int(k), min_version=lo, max_version=hi)
        for k, (lo, hi) in table.items()
    ]
    return ApiVersionsResponse(error_code=error_code, api_keys=keys)


def sent_by(conn: BrokerConnection) -> list[Sent]:
    return parse_requests(conn.data_to_send())


def negotiate(conn: BrokerConnection, now: float = 0.0, **kwargs: Any) -> list[Any]:
    """Answer the connection's ApiVersions request; returns the events."""
    (first,) = sent_by(conn)
    assert first.api_key == ApiKey.API_VERSIONS
    return conn.receive_data(response_bytes(first, api_versions(**kwargs)), now)
