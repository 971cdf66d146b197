"""Bad application input to the consumer: an interceptor that raises (or returns nothing) never
loses a record, and an illegal topic is refused at `assign`/`subscribe` without harm."""

from __future__ import annotations

import uuid
from typing import Any

import anyio
import pytest

from krafka import Consumer, ConsumerRecord, Producer, TopicPartition
from krafka.errors import InvalidTopicError

pytestmark = [pytest.mark.anyio, pytest.mark.broker, pytest.mark.timeout(60)]

COUNT = 20


class Flaky:
    """Raises on its first call, returns None on its second, then passes records through."""

    def __init__(self) -> None:
        self.calls = 0

    def on_consume(self, records: list[ConsumerRecord]) -> list[ConsumerRecord] | None:
        self.calls += 1
        if self.calls == 1:
            raise RuntimeError("interceptor bug")
        return None if self.calls == 2 else records


async def test_a_failing_consumer_interceptor_loses_no_record(broker: Any) -> None:
    topic = f"intercepted-{uuid.uuid4().hex[:8]}"
    async with Producer(broker.bootstrap_servers, linger=0) as producer:
        for i in range(COUNT):
            await producer.send(topic, b"%d" % i, partition=0)
        await producer.flush()
    flaky = Flaky()
    async with Consumer(
        broker.bootstrap_servers,
        auto_offset_reset="earliest",
        fetch_max_wait=0.1,
        max_poll_records=5,
        interceptors=[flaky],
    ) as consumer:
        await consumer.assign([TopicPartition(topic, 0)])
        got: list[bytes] = []
        with anyio.fail_after(20):
            while len(got) < COUNT:
                got += [r.value for r in await consumer.poll(0.5)]
    assert got == [b"%d" % i for i in range(COUNT)]
    assert flaky.calls >= 3


async def test_an_illegal_topic_is_refused_and_the_consumer_goes_on(broker: Any) -> None:
    topic = f"legal-{uuid.uuid4().hex[:8]}"
    async with Producer(broker.bootstrap_servers, linger=0) as producer:
        await producer.send_and_wait(topic, b"v", partition=0)
    async with Consumer(
        broker.bootstrap_servers, auto_offset_reset="earliest", fetch_max_wait=0.1
    ) as consumer:
        for bad, error in [
            (None, TypeError),
            ("bad topic", InvalidTopicError),
            ("", InvalidTopicError),
        ]:
            with pytest.raises(error, match="topic"):
                await consumer.assign([TopicPartition(bad, 0)])  # type: ignore[arg-type]
        with pytest.raises(ValueError, match="partition"):
            await consumer.assign([TopicPartition(topic, -1)])
        await consumer.assign([TopicPartition(topic, 0)])
        with anyio.fail_after(20):
            while not (records := await consumer.poll(0.5)):
                pass
    assert [r.value for r in records] == [b"v"]
