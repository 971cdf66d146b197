"""Real group members for admin tests: librdkafka consumers (confluent-kafka) polling in a
thread of their own, so groups have live members while the admin client looks at them."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Awaitable, Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, TypeVar

import anyio

T = TypeVar("T")


def is_kafka(broker: object) -> bool:
    """Whether the `broker` fixture's cluster is Apache Kafka (else Tansu)."""
    from krafka.testing.kafka import KafkaCluster

    return isinstance(broker, KafkaCluster)


async def eventually(
    look: Callable[[], Awaitable[T]], ok: Callable[[T], bool], timeout: float = 15.0
) -> T:
    """`look()` until `ok` holds of its answer. A real broker applies what its controller
    committed (topics created or deleted, configs, ACLs) to its metadata shortly after
    answering, so what a call changed shows in the next call's answer only eventually (for
    Java's AdminClient alike)."""
    with anyio.fail_after(timeout):
        while not ok(value := await look()):
            await anyio.sleep(0.1)
    return value


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


def produce(bootstrap: str, topic: str, partitions: Mapping[int, int]) -> int:
    """Write `count` records to each partition (librdkafka, acks=all), record i of a partition
    stamped `base + i` ms; returns `base`. It is a minute ago, not a fixed date: a real broker
    deletes records older than `retention.ms` (7 days) within a retention check."""
    import confluent_kafka

    base = int(time.time() * 1000) - 60_000
    producer = confluent_kafka.Producer({"bootstrap.servers": bootstrap, "acks": "all"})
    for partition, count in partitions.items():
        for i in range(count):
            producer.produce(topic, b"v%d" % i, partition=partition, timestamp=base + i)
    assert producer.flush(30) == 0
    return base


class Member:
    """One librdkafka consumer in `group`, subscribed to `topics`, polling until stopped."""

    def __init__(self, bootstrap: str, group: str, topics: list[str], **config: Any) -> None:
        import confluent_kafka

        classic = config.get("group.protocol", "classic") == "classic"
        timeouts = {"session.timeout.ms": 6000, "heartbeat.interval.ms": 500} if classic else {}
        self.consumer = confluent_kafka.Consumer(
            {
                "bootstrap.servers": bootstrap,
                "group.id": group,
                "auto.offset.reset": "earliest",
                "enable.auto.commit": False,
                **timeouts,
                **config,
            }
        )
        self.consumer.subscribe(topics)
        self.values: list[bytes] = []
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._poll, daemon=True)
        self._thread.start()

    def _poll(self) -> None:
        while not self._stop.is_set():
            with self._lock:
                message = self.consumer.poll(0.1)
            if message is not None and message.error() is None:
                self.values.append(message.value())

    def wait_assigned(self, timeout: float = 30.0) -> list[Any]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._lock:
                assignment = self.consumer.assignment()
            if assignment:
                return list(assignment)
            time.sleep(0.1)
        raise AssertionError("the librdkafka member got no assignment")

    def commit(self, topic: str, offsets: Mapping[int, int]) -> None:
        import confluent_kafka

        with self._lock:
            self.consumer.commit(
                offsets=[confluent_kafka.TopicPartition(topic, p, o) for p, o in offsets.items()],
                asynchronous=False,
            )

    def close(self) -> None:
        self._stop.set()
        self._thread.join(10)
        self.consumer.close()


@contextmanager
def member(bootstrap: str, group: str, topics: list[str], **config: Any) -> Iterator[Member]:
    m = Member(bootstrap, group, topics, **config)
    try:
        yield m
    finally:
        m.close()
