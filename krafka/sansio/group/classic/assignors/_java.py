"""Java's orderings, so krafka's assignors break ties exactly where Java's do.

Java's assignors iterate `HashMap`s and `HashSet`s in places where the order decides the result
(which of several members keeps an extra partition, which earlier move is undone). A `HashMap`
without removals-then-reinsertions iterates its keys by bucket (`hash ^ hash >>> 16` masked by
the table size) and, inside a bucket, by insertion; resizing splits buckets without reordering
them. `JavaHashSet` tracks exactly that: the insertion sequence and the table size (default 16,
doubled past a 0.75 load, or when a bucket reaches nine entries in a table under 64). Treeified
buckets (nine colliding keys in a table of 64 or more) are not modelled: their order is treated
as insertion order.

Strings compare by UTF-16 code units in Java; `java_key` gives Python the same order.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from functools import lru_cache
from typing import Final, Generic, TypeVar

from krafka.structs import TopicPartition

K = TypeVar("K")

_MASK: Final = 0xFFFFFFFF
_DEFAULT_CAPACITY: Final = 16
_TREEIFY_BIN: Final = 9
_MIN_TREEIFY_CAPACITY: Final = 64


@lru_cache(maxsize=8192)
def string_hash(text: str) -> int:
    """`String.hashCode()` as an unsigned 32-bit value."""
    units = text.encode("utf-16-be", "surrogatepass")
    value = 0
    for i in range(0, len(units), 2):
        value = (31 * value + (units[i] << 8 | units[i + 1])) & _MASK
    return value


def topic_partition_hash(tp: TopicPartition) -> int:
    """`TopicPartition.hashCode()` as an unsigned 32-bit value."""
    return (31 * ((31 + tp.partition) & _MASK) + string_hash(tp.topic)) & _MASK


@lru_cache(maxsize=8192)
def java_key(text: str) -> bytes:
    """A sort key ordering strings as `String.compareTo` does (UTF-16 code units)."""
    return text.encode("utf-16-be", "surrogatepass")


def _spread(value: int) -> int:
    return value ^ (value >> 16)


class JavaHashSet(Generic[K]):
    """A set that iterates in the order a `java.util.HashSet` with the same history would."""

    __slots__ = ("_bins", "_capacity", "_hash", "_next_seq", "_seq")

    def __init__(self, hash_fn: Callable[[K], int], items: Iterable[K] = ()) -> None:
        self._hash = hash_fn
        self._seq: dict[K, tuple[int, int]] = {}
        self._bins: dict[int, int] = {}
        self._capacity = _DEFAULT_CAPACITY
        self._next_seq = 0
        for item in items:
            self.add(item)

    def _bucket(self, spread: int) -> int:
        return spread & (self._capacity - 1)

    def _resize(self) -> None:
        self._capacity *= 2
        self._bins = {}
        for spread, _ in self._seq.values():
            bucket = self._bucket(spread)
            self._bins[bucket] = self._bins.get(bucket, 0) + 1

    def add(self, item: K) -> None:
        if item in self._seq:
            return
        spread = _spread(self._hash(item))
        self._seq[item] = (spread, self._next_seq)
        self._next_seq += 1
        bucket = self._bucket(spread)
        self._bins[bucket] = self._bins.get(bucket, 0) + 1
        if self._bins[bucket] >= _TREEIFY_BIN and self._capacity < _MIN_TREEIFY_CAPACITY:
            self._resize()
        if len(self._seq) > self._capacity * 3 // 4:
            self._resize()

    def discard(self, item: K) -> None:
        entry = self._seq.pop(item, None)
        if entry is not None:
            self._bins[self._bucket(entry[0])] -= 1

    def _order(self, item: K) -> tuple[int, int]:
        spread, seq = self._seq[item]
        return self._bucket(spread), seq

    def first(self) -> K:
        """What `iterator().next()` returns; raises `KeyError` when empty."""
        if not self._seq:
            raise KeyError("empty set")
        return min(self._seq, key=self._order)

    def __iter__(self) -> Iterator[K]:
        return iter(sorted(self._seq, key=self._order))

    def __len__(self) -> int:
        return len(self._seq)

    def __contains__(self, item: object) -> bool:
        return item in self._seq


def hash_map_order(keys: Iterable[str]) -> list[str]:
    """The iteration order of a default `HashMap<String, _>` after `put`s in `keys` order."""
    return list(JavaHashSet(string_hash, keys))


__all__ = [
    "JavaHashSet",
    "hash_map_order",
    "java_key",
    "string_hash",
    "topic_partition_hash",
]
