"""The admin client's properties (Java's `AdminClientConfig`), on the shared client table."""

from __future__ import annotations

import logging
from typing import Final

from krafka.config.client import CLIENT
from krafka.config.options import Settings, millis, table

log = logging.getLogger(__name__)


def no_auto_creation(settings: Settings) -> Settings:
    """An admin client never creates topics by asking about them (as Java's does not)."""
    if settings.pop("allow_auto_topic_creation", False):
        log.info("admin property allow.auto.create.topics has no effect: admin clients never "
                 "create topics by looking them up")  # fmt: skip
    return settings


ADMIN: Final = table(
    "admin",
    {
        "default.api.timeout.ms": ("default_api_timeout", millis),
        "retry.backoff.ms": ("retry_backoff", millis),
        "retry.backoff.max.ms": ("retry_backoff_max", millis),
    },
    base=CLIENT,
    ignored={
        "retries": "admin calls retry until default.api.timeout.ms",
        "metric.reporters": "admin clients keep no metrics",
    },
    finishers=(no_auto_creation,),
)
