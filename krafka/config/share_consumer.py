"""The share consumer's properties (Java's KafkaShareConsumer configuration)."""

from __future__ import annotations

from typing import Final

from krafka.config.client import CLIENT
from krafka.config.consumer import FETCHING
from krafka.config.options import choice, table, text

SHARE_CONSUMER: Final = table(
    "share_consumer",
    {
        "group.id": ("group_id", text),
        "share.acknowledgement.mode": (
            "acknowledgement_mode",
            choice("implicit", "explicit"),
        ),
        **FETCHING,
    },
    base=CLIENT,
    ignored={
        "key.deserializer": "pass key_deserializer= (a Python callable); keys are bytes",
        "value.deserializer": "pass value_deserializer= (a Python callable); values are bytes",
        "group.protocol": "share groups have one protocol",
    },
)
