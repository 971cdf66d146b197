"""Java/librdkafka-style admin properties -> `AdminClient` keywords, through the shared
configuration module (`krafka.config`, table "admin": every client property — bootstrap,
timeouts, `security.protocol`, `ssl.*`, `sasl.*` — plus `default.api.timeout.ms` and the retry
backoffs). `.ms` values become seconds; unknown properties raise `ConfigError` naming them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from krafka.config import keywords_from_config


def admin_keywords(config: Mapping[str, Any]) -> dict[str, Any]:
    """`AdminClient` keywords from a property dict."""
    return dict(keywords_from_config(config, "admin"))


__all__ = ["admin_keywords"]
