"""The share consumer's properties (Java's KafkaShareConsumer configuration)."""

from __future__ import annotations

from typing import Final

from krafka.config.client import CLIENT
from krafka.config.options import boolean, choice, integer, millis, optional_text, table, text

SHARE_CONSUMER: Final = table(
    "share_consumer",
    {
        "group.id": ("group_id", text),
        "share.acknowledgement.mode": (
            "acknowledgement_mode",
            choice("implicit", "explicit"),
        ),
        "max.poll.records": ("max_poll_records", integer),
        "max.poll.interval.ms": ("max_poll_interval", millis),
        "fetch.min.bytes": ("fetch_min_bytes", integer),
        "fetch.max.bytes": ("fetch_max_bytes", integer),
        "fetch.max.wait.ms": ("fetch_max_wait", millis),
        "fetch.wait.max.ms": ("fetch_max_wait", millis),
        "client.rack": ("client_rack", optional_text),
        "check.crcs": ("check_crcs", boolean),
        "default.api.timeout.ms": ("default_api_timeout", millis),
        "retry.backoff.ms": ("retry_backoff", millis),
        "retry.backoff.max.ms": ("retry_backoff_max", millis),
    },
    base=CLIENT,
    ignored={
        "key.deserializer": "pass key_deserializer= (a Python callable); keys are bytes",
        "value.deserializer": "pass value_deserializer= (a Python callable); values are bytes",
        "group.protocol": "share groups have one protocol",
    },
)
