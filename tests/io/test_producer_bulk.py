"""`Producer.send_many` on Apache Kafka and Tansu, read back independently by librdkafka:
order, partitions (the same as `send`'s), back-pressure, refusals before anything is appended,
and one handle that fails with the first failure."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _producer_support import consume, unique

from krafka import AdminClient, NewTopic, Producer
from krafka.codec import murmur2_partition
from krafka.errors import InvalidStateError, KafkaTimeoutError, MessageTooLargeError

pytestmark = [pytest.mark.anyio, pytest.mark.broker, pytest.mark.timeout(60)]


async def test_records_arrive_in_order_on_the_partitions_send_would_pick(broker: Any) -> None:
    topic = unique("bulk-keys")
    keys = [b"key-%d" % (i % 37) if i % 5 else None for i in range(3000)]
    values = [b"value-%d" % i for i in range(3000)]
    async with Producer(
        bootstrap_servers=broker.bootstrap_servers, batch_size=4096, linger=0.001
    ) as producer:
        count = len(await producer.partitions_for(topic))
        bulk = await producer.send_many(topic, values, keys)
        assert await bulk == 3000 and bulk.done and bulk.exception() is None
    messages = await anyio.to_thread.run_sync(
        lambda: consume(broker.bootstrap_servers, topic, 3000, partitions=tuple(range(count)))
    )
    assert sorted(m.value() for m in messages) == sorted(values)
    for message in messages:
        if message.key() is not None:
            assert message.partition() == murmur2_partition(message.key(), count)
    for partition in range(count):
        got = [m.value() for m in messages if m.partition() == partition]
        assert got == [v for v in values if v in set(got)]  # each partition in send order


async def test_explicit_partitions_headers_and_timestamps(broker: Any) -> None:
    topic = unique("bulk-columns")
    values = [b"v%d" % i for i in range(200)]
    parts = [i % 3 for i in range(200)]
    headers = [[("i", b"%d" % i)] if i % 2 else None for i in range(200)]
    stamps = [1_700_000_000_000 + i for i in range(200)]
    async with Producer(bootstrap_servers=broker.bootstrap_servers) as producer:
        first = await producer.send_many(topic, values, partition=parts, timestamps=stamps)
        second = await producer.send_many(topic, values, partition=3, headers=headers)
        assert (await first, await second) == (200, 200)
    messages = await anyio.to_thread.run_sync(
        lambda: consume(broker.bootstrap_servers, topic, 400, partitions=(0, 1, 2, 3))
    )
    for partition in range(3):
        got = [(m.value(), m.timestamp()[1]) for m in messages if m.partition() == partition]
        sent = zip(values, parts, stamps, strict=True)
        assert got == [(v, s) for v, p, s in sent if p == partition]
    last = [m for m in messages if m.partition() == 3]
    assert [m.value() for m in last] == values
    assert [m.headers() for m in last[:2]] == [None, [("i", b"1")]]


async def test_a_small_buffer_applies_back_pressure_and_delivers_everything(broker: Any) -> None:
    topic = unique("bulk-pressure")
    values = [b"%06d" % i * 20 for i in range(3000)]  # 360 KB through a 20 KB buffer
    async with Producer(
        bootstrap_servers=broker.bootstrap_servers, buffer_memory=20_000, batch_size=4000
    ) as producer:
        bulk = await producer.send_many(topic, values, partition=0)
        assert await bulk == 3000
        assert producer.engine.accumulator.buffered == 0
    messages = await anyio.to_thread.run_sync(
        lambda: consume(broker.bootstrap_servers, topic, 3000)
    )
    assert [m.value() for m in messages] == values


async def test_what_send_refuses_raises_before_any_record_is_appended(broker: Any) -> None:
    topic = unique("bulk-refused")
    producer = Producer(bootstrap_servers=broker.bootstrap_servers, max_request_size=10_000)
    with pytest.raises(InvalidStateError, match="not started"):
        await producer.send_many(topic, [b"v"])
    async with producer:
        with pytest.raises(MessageTooLargeError, match="max_request_size") as too_large:
            await producer.send_many(topic, [b"a", b"b", b"x" * 20_000, b"c"], partition=0)
        assert too_large.value.__notes__ == ["send_many: record 2"]
        with pytest.raises(TypeError, match="encode it"):
            await producer.send_many(topic, [b"a", "text"], partition=0)  # type: ignore[list-item]
        with pytest.raises(ValueError, match="2 values but 1 keys"):
            await producer.send_many(topic, [b"a", b"b"], [b"k"])
        with pytest.raises(ValueError, match="4 partitions"):
            await producer.send_many(topic, [b"a", b"b"], partition=[0, 4])
        assert producer.metrics().records_sent == 0
        assert await (await producer.send_many(topic, [])) == 0
        assert await (await producer.send_many(topic, [b"only"], partition=0)) == 1
    messages = await anyio.to_thread.run_sync(lambda: consume(broker.bootstrap_servers, topic, 1))
    assert [m.value() for m in messages] == [b"only"]
    with pytest.raises(InvalidStateError, match="closed"):
        await producer.send_many(topic, [b"v"])


async def test_the_handle_fails_with_the_first_failure(broker: Any) -> None:
    topic = unique("bulk-failed")
    producer = Producer(bootstrap_servers=broker.bootstrap_servers, linger=30.0)
    async with producer:
        await producer.partitions_for(topic)
        bulk = await producer.send_many(topic, [b"v%d" % i for i in range(100)], partition=1)
        assert not bulk.done
        await producer.close(timeout=0)  # the records still linger: they fail
    assert bulk.done
    with pytest.raises(KafkaTimeoutError, match="closed before delivery") as failed:
        await bulk
    assert "the first in " + topic + "-1" in failed.value.__notes__[0]


async def test_a_batch_split_by_the_broker_settles_through_its_halves(kafka: Any) -> None:
    """Apache Kafka refuses a batch over the topic's `max.message.bytes` (MESSAGE_TOO_LARGE):
    the producer splits it until the record too large for the topic fails alone."""
    topic = unique("bulk-split")
    async with AdminClient(bootstrap_servers=kafka.bootstrap_servers) as admin:
        await admin.create_topics([NewTopic(topic, 1, 1, {"max.message.bytes": "3000"})])
    values = [b"%04d" % i * 50 for i in range(40)]  # 200 B each: 8 KB in one batch
    async with Producer(bootstrap_servers=kafka.bootstrap_servers, linger=0.05) as producer:
        fits = await producer.send_many(topic, values, partition=0)
        assert await fits == 40
        broken = await producer.send_many(topic, [*values, b"x" * 5000], partition=0)
        with pytest.raises(MessageTooLargeError):
            await broken
    messages = await anyio.to_thread.run_sync(lambda: consume(kafka.bootstrap_servers, topic, 80))
    assert [m.value() for m in messages] == values * 2


async def test_with_tracing_on_every_record_carries_the_callers_context(
    broker: Any, provider: Any
) -> None:
    topic = unique("bulk-traced")
    tracer = provider.get_tracer("test")
    async with Producer(
        bootstrap_servers=broker.bootstrap_servers, tracer_provider=provider
    ) as producer:
        with tracer.start_as_current_span("job") as job:
            bulk = await producer.send_many(topic, [b"a", b"b"], partition=0)
        untraced = await producer.send_many(topic, [b"c"], partition=0)
        assert (await bulk, await untraced) == (2, 1)
    context = job.get_span_context()
    flags = int(context.trace_flags)
    parent = f"00-{context.trace_id:032x}-{context.span_id:016x}-{flags:02x}".encode()
    messages = await anyio.to_thread.run_sync(lambda: consume(broker.bootstrap_servers, topic, 3))
    assert [m.headers() for m in messages] == [[("traceparent", parent)]] * 2 + [None]
