"""Choosing a partition for a record: murmur2 on the key (Java-exact), sticky for null keys.

* `DefaultPartitioner` — Java's and librdkafka's `murmur2_random`: a keyed record goes to
  `murmur2(key) & 0x7fffffff % n`; a null-keyed one sticks to one partition until a batch for
  that partition is sealed, then another is picked at random (KIP-480).
* `RoundRobinPartitioner` — every record, keyed or not, to the next partition in turn.
* `CallablePartitioner` — any `fn(topic, key, num_partitions) -> int`.

The accumulator calls `on_batch_sealed` so sticky partitioners can move on. Pure: the random
source is injectable for tests.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Protocol

from krafka.codec import murmur2_partition

PartitionFunction = Callable[[str, "bytes | None", int], int]


class Partitioner(Protocol):
    """Picks a partition in `range(num_partitions)` for one record."""

    def partition(self, topic: str, key: bytes | None, num_partitions: int) -> int: ...

    def on_batch_sealed(self, topic: str, partition: int, num_partitions: int) -> None: ...


class DefaultPartitioner:
    """murmur2 for keys (identical to Java and librdkafka `murmur2_random`), sticky otherwise."""

    __slots__ = ("_rand", "_sticky")

    def __init__(self, rand: Callable[[int], int] | None = None) -> None:
        self._sticky: dict[str, int] = {}
        self._rand = rand or random.randrange

    def partition(self, topic: str, key: bytes | None, num_partitions: int) -> int:
        if key is not None:
            return murmur2_partition(key, num_partitions)
        current = self._sticky.get(topic)
        if current is None or current >= num_partitions:
            current = self._sticky[topic] = self._rand(num_partitions)
        return current

    def on_batch_sealed(self, topic: str, partition: int, num_partitions: int) -> None:
        if self._sticky.get(topic) != partition:
            return
        if num_partitions <= 1:
            return
        choice = self._rand(num_partitions - 1)
        self._sticky[topic] = choice if choice < partition else choice + 1


class RoundRobinPartitioner:
    """Each record to the next partition of its topic, ignoring keys (Java's RoundRobin)."""

    __slots__ = ("_next",)

    def __init__(self) -> None:
        self._next: dict[str, int] = {}

    def partition(self, topic: str, key: bytes | None, num_partitions: int) -> int:
        n = self._next.get(topic, 0)
        self._next[topic] = n + 1
        return n % num_partitions

    def on_batch_sealed(self, topic: str, partition: int, num_partitions: int) -> None:
        return None


class CallablePartitioner:
    """Adapts `fn(topic, key, num_partitions) -> int`; the result is checked against the range."""

    __slots__ = ("_fn",)

    def __init__(self, fn: PartitionFunction) -> None:
        self._fn = fn

    def partition(self, topic: str, key: bytes | None, num_partitions: int) -> int:
        chosen = self._fn(topic, key, num_partitions)
        if not 0 <= chosen < num_partitions:
            raise ValueError(f"partitioner chose {chosen} for {topic!r} with {num_partitions}")
        return chosen

    def on_batch_sealed(self, topic: str, partition: int, num_partitions: int) -> None:
        return None


_NAMED: dict[str, Callable[[], Partitioner]] = {
    "default": DefaultPartitioner,
    "murmur2_random": DefaultPartitioner,
    "sticky": DefaultPartitioner,
    "round_robin": RoundRobinPartitioner,
    "roundrobin": RoundRobinPartitioner,
}


def make_partitioner(spec: str | Partitioner | PartitionFunction | None) -> Partitioner:
    """A partitioner from a name (`"murmur2_random"`, `"round_robin"`), an object or a callable."""
    if spec is None:
        return DefaultPartitioner()
    if isinstance(spec, str):
        try:
            return _NAMED[spec.lower().replace("-", "_")]()
        except KeyError:
            raise ValueError(f"unknown partitioner {spec!r}") from None
    if hasattr(spec, "partition") and hasattr(spec, "on_batch_sealed"):
        return spec
    if callable(spec):
        return CallablePartitioner(spec)
    raise TypeError(f"not a partitioner: {spec!r}")
