"""OpenTelemetry tracing (`krafka.io.tracing`) against Apache Kafka: the spans' names, kinds,
attributes and links as the messaging semantic conventions name them, the W3C trace context
carried from `send` to `process` in record headers (seen by librdkafka too), `async for` and the
sync `for` keeping each record's `process` span current, commits, and the share consumer."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import krafka.sync
from krafka import Consumer, Producer, ShareConsumer
from krafka.io.tracing import TraceContext, tracing_for
from krafka.testing.javapeer import java_consume

pytestmark = pytest.mark.anyio
SpanKind = trace.SpanKind


@pytest.fixture
def exporter() -> InMemorySpanExporter:
    return InMemorySpanExporter()


@pytest.fixture
def provider(exporter: InMemorySpanExporter) -> Iterator[TracerProvider]:
    made = TracerProvider()
    made.add_span_processor(SimpleSpanProcessor(exporter))
    yield made
    made.shutdown()


@pytest.fixture
def kafka_broker(kafka: Any) -> Any:
    """Apache Kafka alone: the spans are the client's, the same on any broker."""
    return kafka


def named(exporter: InMemorySpanExporter, name: str) -> list[ReadableSpan]:
    return [s for s in exporter.get_finished_spans() if s.name == name]


def topic_name(label: str) -> str:
    return f"otel-{label}-{time.time_ns()}"


def test_off_without_a_provider() -> None:
    """No provider given and none set globally (the API's proxy): tracing is off, so the
    clients keep their untraced paths."""
    assert tracing_for(None, "c", [("h", 1)]) is None
    assert Producer("127.0.0.1:1").tracing is None
    assert Producer("127.0.0.1:1").send.__func__ is Producer.send  # type: ignore[attr-defined]


def test_the_global_provider_and_no_import_without_it() -> None:
    """A global provider set before the client is made turns tracing on; a process that never
    imported OpenTelemetry does not get it imported by a client (zero cost when off)."""
    script = """
import sys
import krafka
assert krafka.Consumer("127.0.0.1:1").tracing is None
assert "opentelemetry" not in sys.modules
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
trace.set_tracer_provider(TracerProvider())
assert krafka.Producer("127.0.0.1:1").tracing is not None
assert krafka.ShareConsumer("127.0.0.1:1", group_id="g").tracing is not None
"""
    subprocess.run([sys.executable, "-c", script], check=True, timeout=60)


