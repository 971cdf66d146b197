"""Version negotiation and header versions.

A request's header version follows from whether the request version is flexible: v2 (tagged
fields) for flexible requests, v1 otherwise, v0 only for ControlledShutdown v0. The response
header is v1 for flexible responses and v0 otherwise, except ApiVersions, whose response header
is always v0 so that a client can parse it before knowing what the broker supports.
"""

from __future__ import annotations

from typing import Any

import krafka.errors as _errors
from krafka.protocol.messages import REQUESTS, RESPONSES, ApiKey

_CONTROLLED_SHUTDOWN = 7

#: Answers already computed, by plain int keys: every request asks again, and an enum lookup
#: or a schema walk per request is what these tables save (only successes are kept).
_HEADERS: dict[tuple[int, int], tuple[int, int]] = {}
_CLIENT_VERSIONS: dict[tuple[int, bool], tuple[int, int]] = {}


def _request_class(api_key: int) -> Any:
    try:
        return REQUESTS[ApiKey(api_key)]
    except ValueError:
        raise _errors.UnsupportedVersionError(f"unknown api key {api_key}") from None


def header_versions(api_key: int, api_version: int) -> tuple[int, int]:
    """(request header version, response header version) for a request of this key/version."""
    known = _HEADERS.get((api_key, api_version))
    if known is None:
        known = _HEADERS[int(api_key), api_version] = _header_versions(api_key, api_version)
    return known


def _header_versions(api_key: int, api_version: int) -> tuple[int, int]:
    if api_key == _CONTROLLED_SHUTDOWN:  # not client-facing, but its v0 is the header-v0 quirk
        return (0, 0) if api_version == 0 else ((2, 1) if api_version >= 3 else (1, 0))
    req = _request_class(api_key)
    resp = RESPONSES[ApiKey(api_key)]
    if not req.MIN_VERSION <= api_version <= req.MAX_VERSION:
        raise _errors.UnsupportedVersionError(
            f"{req.__name__} v{api_version} is not supported "
            f"(valid versions {req.MIN_VERSION}-{req.MAX_VERSION})"
        )
    req_flex = req.FLEXIBLE_VERSION is not None and api_version >= req.FLEXIBLE_VERSION
    resp_flex = resp.FLEXIBLE_VERSION is not None and api_version >= resp.FLEXIBLE_VERSION
    req_hdr = 2 if req_flex else 1
    resp_hdr = 0 if api_key == ApiKey.API_VERSIONS else (1 if resp_flex else 0)
    return req_hdr, resp_hdr


def client_versions(api_key: int, include_unstable: bool = False) -> tuple[int, int]:
    """The (min, max) versions krafka can speak for `api_key`.

    The newest version of an API still marked `latestVersionUnstable` in Kafka's schemas is
    left out unless `include_unstable`.
    """
    known = _CLIENT_VERSIONS.get((api_key, include_unstable))
    if known is None:
        known = _client_versions(api_key, include_unstable)
        _CLIENT_VERSIONS[int(api_key), include_unstable] = known
    return known


def _client_versions(api_key: int, include_unstable: bool) -> tuple[int, int]:
    req = _request_class(api_key)
    hi = req.MAX_VERSION
    if req.LATEST_VERSION_UNSTABLE and not include_unstable and hi > req.MIN_VERSION:
        hi -= 1
    return req.MIN_VERSION, hi


def negotiate_version(
    api_key: int, broker_min: int, broker_max: int, include_unstable: bool = False
) -> int:
    """Highest version both krafka and the broker support; `UnsupportedVersionError` if none."""
    lo, hi = client_versions(api_key, include_unstable)
    best = min(hi, broker_max)
    if best < max(lo, broker_min):
        name = ApiKey(api_key).name
        raise _errors.UnsupportedVersionError(
            f"no common version for {name}: krafka supports {lo}-{hi}, "
            f"broker supports {broker_min}-{broker_max}"
        )
    return best
