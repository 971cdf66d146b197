"""Blocking clients for scripts, notebooks and WSGI apps: `Producer`, `Consumer`,
`ShareConsumer`, `AdminClient` with the constructors, methods, results and exceptions of the
async ones (`krafka.Producer` ...), each on a private event loop in a background thread.

    from krafka.sync import Producer, AdminClient

    with Producer(bootstrap_servers="127.0.0.1:9092") as producer:
        future = producer.send("orders", b"v", key=b"k")   # concurrent.futures.Future
        print(future.result())                              # RecordMetadata
        producer.send_and_wait("orders", b"v2")

They may be shared by threads, and called from code running an event loop of its own
(Jupyter, an async framework calling sync code): the client's loop is its own, on its thread.
`close()` (or leaving the `with` block) closes the client and joins its thread within the
timeout; a client garbage-collected without `close()` is closed briefly then.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from krafka.sync.admin import AdminClient
    from krafka.sync.consumer import Consumer
    from krafka.sync.producer import DeliveryFuture, Producer
    from krafka.sync.share_consumer import ShareConsumer

_LAZY = {
    "AdminClient": "krafka.sync.admin",
    "Consumer": "krafka.sync.consumer",
    "DeliveryFuture": "krafka.sync.delivery",
    "Producer": "krafka.sync.producer",
    "ShareConsumer": "krafka.sync.share_consumer",
}

__all__ = ["AdminClient", "Consumer", "DeliveryFuture", "Producer", "ShareConsumer"]


def __dir__() -> list[str]:
    """The public names (imported lazily, so not yet in the module's namespace) and the rest."""
    return sorted({*globals(), *__all__})


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'krafka.sync' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
