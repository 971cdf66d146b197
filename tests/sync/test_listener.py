"""A sync consumer's rebalance listener runs on the thread that polls, as Java's does, so it may
call the consumer (`commit` in `on_partitions_revoked`, Java's usual pattern)."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from krafka import TopicPartition
from krafka.sync import Consumer, Producer

COUNT = 10


class Committing:
    """Notes where each callback ran; commits what was consumed when partitions are revoked."""

    def __init__(self) -> None:
        self.consumer: Consumer | None = None
        self.calls: list[tuple[str, threading.Thread]] = []

    def on_partitions_assigned(self, partitions: set[TopicPartition]) -> None:
        self.calls.append(("assigned", threading.current_thread()))

    def on_partitions_revoked(self, partitions: set[TopicPartition]) -> None:
        self.calls.append(("revoked", threading.current_thread()))
        assert self.consumer is not None
        self.consumer.commit()


@pytest.mark.broker
@pytest.mark.timeout(60)
@pytest.mark.parametrize("how", ["rebalance_listener", "subscribe"])
def test_callbacks_run_on_the_polling_thread_and_may_commit(broker: Any, how: str) -> None:
    bootstrap = broker.bootstrap_servers
    topic, group = f"listener-{time.time_ns()}", f"g-{time.time_ns()}"
    tp = TopicPartition(topic, 0)
    with Producer(bootstrap_servers=bootstrap) as producer:
        for i in range(COUNT):
            producer.send(topic, b"%d" % i, partition=0)
        producer.flush()
    listener = Committing()
    options: dict[str, Any] = dict(
        bootstrap_servers=bootstrap, group_id=group, auto_offset_reset="earliest",
        enable_auto_commit=False, session_timeout=6.0, heartbeat_interval=0.5,
    )  # fmt: skip
    if how == "rebalance_listener":
        options["rebalance_listener"] = listener
    consumer = Consumer(**options)
    listener.consumer = consumer
    consumer.subscribe([topic], **({"listener": listener} if how == "subscribe" else {}))
    seen = 0
    deadline = time.monotonic() + 40
    while seen < COUNT and time.monotonic() < deadline:
        seen += len(consumer.poll(1.0))
    consumer.close()
    assert seen == COUNT
    here = threading.current_thread()
    assert listener.calls == [("assigned", here), ("revoked", here)]
    with Consumer(bootstrap_servers=bootstrap, group_id=group) as check:
        assert check.committed([tp])[tp].offset == COUNT
