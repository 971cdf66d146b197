"""What a broker connection state machine reports to its driver. Frozen, slotted, immutable."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from krafka.errors import KrafkaError


@dataclass(frozen=True, slots=True)
class VersionRange:
    """The versions of one API a broker accepts (inclusive)."""

    min_version: int
    max_version: int


@dataclass(frozen=True, slots=True)
class ConnectionReady:
    """ApiVersions (and SASL, if configured) done: requests may flow."""

    api_versions: Mapping[int, VersionRange]


@dataclass(frozen=True, slots=True)
class Authenticated:
    """A SASL exchange succeeded; `reauthentication` is True for KIP-368 renewals."""

    mechanism: str
    session_lifetime_ms: int
    reauthentication: bool


@dataclass(frozen=True, slots=True)
class ResponseReceived:
    """The decoded response to request `correlation_id` (None for a Produce with acks=0)."""

    correlation_id: int
    api_key: int
    api_version: int
    response: Any
    throttle_time_ms: int = 0


@dataclass(frozen=True, slots=True)
class RequestFailed:
    """Request `correlation_id` will get no response: timed out, gated, or connection lost."""

    correlation_id: int
    error: KrafkaError


@dataclass(frozen=True, slots=True)
class ConnectionClosed:
    """The connection is finished; `error` is None for a local, orderly close."""

    error: KrafkaError | None


Event = ConnectionReady | Authenticated | ResponseReceived | RequestFailed | ConnectionClosed