async def test_send_poll_process_commit(
    kafka_broker: Any, provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    topic, group = topic_name("flow"), f"g-{time.time_ns()}"
    host, port = kafka_broker.bootstrap_servers.split(",")[0].rsplit(":", 1)
    tracer = provider.get_tracer("app")
    async with Producer(
        kafka_broker.bootstrap_servers, client_id="p1", tracer_provider=provider
    ) as producer:
        with tracer.start_as_current_span("request") as request:
            meta = await producer.send_and_wait(topic, b"v", key=b"k1", partition=1,
                                                headers=[("h", b"1")])  # fmt: skip
            await producer.send_and_wait(topic, None, key=b"k2", partition=1)
    (send, tomb) = named(exporter, f"send {topic}")
    assert send.kind is SpanKind.PRODUCER
    assert send.parent is not None and send.parent.span_id == request.get_span_context().span_id
    assert dict(send.attributes or {}) == {
        "messaging.system": "kafka",
        "messaging.client.id": "p1",
        "messaging.operation.name": "send",
        "messaging.operation.type": "send",
        "messaging.destination.name": topic,
        "messaging.destination.partition.id": "1",
        "messaging.kafka.message.key": "k1",
        "messaging.kafka.offset": meta.offset,
        "server.address": host,
        "server.port": int(port),
    }
    assert tomb.attributes is not None and tomb.attributes["messaging.kafka.message.tombstone"]

    exporter.clear()
    seen: list[tuple[int, Any]] = []
    async with Consumer(
        kafka_broker.bootstrap_servers,
        group_id=group,
        client_id="c1",
        auto_offset_reset="earliest",
        enable_auto_commit=False,
        tracer_provider=provider,
    ) as consumer:
        await consumer.subscribe([topic])
        async for record in consumer:
            current = trace.get_current_span()
            seen.append((record.offset, current.get_span_context()))
            assert [h for h in record.headers if h[0] == "h"] == [("h", b"1")] or record.offset
            if len(seen) == 2:
                break
        await consumer.commit()
        await consumer.commit_async()
    assert (
        trace.get_current_span() is trace.INVALID_SPAN
        or not trace.get_current_span().is_recording()
    )

    processes = named(exporter, f"process {topic}")
    assert [p.attributes["messaging.kafka.offset"] for p in processes] == [0, 1]  # type: ignore[index]
    for (_, context), process in zip(seen, processes, strict=True):
        assert process.kind is SpanKind.CONSUMER
        assert context.span_id == process.context.span_id  # current in the loop body
        attributes = dict(process.attributes or {})
        assert attributes["messaging.operation.type"] == "process"
        assert attributes["messaging.consumer.group.name"] == group
        assert attributes["messaging.destination.partition.id"] == "1"
        assert attributes["messaging.client.id"] == "c1"
    first, second = processes
    assert first.parent is None
    assert [link.context.span_id for link in first.links] == [send.context.span_id]
    assert first.attributes is not None and first.attributes["messaging.kafka.message.key"] == "k1"
    assert second.attributes is not None and second.attributes["messaging.kafka.message.tombstone"]

    polls = [s for s in exporter.get_finished_spans() if s.name.startswith("poll")]
    assert polls and polls[0].name == f"poll {topic}" and polls[0].kind is SpanKind.CONSUMER
    assert polls[0].attributes is not None
    assert polls[0].attributes["messaging.operation.type"] == "receive"
    assert sum(p.attributes["messaging.batch.message_count"] for p in polls) == 2  # type: ignore[index,misc]

    commits = named(exporter, f"commit {group}")
    assert len(commits) == 2  # commit() and commit_async()
    for commit in commits:
        assert commit.kind is SpanKind.CLIENT
        assert commit.attributes is not None
        assert commit.attributes["messaging.operation.name"] == "commit"
        assert commit.attributes["messaging.operation.type"] == "settle"
        assert commit.attributes["messaging.consumer.group.name"] == group


async def test_process_parented_and_a_failed_send(
    kafka_broker: Any, provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    """`trace_context="parent"` makes a process span the child of its record's send span; a
    send that fails ends its span with `error.type`."""
    topic = topic_name("parent")
    async with Producer(kafka_broker.bootstrap_servers, tracer_provider=provider) as producer:
        await producer.send_and_wait(topic, b"v", partition=0)
        with pytest.raises(Exception) as failed:
            await producer.send_and_wait(topic, b"x" * 2_000_000, partition=0)
    (send, bad) = named(exporter, f"send {topic}")
    assert bad.attributes is not None
    assert (
        bad.attributes["error.type"]
        == f"{type(failed.value).__module__}.{type(failed.value).__qualname__}"
    )
    assert bad.status.status_code is trace.StatusCode.ERROR
    async with Consumer(
        kafka_broker.bootstrap_servers,
        group_id=f"g-{time.time_ns()}",
        auto_offset_reset="earliest",
        tracer_provider=provider,
        trace_context="parent",
    ) as consumer:
        assert consumer.tracing is not None
        assert consumer.tracing.trace_context is TraceContext.PARENT
        await consumer.subscribe([topic])
        async for _ in consumer:
            break
    (process,) = named(exporter, f"process {topic}")
    assert process.parent is not None
    assert process.parent.span_id == send.context.span_id
    assert process.context.trace_id == send.context.trace_id


def test_sync_clients_and_peers_see_traceparent(
    kafka_broker: Any, provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    """The sync producer's send span is the child of the caller thread's current span; its
    traceparent reaches librdkafka and Java's KafkaConsumer; the sync consumer's `for` keeps
    each process span current."""
    import confluent_kafka

    topic = topic_name("sync")
    tracer = provider.get_tracer("app")
    with (
        krafka.sync.Producer(kafka_broker.bootstrap_servers, tracer_provider=provider) as producer,
        tracer.start_as_current_span("job") as job,
    ):
        producer.send(topic, b"v", partition=0).result(timeout=20)
    (send,) = named(exporter, f"send {topic}")
    assert send.parent is not None and send.parent.span_id == job.get_span_context().span_id
    assert send.attributes is not None and send.attributes["messaging.kafka.offset"] == 0
    trace_id, span_id = f"{send.context.trace_id:032x}", f"{send.context.span_id:016x}"

    reader = confluent_kafka.Consumer(
        {"bootstrap.servers": kafka_broker.bootstrap_servers, "group.id": f"r-{time.time_ns()}"}
    )
    try:
        reader.assign([confluent_kafka.TopicPartition(topic, 0, 0)])
        message = None
        deadline = time.monotonic() + 20
        while message is None and time.monotonic() < deadline:
            found = reader.poll(0.5)
            if found is not None and found.error() is None:
                message = found
    finally:
        reader.close()
    assert message is not None
    headers = dict(message.headers() or [])
    traceparent = f"00-{trace_id}-{span_id}-".encode()
    assert headers["traceparent"].startswith(traceparent)
    (java,) = java_consume(kafka_broker.bootstrap_servers, [topic], count=1, timeout=60)
    assert dict(java.headers)["traceparent"] == headers["traceparent"]

    with krafka.sync.Consumer(
        kafka_broker.bootstrap_servers,
        group_id=f"g-{time.time_ns()}",
        auto_offset_reset="earliest",
        tracer_provider=provider,
    ) as consumer:
        consumer.subscribe([topic])
        for _ in consumer:
            current = trace.get_current_span().get_span_context()
            break
    (process,) = named(exporter, f"process {topic}")
    assert current.span_id == process.context.span_id
    assert [link.context.span_id for link in process.links] == [send.context.span_id]


async def test_share_consumer(
    kafka_broker: Any, provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    """A share consumer's records get process spans linked to their send spans; its explicit
    acknowledgements are committed in an `ack {group}` settle span."""
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parent / "share"))
    from _share_env import kafka_share_env

    env = await kafka_share_env(kafka_broker, 1)
    async with Producer(env.bootstrap_servers, tracer_provider=provider) as producer:
        await producer.send_and_wait(env.topic, b"job", key=b"j")
    (send,) = named(exporter, f"send {env.topic}")
    async with ShareConsumer(
        env.bootstrap_servers,
        group_id=env.group,
        acknowledgement_mode="explicit",
        fetch_max_wait=0.1,
        tracer_provider=provider,
    ) as consumer:
        await consumer.subscribe([env.topic])
        async for record in consumer:
            assert trace.get_current_span().is_recording()
            consumer.acknowledge(record)
            break
        assert await consumer.commit_sync(timeout=10)
    (process,) = named(exporter, f"process {env.topic}")
    assert process.kind is SpanKind.CONSUMER
    assert process.attributes is not None
    assert process.attributes["messaging.consumer.group.name"] == env.group
    assert [link.context.span_id for link in process.links] == [send.context.span_id]
    (ack,) = named(exporter, f"ack {env.group}")
    assert ack.kind is SpanKind.CLIENT
    assert ack.attributes is not None
    assert ack.attributes["messaging.operation.name"] == "ack"
    assert ack.attributes["messaging.operation.type"] == "settle"
    assert named(exporter, f"poll {env.topic}")
