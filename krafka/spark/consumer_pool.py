"""Standalone consumers kept between the tasks of one executor process.

A task that made its own consumer would start a thread, connect, negotiate API versions and
load metadata before its first fetch: tens of milliseconds, a sizeable part of a task that
reads a few hundred thousand records. Spark's own Kafka source keeps its consumers between
tasks for the same reason (`spark.kafka.consumer.cache.*`); this pool does the same, keyed by
the consumer's settings: a task takes one (or makes one), points it at its partition and
offset, and gives it back when it finished cleanly (a failed task closes its consumer).
Consumers idle longer than `idle_timeout` are closed, and at most `capacity` are kept.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

#: Spark's defaults for its consumer cache: 64 consumers, closed after 5 minutes idle.
CAPACITY = 64
IDLE_TIMEOUT = 300.0

Key = tuple[tuple[str, str], ...]


class ConsumerPool:
    """Idle consumers by settings; `lease` one for the length of a task."""

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
        """A consumer for `settings` (made by `make()` when none is idle), returned to the pool
        when the block ends normally and closed when it raises."""
        key = tuple(sorted(settings.items()))
        consumer = self._take(key) or make()
        try:
            yield consumer
        except BaseException:
            consumer.close()
            raise
        self._give_back(key, consumer)

    def close(self) -> None:
        """Close every idle consumer."""
        with self._lock:
            idle, self._idle = self._idle, {}
        for entries in idle.values():
            for _, consumer in entries:
                consumer.close()

    def __len__(self) -> int:
        with self._lock:
            return sum(len(entries) for entries in self._idle.values())

    def _take(self, key: Key) -> Any:
        expired = self._expire()
        with self._lock:
            entries = self._idle.get(key)
            consumer = entries.pop()[1] if entries else None
        for old in expired:
            old.close()
        return consumer

    def _give_back(self, key: Key, consumer: Any) -> None:
        extra = None
        with self._lock:
            if sum(len(e) for e in self._idle.values()) >= self.capacity:
                extra = consumer
            else:
                self._idle.setdefault(key, []).append((self._clock(), consumer))
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


#: The pool of this process (a Spark Python worker runs its tasks one after another).
POOL = ConsumerPool()

__all__ = ["POOL", "ConsumerPool"]
