"""murmur2 exactly as Kafka's Java client computes it (`Utils.murmur2`), for partitioning.

The same key maps to the same partition as with the Java client and librdkafka's
`murmur2_random` partitioner.
"""

from __future__ import annotations

Buffer = bytes | bytearray | memoryview

_SEED = 0x9747B28C
_M = 0x5BD1E995
_MASK = 0xFFFFFFFF


def murmur2(data: Buffer) -> int:
    """The Java client's murmur2 hash of `data` as a signed 32-bit int."""
    data = bytes(data)
    length = len(data)
    h = (_SEED ^ length) & _MASK
    full = length & ~3
    for i in range(0, full, 4):
        k = data[i] | (data[i + 1] << 8) | (data[i + 2] << 16) | (data[i + 3] << 24)
        k = (k * _M) & _MASK
        k ^= k >> 24
        k = (k * _M) & _MASK
        h = (h * _M) & _MASK
        h ^= k
    rest = length & 3
    if rest == 3:
        h ^= data[full + 2] << 16
    if rest >= 2:
        h ^= data[full + 1] << 8
    if rest >= 1:
        h ^= data[full]
        h = (h * _M) & _MASK
    h ^= h >> 13
    h = (h * _M) & _MASK
    h ^= h >> 15
    return h - (1 << 32) if h & 0x80000000 else h


def murmur2_partition(key: Buffer, num_partitions: int) -> int:
    """Java's default partition for a non-null key: `toPositive(murmur2(key)) % n`."""
    if num_partitions <= 0:
        raise ValueError("num_partitions must be positive")
    return (murmur2(key) & 0x7FFFFFFF) % num_partitions
