"""The blocking Consumer: in a plain thread, inside a running event loop, iteration, errors."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from krafka import TopicPartition
from krafka.errors import IllegalStateError
from krafka.sync import Consumer, Producer

pytestmark = [pytest.mark.broker, pytest.mark.timeout(60)]


def fill(bootstrap: str, topic: str, count: int) -> None:
    with Producer(bootstrap_servers=bootstrap) as producer:
        for i in range(count):
            producer.send(topic, b"%d" % i, partition=0)
        producer.flush()


def test_poll_iterate_commit_and_errors(broker: Any) -> None:
    topic, group = f"sync-{time.time_ns()}", f"g-{time.time_ns()}"
    tp = TopicPartition(topic, 0)
    fill(broker.bootstrap_servers, topic, 100)
    with Consumer(
        bootstrap_servers=broker.bootstrap_servers,
        group_id=group,
        auto_offset_reset="earliest",
        fetch_max_wait=0.1,
    ) as consumer:
        consumer.assign([tp])
        assert consumer.assignment() == {tp}
        got = []
        for record in consumer:
            got.append(record.offset)
            if len(got) == 100:
                break
        assert got == list(range(100))
        consumer.commit()
        assert consumer.committed([tp])[tp].offset == 100
        assert consumer.lag() == {tp: 0}
        consumer.seek(tp, 95)
        assert [r.offset for r in consumer.poll(5.0)] == [95, 96, 97, 98, 99]
        with pytest.raises(IllegalStateError):
            consumer.subscribe([topic])
    assert consumer.closed


def test_inside_a_running_event_loop(broker: Any) -> None:
    topic = f"sync-loop-{time.time_ns()}"
    fill(broker.bootstrap_servers, topic, 10)

    async def notebook_cell() -> list[int]:
        with Consumer(
            bootstrap_servers=broker.bootstrap_servers,
            auto_offset_reset="earliest",
            fetch_max_wait=0.1,
        ) as consumer:
            consumer.assign([TopicPartition(topic, 0)])
            out: list[int] = []
            while len(out) < 10:
                out += [r.offset for r in consumer.poll(1.0)]
            return out

    assert asyncio.run(notebook_cell()) == list(range(10))
