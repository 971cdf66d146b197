"""Partitioners: Java-exact murmur2 for keys, KIP-480 sticky null keys, round-robin, callables."""

from __future__ import annotations

import random
from typing import Any

import pytest

from krafka.codec import murmur2_partition
from krafka.sansio.partitioner import (
    CallablePartitioner,
    DefaultPartitioner,
    RoundRobinPartitioner,
    make_partitioner,
)

# Kafka's UtilsTest.testMurmur2 vectors: Java's Utils.murmur2 of each key.
JAVA_HASHES = [
    (b"21", -973932308),
    (b"foobar", -790332482),
    (b"a-little-bit-long-string", -985981536),
    (b"a-little-bit-longer-string", -1486304829),
    (b"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8", -58897971),
    (b"abc", 479470107),
]


@pytest.mark.parametrize(("key", "java_hash"), JAVA_HASHES)
@pytest.mark.parametrize("n", [1, 3, 4, 7, 100])
def test_keyed_records_use_java_murmur2(key: bytes, java_hash: int, n: int) -> None:
    expected = (java_hash & 0x7FFFFFFF) % n  # Java's toPositive(murmur2(key)) % n
    assert DefaultPartitioner().partition("t", key, n) == expected == murmur2_partition(key, n)


def test_same_key_same_partition_regardless_of_history() -> None:
    p = DefaultPartitioner()
    first = [p.partition("t", b"key-%d" % i, 7) for i in range(100)]
    p.on_batch_sealed("t", 3, 7)
    assert [p.partition("t", b"key-%d" % i, 7) for i in range(100)] == first


def test_null_keys_stick_until_a_batch_for_the_sticky_partition_is_sealed() -> None:
    choices = iter([2, 0, 2])
    p = DefaultPartitioner(rand=lambda n: next(choices))
    assert {p.partition("t", None, 4) for _ in range(50)} == {2}
    p.on_batch_sealed("t", 1, 4)  # another partition's batch: no change
    assert p.partition("t", None, 4) == 2
    p.on_batch_sealed("t", 2, 4)  # the sticky one: move, never to the same partition
    assert p.partition("t", None, 4) == 0
    p.on_batch_sealed("t", 0, 4)
    assert p.partition("t", None, 4) == 3  # choice 2 of the 3 others skips 0 -> 3
    assert p.choices == {"t": 3}  # what the compiled appender reads for a null key


def test_sticky_is_per_topic_and_spreads_over_partitions() -> None:
    p = DefaultPartitioner()
    seen = set()
    for _ in range(200):
        seen.add(p.partition("a", None, 4))
        p.on_batch_sealed("a", p.partition("a", None, 4), 4)
    assert seen == {0, 1, 2, 3}
    assert p.partition("b", None, 1) == 0


def test_sticky_partition_beyond_a_shrunk_topic_is_repicked() -> None:
    p = DefaultPartitioner(rand=lambda n: n - 1)
    assert p.partition("t", None, 8) == 7
    assert p.partition("t", None, 2) == 1


def test_round_robin_ignores_keys() -> None:
    p = RoundRobinPartitioner()
    assert [p.partition("t", b"same", 3) for _ in range(7)] == [0, 1, 2, 0, 1, 2, 0]
    assert p.partition("other", None, 3) == 0


def test_callable_partitioner_is_range_checked() -> None:
    p = CallablePartitioner(lambda topic, key, n: len(key or b"") % n)
    assert p.partition("t", b"abcd", 3) == 1
    bad = CallablePartitioner(lambda topic, key, n: n)
    with pytest.raises(ValueError, match="chose 3"):
        bad.partition("t", None, 3)


def test_make_partitioner() -> None:
    assert isinstance(make_partitioner(None), DefaultPartitioner)
    assert isinstance(make_partitioner("murmur2_random"), DefaultPartitioner)
    assert isinstance(make_partitioner("round-robin"), RoundRobinPartitioner)
    assert isinstance(make_partitioner(lambda t, k, n: 0), CallablePartitioner)
    custom = RoundRobinPartitioner()
    assert make_partitioner(custom) is custom
    with pytest.raises(ValueError, match="unknown partitioner"):
        make_partitioner("crc32")


LIBRDKAFKA_HASHED = ["consistent_random", "consistent", "murmur2", "murmur2_random", "fnv1a",
                     "fnv1a_random"]  # fmt: skip


def _librdkafka_partitions(name: str, keys: list[bytes | None], partitions: int) -> list[int]:
    """The partition librdkafka's producer (`partitioner=name`) gives each key, read from its
    delivery reports from librdkafka's mock cluster."""
    confluent_kafka = pytest.importorskip("confluent_kafka")
    from krafka.testing.mockcluster import MockCluster

    chosen: dict[int, int] = {}
    with MockCluster(1, topics={"keys": partitions}) as cluster:
        producer = confluent_kafka.Producer(
            {"bootstrap.servers": cluster.bootstrap_servers, "partitioner": name,
             "linger.ms": 5, "acks": 1}
        )  # fmt: skip
        for i, key in enumerate(keys):

            def report(err: Any, msg: Any, i: int = i) -> None:
                assert err is None, err
                chosen[i] = msg.partition()

            producer.produce("keys", b"", key, on_delivery=report)
            producer.poll(0)
        assert producer.flush(30) == 0
        del producer  # before its cluster goes
    return [chosen[i] for i in range(len(keys))]


@pytest.mark.parametrize("name", LIBRDKAFKA_HASHED)
def test_librdkafka_partitioners_choose_what_librdkafka_chooses(name: str) -> None:
    rng = random.Random(name)
    keys: list[bytes | None] = [rng.randbytes(rng.randrange(1, 40)) for _ in range(10_000)]
    if not name.endswith("_random"):
        keys += [None, b""]  # hashed too: always the same partition
    elif name == "murmur2_random" or name == "fnv1a_random":
        keys += [b""]  # only null keys are random
    partitions = 13
    ours = make_partitioner(name)
    assert [ours.partition("keys", key, partitions) for key in keys] == _librdkafka_partitions(
        name, keys, partitions
    )


@pytest.mark.parametrize(
    ("name", "random_keys"),
    [("consistent_random", [None, b""]), ("murmur2_random", [None]), ("fnv1a_random", [None])],
)
def test_random_variants_stick_keyless_records_to_a_random_partition(
    name: str, random_keys: list[bytes | None]
) -> None:
    for key in random_keys:
        seen = set()
        for _ in range(200):
            p = make_partitioner(name)
            first = p.partition("t", key, 16)
            assert p.partition("t", key, 16) == first  # sticky until its batch is sealed
            p.on_batch_sealed("t", first, 16)
            assert p.partition("t", key, 16) != first
            seen.add(first)
        assert len(seen) > 8
