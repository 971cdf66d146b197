"""OpenTelemetry tracing (`krafka.io.tracing`) of the sync facade and the share consumer, and
the `traceparent` header as librdkafka and Java's KafkaConsumer see it (Apache Kafka)."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import krafka.sync
from krafka import Producer, ShareConsumer
from krafka.testing.javapeer import java_consume

pytestmark = pytest.mark.anyio
SpanKind = trace.SpanKind


def named(exporter: InMemorySpanExporter, name: str) -> list[ReadableSpan]:
    return [s for s in exporter.get_finished_spans() if s.name == name]


def traceparent_of(span: Any) -> bytes:
    context = span.get_span_context()
    flags = int(context.trace_flags)
    return f"00-{context.trace_id:032x}-{context.span_id:016x}-{flags:02x}".encode()


def librdkafka_headers(bootstrap: str, topic: str) -> dict[str, bytes]:
    import confluent_kafka

    reader = confluent_kafka.Consumer(
        {"bootstrap.servers": bootstrap, "group.id": f"r-{time.time_ns()}"}
    )
    try:
        reader.assign([confluent_kafka.TopicPartition(topic, 0, 0)])
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            found = reader.poll(0.5)
            if found is not None and found.error() is None:
                return dict(found.headers() or [])
    finally:
        reader.close()
    raise AssertionError("librdkafka read nothing")


@pytest.mark.parametrize("trace_records", [False, True], ids=["batches", "records"])
def test_sync_clients_and_peers_see_traceparent(
    kafka: Any, provider: TracerProvider, exporter: InMemorySpanExporter, trace_records: bool
) -> None:
    """The sync producer's record carries the calling thread's span (default mode) or its own
    `send` span, child of that one (`trace_records`); librdkafka and Java's KafkaConsumer see
    that `traceparent`; the sync consumer's `for`, `poll()` list and `recv()` make the traced
    records' process spans current on the caller's thread."""
    topic = f"otel-sync-{time.time_ns()}"
    tracer = provider.get_tracer("app")
    with (
        krafka.sync.Producer(
            kafka.bootstrap_servers, tracer_provider=provider, trace_records=trace_records
        ) as producer,
        tracer.start_as_current_span("job") as job,
    ):
        for value in (b"0", b"1", b"2"):
            producer.send(topic, value, partition=0).result(timeout=20)
    (send, *_) = named(exporter, f"send {topic}")
    carrier = send if trace_records else job
    if trace_records:
        assert send.kind is SpanKind.PRODUCER
        assert send.parent is not None and send.parent.span_id == job.get_span_context().span_id
        assert (send.attributes or {})["messaging.kafka.offset"] == 0
    else:
        assert send.kind is SpanKind.CLIENT
        assert [link.context.span_id for link in send.links] == [job.get_span_context().span_id]
    expected = traceparent_of(carrier)
    assert librdkafka_headers(kafka.bootstrap_servers, topic)["traceparent"] == expected
    (java, *_) = java_consume(kafka.bootstrap_servers, [topic], count=1, timeout=60)
    assert dict(java.headers)["traceparent"] == expected

    exporter.clear()
    with krafka.sync.Consumer(
        kafka.bootstrap_servers,
        group_id=f"g-{time.time_ns()}",
        auto_offset_reset="earliest",
        max_poll_records=1,
        tracer_provider=provider,
    ) as consumer:
        consumer.subscribe([topic])
        for _ in consumer:
            in_for = trace.get_current_span().get_span_context()
            break
        records: list[Any] = []
        while not records:
            records = consumer.poll(5.0)
        for _ in records:
            in_list = trace.get_current_span().get_span_context()
        record = consumer.recv()
        after_recv = trace.get_current_span().get_span_context()
    assert record.offset == 2
    assert not trace.get_current_span().get_span_context().is_valid  # close() ended it here
    processes = named(exporter, f"process {topic}")
    assert [p.context.span_id for p in processes] == [
        in_for.span_id,
        in_list.span_id,
        after_recv.span_id,
    ]
    for process in processes:
        assert [link.context.span_id for link in process.links] == [
            carrier.get_span_context().span_id
        ] or trace_records


async def test_share_consumer(
    kafka: Any, provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    """A share consumer's traced records get process spans linked to their senders' spans in
    `async for`, while a `poll()` list is iterated and after `anext(consumer)` (the sync
    one's `next(consumer)` too); its acknowledgements are committed in an `ack {group}`
    settle span sent to the partition's leader."""
    sys.path.insert(0, str(Path(__file__).parent / "share"))
    from _share_env import kafka_share_env

    env = await kafka_share_env(kafka, 1)
    tracer = provider.get_tracer("app")
    async with Producer(env.bootstrap_servers, tracer_provider=provider) as producer:
        with tracer.start_as_current_span("job") as job:
            await producer.send_and_wait(env.topic, b"job", key=b"j")
            await producer.send_and_wait(env.topic, b"job2", key=b"j")
        await producer.send_and_wait(env.topic, b"untraced", key=b"j")
        with tracer.start_as_current_span("job3") as job3:
            await producer.send_and_wait(env.topic, b"job3", key=b"j")
            await producer.send_and_wait(env.topic, b"sync", key=b"j")
    async with ShareConsumer(
        env.bootstrap_servers,
        group_id=env.group,
        acknowledgement_mode="explicit",
        fetch_max_wait=0.1,
        max_poll_records=1,
        tracer_provider=provider,
    ) as consumer:
        await consumer.subscribe([env.topic])
        async for record in consumer:
            assert trace.get_current_span().is_recording()
            consumer.acknowledge(record)
            break
        assert await consumer.commit_sync(timeout=10)
        currents = []
        while len(currents) < 2:
            for record in await consumer.poll(5.0):
                currents.append(trace.get_current_span().get_span_context())
                consumer.acknowledge(record)
        assert await consumer.commit_sync(timeout=10)
        record = await anext(consumer)
        after_anext = trace.get_current_span().get_span_context()
        assert record.value == b"job3"
        consumer.acknowledge(record)
        assert await consumer.commit_sync(timeout=10)
    with krafka.sync.ShareConsumer(
        env.bootstrap_servers, group_id=env.group, fetch_max_wait=0.1, tracer_provider=provider
    ) as blocking:
        blocking.subscribe([env.topic])
        assert next(blocking).value == b"sync"
        after_next = trace.get_current_span().get_span_context()
    assert not trace.get_current_span().get_span_context().is_valid  # close() ended it
    (*processes, in_sync) = named(exporter, f"process {env.topic}")
    assert after_next.span_id == in_sync.context.span_id
    assert [link.context.span_id for link in in_sync.links] == [job3.context.span_id]
    with pytest.raises(StopIteration):
        next(blocking)
    assert len(processes) == 3
    assert currents[0].span_id == processes[1].context.span_id and not currents[1].is_valid
    assert after_anext.span_id == processes[2].context.span_id  # current until the next call
    for process, sender in zip(processes, (job, job, job3), strict=True):
        assert process.kind is SpanKind.CONSUMER
        assert (process.attributes or {})["messaging.consumer.group.name"] == env.group
        assert [link.context.span_id for link in process.links] == [sender.context.span_id]
    (ack, *_) = named(exporter, f"ack {env.group}")
    assert ack.kind is SpanKind.CLIENT
    attributes = dict(ack.attributes or {})
    assert attributes["messaging.operation.name"] == "ack"
    assert attributes["messaging.operation.type"] == "settle"
    host, port = env.bootstrap_servers.split(",")[0].rsplit(":", 1)
    assert (attributes["server.address"], attributes["server.port"]) == (host, int(port))
    assert named(exporter, f"poll {env.topic}")
