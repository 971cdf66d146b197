"""Choosing a partition for a record: murmur2 on the key (Java-exact), sticky for null keys.

* `DefaultPartitioner` — Java's and librdkafka's `murmur2_random`: a keyed record goes to
  `murmur2(key) & 0x7fffffff % n`; a null-keyed one sticks to one partition until a batch for
  that partition is sealed, then another is picked at random (KIP-480).
* `KeyHashPartitioner` — librdkafka's other built-ins by their names: `consistent_random`
  (librdkafka's default: CRC32 of the key, null and empty keys random), `consistent` (CRC32;
  null and empty keys to one partition), `murmur2` (Java's hash, null keys to one partition),
  `fnv1a` and `fnv1a_random`, each choosing exactly what librdkafka chooses for a key.
* `RoundRobinPartitioner` — every record, keyed or not, to the next partition in turn.
* `CallablePartitioner` — any `fn(topic, key, num_partitions) -> int`.

The accumulator calls `on_batch_sealed` so sticky partitioners can move on. A partitioner whose
`sticky` is true (an optional attribute, false when absent) is asked again for a record when the
batch of the partition it chose had no room for it: that batch is sealed first, so the record
goes where the partitioner moved on to (KIP-480's `onNewBatch`), not into a batch of its own on
the full partition. Others are asked once per record (a round robin asked twice would skip a
partition, KAFKA-9965). Pure: the random source is injectable for tests.
"""

from __future__ import annotations

import random
import zlib
from collections.abc import Callable
from enum import Enum
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
    sticky = True

    def __init__(self, rand: Callable[[int], int] | None = None) -> None:
        self._sticky: dict[str, int] = {}
        self._rand = rand or random.randrange

    @property
    def choices(self) -> dict[str, int]:
        """The partition each topic's null-keyed records stick to now (read, never written, by
        the compiled appender for every such record instead of calling `partition`)."""
        return self._sticky

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


def sticky(partitioner: Partitioner) -> bool:
    """Whether `partitioner` is asked again when its choice's batch was full (module doc)."""
    return bool(getattr(partitioner, "sticky", False))


class Keyless(Enum):
    """Which records a `KeyHashPartitioner` sends to a random (sticky) partition."""

    HASHED = "hashed"  # none: a null key hashes as no bytes (librdkafka's consistent, murmur2)
    NULL = "null"  # null keys (murmur2_random, fnv1a_random)
    EMPTY = "empty"  # null and empty keys (consistent_random)


def _crc32(key: bytes, num_partitions: int) -> int:
    """librdkafka's `consistent`: `rd_crc32(key) % n` (the zlib CRC-32)."""
    return zlib.crc32(key) % num_partitions


def _fnv1a(key: bytes, num_partitions: int) -> int:
    """librdkafka's (and Sarama's) `fnv1a`: the 32-bit FNV-1a of the key as a signed int,
    modulo `n`, made positive."""
    h = 0x811C9DC5
    for byte in key:
        h = ((h ^ byte) * 0x01000193) & 0xFFFFFFFF
    signed = h - (1 << 32) if h & 0x80000000 else h
    return abs(signed) % num_partitions


class KeyHashPartitioner:
    """`hash(key) % n` with one of librdkafka's hashes; keyless records (as `keyless` says)
    stick to a random partition until its batch is sealed, as librdkafka's sticky ones do."""

    __slots__ = ("_hash", "_keyless", "_random")
    sticky = True

    def __init__(
        self,
        hash_partition: Callable[[bytes, int], int],
        keyless: Keyless,
        rand: Callable[[int], int] | None = None,
    ) -> None:
        self._hash = hash_partition
        self._keyless = keyless
        self._random = DefaultPartitioner(rand)

    def partition(self, topic: str, key: bytes | None, num_partitions: int) -> int:
        if self._is_keyless(key):
            return self._random.partition(topic, None, num_partitions)
        return self._hash(b"" if key is None else key, num_partitions)

    def _is_keyless(self, key: bytes | None) -> bool:
        if self._keyless is Keyless.HASHED:
            return False
        return key is None or (self._keyless is Keyless.EMPTY and not key)

    def on_batch_sealed(self, topic: str, partition: int, num_partitions: int) -> None:
        self._random.on_batch_sealed(topic, partition, num_partitions)


class RoundRobinPartitioner:
    """Each record to the next partition of its topic, ignoring keys (Java's RoundRobin)."""

    __slots__ = ("_next",)
    sticky = False

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
    sticky = False

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
    "murmur2": lambda: KeyHashPartitioner(murmur2_partition, Keyless.HASHED),
    "consistent": lambda: KeyHashPartitioner(_crc32, Keyless.HASHED),
    "consistent_random": lambda: KeyHashPartitioner(_crc32, Keyless.EMPTY),
    "fnv1a": lambda: KeyHashPartitioner(_fnv1a, Keyless.HASHED),
    "fnv1a_random": lambda: KeyHashPartitioner(_fnv1a, Keyless.NULL),
    "sticky": DefaultPartitioner,
    "round_robin": RoundRobinPartitioner,
    "roundrobin": RoundRobinPartitioner,
}


def make_partitioner(spec: str | Partitioner | PartitionFunction | None) -> Partitioner:
    """A partitioner from a name (`"murmur2_random"`, `"consistent_random"`, `"round_robin"`,
    librdkafka's other names), an object or a callable."""
    if spec is None:
        return DefaultPartitioner()
    if isinstance(spec, str):
        try:
            return _NAMED[spec.lower().replace("-", "_")]()
        except KeyError:
            known = ", ".join(sorted(_NAMED))
            raise ValueError(f"unknown partitioner {spec!r} (krafka has {known})") from None
    if hasattr(spec, "partition") and hasattr(spec, "on_batch_sealed"):
        return spec
    if callable(spec):
        return CallablePartitioner(spec)
    raise TypeError(f"not a partitioner: {spec!r}")
