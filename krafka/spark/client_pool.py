"""Clients kept between the tasks of one executor process: consumers of the source, producers
of the sink.

A task that made its own client would start a thread, connect, negotiate API versions and load
metadata (a producer: get its producer id too) before its first request: tens of
milliseconds, a sizeable part of a task that moves a few hundred thousand records. Spark's own
Kafka connector keeps its consumers and producers between tasks for the same reason
(`spark.kafka.consumer.cache.*`, `spark.kafka.producer.cache.*`); these pools do the same,
keyed by the client's settings: a task takes one (or makes one), uses it, and gives it back
when it finished cleanly (a failed task closes its client). Clients idle longer than
`idle_timeout` are closed, and at most `capacity` are kept per pool.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

#: Spark's defaults for its consumer cache: 64 clients, closed after 5 minutes idle.
CAPACITY = 64
IDLE_TIMEOUT = 300.0

Key = tuple[tuple[str, str], ...]


class ClientPool:
    """Idle clients (anything with `close()`) by settings; `lease` one for the length of a
    task."""

    def __init__(
        self,
        capacity: int = CAPACITY,
        idle_timeout: float = IDLE_TIMEOUT,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.capacity = capacity
        self.idle_timeout = idle_timeout
        self._clock = clock
        self._lock = threading.Lock()
        self._idle: dict[Key, list[tuple[float, Any]]] = {}

    @contextmanager
    def lease(self, settings: Mapping[str, str], make: Callable[[], Any]) -> Iterator[Any]:
        """A client for `settings` (made by `make()` when none is idle), returned to the pool
        when the block ends normally and closed when it raises."""
        key = tuple(sorted(settings.items()))
        client = self._take(key) or make()
        try:
            yield client
        except BaseException:
            client.close()
            raise
        self._give_back(key, client)

    def close(self) -> None:
        """Close every idle client."""
        with self._lock:
            idle, self._idle = self._idle, {}
        for entries in idle.values():
            for _, client in entries:
                client.close()

    def __len__(self) -> int:
        with self._lock:
            return sum(len(entries) for entries in self._idle.values())

    def _take(self, key: Key) -> Any:
        expired = self._expire()
        with self._lock:
            entries = self._idle.get(key)
            client = entries.pop()[1] if entries else None
        for old in expired:
            old.close()
        return client

    def _give_back(self, key: Key, client: Any) -> None:
        extra = None
        with self._lock:
            if sum(len(e) for e in self._idle.values()) >= self.capacity:
                extra = client
            else:
                self._idle.setdefault(key, []).append((self._clock(), client))
        if extra is not None:
            extra.close()

    def _expire(self) -> list[Any]:
        limit = self._clock() - self.idle_timeout
        expired = []
        with self._lock:
            for key, entries in list(self._idle.items()):
                kept = [(t, c) for t, c in entries if t >= limit]
                expired += [c for t, c in entries if t < limit]
                if kept:
                    self._idle[key] = kept
                else:
                    del self._idle[key]
        return expired


#: The pools of this process (a Spark Python worker runs its tasks one after another).
CONSUMERS = ClientPool()
PRODUCERS = ClientPool()

__all__ = ["CONSUMERS", "PRODUCERS", "ClientPool"]
