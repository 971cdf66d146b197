"""Java/librdkafka-style producer properties -> `Producer` keywords.

`{"bootstrap.servers": ..., "linger.ms": 5}` becomes `bootstrap_servers=..., linger=0.005`:
dots become underscores, a `.ms` suffix is dropped and the value divided by 1000 (krafka
durations are seconds), and a few librdkafka synonyms map onto the Java names.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from krafka.errors import ConfigError

#: Property (after dots -> underscores, `_ms` dropped) -> keyword, where the two differ.
ALIASES: Final[Mapping[str, str]] = {
    "compression_type": "compression",
    "compression_codec": "compression",
    "linger": "linger",
    "queue_buffering_max": "linger",
    "message_timeout": "delivery_timeout",
    "message_max_bytes": "max_request_size",
    "max_in_flight": "max_in_flight_requests_per_connection",
    "queue_buffering_max_kbytes": "buffer_memory",
}

_KBYTES: Final = frozenset({"queue_buffering_max_kbytes"})


def keywords_from_config(config: Mapping[str, Any], defaults: Mapping[str, Any]) -> dict[str, Any]:
    """Translate a property dict; `defaults` maps each accepted keyword to its default, whose
    type string values are coerced to. Unknown properties raise `ConfigError` naming them."""
    out: dict[str, Any] = {}
    unknown: list[str] = []
    for prop, value in config.items():
        name = prop.replace(".", "_").replace("-", "_")
        if name.endswith("_ms") and value is not None:
            name, value = name[:-3], float(value) / 1000.0
        if name in _KBYTES:
            value = int(value) * 1024
        name = ALIASES.get(name, name)
        if name not in defaults:
            unknown.append(prop)
            continue
        out[name] = _coerce(prop, value, defaults[name])
    if unknown:
        raise ConfigError(f"unknown producer properties: {', '.join(sorted(unknown))}")
    return out


def _coerce(prop: str, value: Any, default: Any) -> Any:
    if not isinstance(value, str) or default is None or isinstance(default, str):
        return value
    try:
        if isinstance(default, bool):
            if value.lower() not in ("true", "false"):
                raise ValueError(value)
            return value.lower() == "true"
        if isinstance(default, int):
            return int(value)
        if isinstance(default, float):
            return float(value)
    except ValueError:
        raise ConfigError(f"{prop}: cannot use {value!r}") from None
    return value
