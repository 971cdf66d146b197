"""krafka: a Kafka client for Python.

Top-level names are imported lazily, so `import krafka.codec` stays light (no anyio).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from krafka.io.producer import Producer, RecordMetadata
    from krafka.structs import ConsumerGroupMetadata, OffsetAndMetadata, TopicPartition

__version__ = "0.1.0"

_LAZY: dict[str, str] = {
    "ConsumerGroupMetadata": "krafka.structs",
    "OffsetAndMetadata": "krafka.structs",
    "Producer": "krafka.io.producer",
    "RecordMetadata": "krafka.io.producer",
    "TopicPartition": "krafka.structs",
}

__all__ = [
    "ConsumerGroupMetadata",
    "OffsetAndMetadata",
    "Producer",
    "RecordMetadata",
    "TopicPartition",
    "__version__",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'krafka' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
