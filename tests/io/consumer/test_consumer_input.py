"""Bad application input to the consumer: an interceptor that raises (or returns nothing) never
loses a record, and an illegal topic is refused at `assign`/`subscribe` without harm."""

from __future__ import annotations

import uuid
from typing import Any

import anyio
import pytest

from krafka import Consumer, ConsumerRecord, Producer, TopicPartition
from krafka.errors import IllegalStateError, InvalidTopicError, UnknownTopicOrPartitionError

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


async def test_wrong_argument_types_are_named_in_the_call(broker: Any) -> None:
    """A single partition where a list is wanted, a topic name where a partition is, a str
    partition or offset: `TypeError` from the call itself, naming the call and the argument,
    and the consumer goes on."""
    topic = f"typed-{uuid.uuid4().hex[:8]}"
    tp = TopicPartition(topic, 0)
    async with Producer(broker.bootstrap_servers, linger=0) as producer:
        await producer.send_and_wait(topic, b"v", partition=0)
    async with Consumer(
        broker.bootstrap_servers, auto_offset_reset="earliest", fetch_max_wait=0.1, group_id=topic
    ) as consumer:
        with pytest.raises(TypeError, match=r"committed\(partitions\).*not a single one"):
            await consumer.committed(tp)  # type: ignore[arg-type]
        with pytest.raises(TypeError, match=rf"assign\(partitions\): '{topic}' is a topic name"):
            await consumer.assign([topic])  # type: ignore[list-item]
        with pytest.raises(TypeError, match=rf"assign\(partitions\).*subscribe\(\['{topic}'\]\)"):
            await consumer.assign(topic)  # type: ignore[arg-type]
        with pytest.raises(TypeError, match=rf"the partition of '{topic}' is an int, not str"):
            await consumer.assign([TopicPartition(topic, "0")])  # type: ignore[arg-type]
        assert consumer.assignment() == set()
        await consumer.assign([tp])
        with pytest.raises(TypeError, match=r"seek\(offset\) is an int, not str"):
            await consumer.seek(tp, "0")  # type: ignore[arg-type]
        with pytest.raises(TypeError, match=rf"position\(partition\): '{topic}' is a topic name"):
            await consumer.position(topic)  # type: ignore[arg-type]
        with pytest.raises(TypeError, match=rf"commit\(offsets\): the offset of {tp} is an int"):
            await consumer.commit({tp: "1"})  # type: ignore[dict-item]
        with pytest.raises(TypeError, match=rf"commit\(offsets\): '{topic}' is a topic name"):
            await consumer.commit({topic: 1})  # type: ignore[dict-item]
        with anyio.fail_after(20):
            while not (records := await consumer.poll(0.5)):
                pass
        assert [r.value for r in records] == [b"v"]
        assert await consumer.committed([tp]) == {tp: None}


async def test_poll_before_subscribe_or_assign_raises(broker: Any) -> None:
    """Java's IllegalStateException: a poll with nothing to read fails at once instead of
    returning [] (or waiting) for ever."""
    async with Consumer(broker.bootstrap_servers, fetch_max_wait=0.1) as consumer:
        expected = "not subscribed to any topics or assigned any partitions"
        with pytest.raises(IllegalStateError, match=expected):
            await consumer.poll(1.0)
        with pytest.raises(IllegalStateError, match=expected):
            await consumer.recv()
        with pytest.raises(IllegalStateError, match=expected):
            await consumer.poll_batches(1.0)
        with pytest.raises(IllegalStateError, match=expected):
            async for _ in consumer:
                pass
        await consumer.assign([TopicPartition(f"later-{uuid.uuid4().hex[:8]}", 0)])
        assert await consumer.poll(0.1) == []
        await consumer.unsubscribe()
        with pytest.raises(IllegalStateError, match=expected):
            await consumer.poll(0.1)


async def test_an_assigned_partition_the_topic_lacks_fails_the_poll(broker: Any) -> None:
    """`assign([TopicPartition("orders", 99)])` on a 4-partition topic: the next poll after
    metadata arrives raises naming the partition and the topic's count (the consumer used to
    wait for a leader of it for ever); the other assigned partitions are still read."""
    topic = f"four-{uuid.uuid4().hex[:8]}"
    async with Producer(broker.bootstrap_servers, linger=0) as producer:
        await producer.send_and_wait(topic, b"v", partition=0)
    async with Consumer(
        broker.bootstrap_servers, auto_offset_reset="earliest", fetch_max_wait=0.1
    ) as consumer:
        await consumer.assign([TopicPartition(topic, 0), TopicPartition(topic, 99)])
        got: list[bytes] = []
        with (
            anyio.fail_after(20),
            pytest.raises(UnknownTopicOrPartitionError) as info,
        ):
            while True:
                got += [r.value for r in await consumer.poll(0.5)]
        assert f"{topic}-99 does not exist: '{topic}' has 4 partitions (0..3)" in str(info.value)
        await consumer.assign([TopicPartition(topic, 0)])
        with anyio.fail_after(20):
            while not got:
                got += [r.value for r in await consumer.poll(0.5)]
    assert got == [b"v"]
