"""Every client-facing Kafka API and version, generated from Kafka's own JSON schemas.

`messages` holds one slotted dataclass per request, response and nested struct, with
`encode(version) -> bytes` and `Cls.decode(buffer, version)`; `REQUESTS` / `RESPONSES` map each
`ApiKey` to its classes; `header_versions` and `negotiate_version` pick versions.
"""

from __future__ import annotations

import krafka.errors as _errors  # noqa: F401  (import order: errors before messages)
from krafka.protocol import messages
from krafka.protocol.messages import REQUESTS, RESPONSES, ApiKey
from krafka.protocol.messages.request_header import RequestHeader
from krafka.protocol.messages.response_header import ResponseHeader
from krafka.protocol.schema import ApiMessage, FieldSpec, Struct, index_by_key
from krafka.protocol.versions import (
    broker_ranges,
    client_versions,
    header_versions,
    negotiate_all,
    negotiate_version,
)

__all__ = [
    "REQUESTS",
    "RESPONSES",
    "ApiKey",
    "ApiMessage",
    "FieldSpec",
    "RequestHeader",
    "ResponseHeader",
    "Struct",
    "broker_ranges",
    "client_versions",
    "header_versions",
    "index_by_key",
    "messages",
    "negotiate_all",
    "negotiate_version",
]
