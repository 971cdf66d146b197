"""Turning a response frame into its message, for the broker connection.

A frame is a response header (correlation id, tagged fields on flexible versions) and the body
of the response the request's version names. Brokers bend the rules in two known ways, both
tolerated here: an ApiVersions version the broker does not know is answered with a v0 body
(KIP-511), and librdkafka's mock cluster writes some flexible responses' top-level tagged
fields twice. Anything else malformed is a `RemoteProtocolError` naming the API and version.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from krafka.errors import KrafkaError, RemoteProtocolError
from krafka.protocol import RESPONSES, ApiKey, ResponseHeader, header_versions
from krafka.protocol.error_codes import ErrorCode
from krafka.protocol.messages import ApiVersionsResponse
from krafka.sansio.events import VersionRange


def api_name(api_key: int) -> str:
    """The API's name for messages (`FETCH`), or its number if krafka does not know it."""
    try:
        return ApiKey(api_key).name
    except ValueError:
        return f"api key {api_key}"


def java_api_name(api_key: int) -> str:
    """The API's name as Kafka's protocol spells it (`Produce`, `FindCoordinator`), as Java's
    metrics and logs show it; its number if krafka does not know it."""
    try:
        return _JAVA_NAMES[api_key]
    except KeyError:
        return str(api_key)


_JAVA_NAMES: dict[int, str] = {
    int(key): "".join(part.capitalize() for part in key.name.split("_")) for key in ApiKey
}


def decode_response(api_key: int, version: int, payload: bytes | bytearray) -> Any:
    """The response message in `payload` (a whole frame) to a request of `api_key` v`version`."""
    cls = _RESPONSE_CLASSES.get(api_key) or _response_class(api_key)
    _, resp_hdr_v = header_versions(api_key, version)
    try:
        _, offset = ResponseHeader.decode_prefix(payload, resp_hdr_v)
        return _decode_body(cls, memoryview(payload)[offset:], version)
    except KrafkaError:
        if api_key == ApiKey.API_VERSIONS and version > 0:
            return _decode_api_versions_v0(payload)
        raise
    except Exception as exc:  # a decoder bug must not kill the driver with a raw exception
        raise RemoteProtocolError(
            f"cannot decode {api_name(api_key)} v{version} response: {exc}"
        ) from exc


#: Response classes by plain int key (an `ApiKey(...)` per response is what this saves).
_RESPONSE_CLASSES: dict[int, Any] = {}


def _response_class(api_key: int) -> Any:
    cls = _RESPONSE_CLASSES[int(api_key)] = RESPONSES[ApiKey(api_key)]
    return cls


def versions_from_response(response: Any) -> Mapping[int, VersionRange]:
    """The {api_key: VersionRange} table of an ApiVersions response."""
    return {
        int(k.api_key): VersionRange(int(k.min_version), int(k.max_version))
        for k in response.api_keys or ()
    }


def _decode_body(cls: Any, body: memoryview, version: int) -> Any:
    """The response body; trailing bytes are an error, except one surplus empty tag section
    after a flexible version: librdkafka's mock cluster writes the top-level tagged fields of
    some responses twice (Metadata v9+), which Java and librdkafka clients ignore."""
    response, end = cls.decode_prefix(body, version)
    flexible = cls.FLEXIBLE_VERSION is not None and version >= cls.FLEXIBLE_VERSION
    if end == len(body) or (flexible and bytes(body[end:]) == b"\x00"):
        return response
    return cls.decode(body, version)


def _decode_api_versions_v0(payload: bytes | bytearray) -> Any:
    """A broker answers an ApiVersions version it does not know with a v0 body (KIP-511).

    librdkafka's mock cluster answers a flexible version it lacks with a body no version parses
    (a one-byte count, no tagged fields); its leading UNSUPPORTED_VERSION code is honoured with
    an empty version table, so the next attempt is v0.
    """
    _, offset = ResponseHeader.decode_prefix(payload, 0)
    body = memoryview(payload)[offset:]
    try:
        return ApiVersionsResponse.decode(body, 0)
    except KrafkaError:
        code = int.from_bytes(body[:2], "big", signed=True) if len(body) >= 2 else None
        if code == ErrorCode.UNSUPPORTED_VERSION:
            return ApiVersionsResponse(error_code=ErrorCode.UNSUPPORTED_VERSION)
        raise


__all__ = ["api_name", "decode_response", "java_api_name", "versions_from_response"]
