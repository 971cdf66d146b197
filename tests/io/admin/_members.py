"""Real group members for admin tests: librdkafka consumers (confluent-kafka) polling in a
thread of their own, so groups have live members while the admin client looks at them."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


def produce(bootstrap: str, topic: str, partitions: Mapping[int, int]) -> None:
    """Write `count` records to each partition (librdkafka, acks=all)."""
    import confluent_kafka

    producer = confluent_kafka.Producer({"bootstrap.servers": bootstrap, "acks": "all"})
    for partition, count in partitions.items():
        for i in range(count):
            producer.produce(
                topic, b"v%d" % i, partition=partition, timestamp=1_700_000_000_000 + i
            )
    assert producer.flush(30) == 0


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
