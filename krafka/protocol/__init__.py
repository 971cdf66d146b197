"""Every client-facing Kafka API and version, generated from Kafka's own JSON schemas.

`messages` holds one slotted dataclass per request, response and nested struct, with
`encode(version) -> bytes` and `Cls.decode(buffer, version)`; `REQUESTS` / `RESPONSES` map each
`ApiKey` to its classes; `header_versions` and `negotiate_version` pick versions.

Attributes load on first use, so `krafka.errors` (which needs only `error_codes`) does not pay
for importing every message class.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from krafka.protocol import messages
    from krafka.protocol.messages import REQUESTS, RESPONSES, ApiKey
    from krafka.protocol.messages.request_header import RequestHeader
    from krafka.protocol.messages.response_header import ResponseHeader
    from krafka.protocol.schema import ApiMessage, FieldSpec, Struct, index_by_key
    from krafka.protocol.versions import (
        client_versions,
        header_versions,
        negotiate_version,
    )

_LAZY = {
    "messages": ("krafka.protocol.messages", None),
    "REQUESTS": ("krafka.protocol.messages", "REQUESTS"),
    "RESPONSES": ("krafka.protocol.messages", "RESPONSES"),
    "ApiKey": ("krafka.protocol.messages", "ApiKey"),
    "RequestHeader": ("krafka.protocol.messages.request_header", "RequestHeader"),
    "ResponseHeader": ("krafka.protocol.messages.response_header", "ResponseHeader"),
    "ApiMessage": ("krafka.protocol.schema", "ApiMessage"),
    "FieldSpec": ("krafka.protocol.schema", "FieldSpec"),
    "Struct": ("krafka.protocol.schema", "Struct"),
    "index_by_key": ("krafka.protocol.schema", "index_by_key"),
    "client_versions": ("krafka.protocol.versions", "client_versions"),
    "header_versions": ("krafka.protocol.versions", "header_versions"),
    "negotiate_version": ("krafka.protocol.versions", "negotiate_version"),
}

__all__ = [
    "REQUESTS",
    "RESPONSES",
    "ApiKey",
    "ApiMessage",
    "FieldSpec",
    "RequestHeader",
    "ResponseHeader",
    "Struct",
    "client_versions",
    "header_versions",
    "index_by_key",
    "messages",
    "negotiate_version",
]


def __getattr__(name: str) -> Any:
    try:
        module_name, attr = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module 'krafka.protocol' has no attribute {name!r}") from None
    module = importlib.import_module(module_name)
    value = module if attr is None else getattr(module, attr)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_LAZY])
