"""The live krafka clients, for exporters that report on all of them (`PrometheusCollector`).

Every `Producer`, `Consumer`, `ShareConsumer` and `AdminClient` enters here when it is built,
held weakly: a client the application dropped leaves by itself, a closed one when it closes. Each
entry says what kind of
client it is, its labels, and how to read its metrics as Java-named values (a plain function of
the client, so the entry holds no reference to it).
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from krafka.sansio.telemetry.names import ClientKind


@dataclass(frozen=True, slots=True)
class ClientEntry:
    """What an exporter knows of one client besides the client itself."""

    kind: ClientKind
    client_id: str
    group: str | None
    read: Callable[[Any], Mapping[str, Any]]


_clients: weakref.WeakKeyDictionary[Any, ClientEntry] = weakref.WeakKeyDictionary()
_lock = threading.Lock()


def track(client: Any, entry: ClientEntry) -> None:
    """Report on `client` while it is alive."""
    with _lock:
        _clients[client] = entry


def forget(client: Any) -> None:
    """`client` closed: no more reports on it (as Java removes a closed client's metrics)."""
    with _lock:
        _clients.pop(client, None)


def live() -> list[tuple[Any, ClientEntry]]:
    """The clients alive now, with their entries."""
    with _lock:
        return list(_clients.items())


__all__ = ["ClientEntry", "ClientKind", "forget", "live", "track"]
