"""Java/librdkafka-style admin properties -> `AdminClient` keywords.

`{"bootstrap.servers": ..., "default.api.timeout.ms": 30000}` becomes
`bootstrap_servers=..., default_api_timeout=30.0`: dots become underscores, a `.ms` suffix is
dropped and the value divided by 1000 (krafka durations are seconds), and the table below maps
the properties whose keyword differs. Shaped like `krafka.io.producer_config` so it can join the
one shared config module (`krafka.config`) as its "admin" table.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from krafka.errors import ConfigError
from krafka.io.transport import create_ssl_context

#: Property (after dots -> underscores, `_ms` dropped) -> keyword.
PROPERTIES: Final[Mapping[str, str]] = {
    "bootstrap_servers": "bootstrap_servers",
    "client_id": "client_id",
    "request_timeout": "request_timeout",
    "default_api_timeout": "default_api_timeout",
    "retry_backoff": "retry_backoff",
    "retry_backoff_max": "retry_backoff_max",
    "metadata_max_age": "metadata_max_age",
    "socket_connection_setup_timeout": "connect_timeout",
    "sasl_mechanism": "sasl_mechanism",
    "sasl_mechanisms": "sasl_mechanism",
    "sasl_username": "sasl_username",
    "sasl_password": "sasl_password",
}
#: Accepted and without effect here, with the reason.
IGNORED: Final[Mapping[str, str]] = {
    "retries": "admin calls retry until default.api.timeout.ms",
}
_SSL_FILES: Final = {
    "ssl_ca_location": "cafile",
    "ssl_certificate_location": "certfile",
    "ssl_key_location": "keyfile",
    "ssl_key_password": "password",
}
_FLOATS: Final = frozenset(
    {"request_timeout", "default_api_timeout", "retry_backoff", "retry_backoff_max",
     "metadata_max_age", "connect_timeout"}
)  # fmt: skip


def admin_keywords(config: Mapping[str, Any]) -> dict[str, Any]:
    """Translate a property dict; unknown properties raise `ConfigError` naming them."""
    out: dict[str, Any] = {}
    ssl_files: dict[str, str] = {}
    unknown: list[str] = []
    protocol = "PLAINTEXT"
    for prop, value in config.items():
        name = prop.replace(".", "_").replace("-", "_")
        if name.endswith("_ms") and value is not None:
            name, value = name[:-3], float(value) / 1000.0
        if name == "security_protocol":
            protocol = str(value).upper()
        elif name in _SSL_FILES:
            ssl_files[_SSL_FILES[name]] = str(value)
        elif name in PROPERTIES:
            keyword = PROPERTIES[name]
            out[keyword] = float(value) if keyword in _FLOATS else value
        elif name not in IGNORED:
            unknown.append(prop)
    if unknown:
        raise ConfigError(f"unknown admin properties: {', '.join(sorted(unknown))}")
    if protocol not in ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"):
        raise ConfigError(f"security.protocol: unknown protocol {protocol!r}")
    if protocol.endswith("SSL"):
        out["ssl_context"] = create_ssl_context(
            cafile=ssl_files.get("cafile"),
            certfile=ssl_files.get("certfile"),
            keyfile=ssl_files.get("keyfile"),
            password=ssl_files.get("password"),
        )
    elif ssl_files:
        raise ConfigError(
            f"ssl.* properties need security.protocol SSL or SASL_SSL, not {protocol}"
        )
    return out


__all__ = ["IGNORED", "PROPERTIES", "admin_keywords"]
