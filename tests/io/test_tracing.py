"""OpenTelemetry tracing (`krafka.io.tracing`) on Apache Kafka and Tansu: the spans' names,
kinds, attributes and links as the messaging semantic conventions name them; the default mode
(a `send` span per batch, records carrying the sender's current trace context, `process` spans
only for records carrying one, in every consume API); the per-record mode (`trace_records`);
`server.address` of the broker a request went to; commits, automatic ones too."""

from __future__ import annotations

import collections.abc
import subprocess
import sys
import time
from typing import Any

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.sampling import ALWAYS_OFF

import krafka.sync
from krafka import Consumer, Producer, TopicPartition
from krafka.io import tracing_send
from krafka.io.tracing import TraceContext, TracedList, tracing_for

pytestmark = pytest.mark.anyio
SpanKind = trace.SpanKind
#: A first bootstrap server nothing listens on: `server.address` must not name it.
DEAD = "127.0.0.1:1"


def named(exporter: InMemorySpanExporter, name: str) -> list[ReadableSpan]:
    return [s for s in exporter.get_finished_spans() if s.name == name]


def topic_name(label: str) -> str:
    return f"otel-{label}-{time.time_ns()}"


def header(record: Any, name: str) -> bytes | None:
    return next((v for k, v in record.headers if k == name), None)


def traceparent_of(span: Any) -> bytes:
    context = span.get_span_context() if hasattr(span, "get_span_context") else span.context
    flags = int(context.trace_flags)
    return f"00-{context.trace_id:032x}-{context.span_id:016x}-{flags:02x}".encode()


def leader(consumer: Consumer, topic: str, partition: int) -> tuple[str, int]:
    found = consumer.client.metadata.leader_for(topic, partition)
    assert found is not None
    return (found.host, found.port)


def test_off_without_a_provider() -> None:
    """No provider given and none set globally (the API's proxy): tracing is off, so the
    clients keep their untraced paths."""
    assert tracing_for(None, "c", None) is None
    assert Producer("127.0.0.1:1").tracing is None
    send = Producer("127.0.0.1:1").send
    untraced = getattr(send, "__func__", None) is Producer.send  # the reference `send`
    assert untraced or send.__module__ == "krafka.io._send"  # or its compiled twin


def test_the_global_provider_and_no_import_without_it() -> None:
    """A global provider set before the client is made turns tracing on; a process that never
    imported OpenTelemetry does not get it imported by a client (zero cost when off)."""
    script = """
import sys
import krafka
assert krafka.Consumer("127.0.0.1:1").tracing is None
assert "opentelemetry" not in sys.modules
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
trace.set_tracer_provider(TracerProvider())
assert krafka.Producer("127.0.0.1:1").tracing is not None
assert krafka.ShareConsumer("127.0.0.1:1", group_id="g").tracing is not None
"""
    subprocess.run([sys.executable, "-c", script], check=True, timeout=60)


def test_the_carried_context_is_made_once_and_only_for_sampled_spans(
    provider: TracerProvider,
) -> None:
    """The headers a record carries are formatted once per span context; no current span,
    or an unsampled one, carries nothing."""
    tracing = Producer("127.0.0.1:1", tracer_provider=provider).tracing
    assert tracing is not None
    assert tracing.current_context() is tracing.empty_context
    assert tracing.with_context(None, tracing.current_context()) is None
    with provider.get_tracer("app").start_as_current_span("job") as job:
        context = tracing.current_context()
        first = tracing.with_context(None, context)
        assert first == [("traceparent", traceparent_of(job))]
        assert tracing.with_context(None, tracing.current_context()) is first
        kept = tracing.with_context([("traceparent", b"old"), ("h", b"1")], context)
        assert kept == [("h", b"1"), ("traceparent", traceparent_of(job))]
    unsampled = TracerProvider(sampler=ALWAYS_OFF)
    with unsampled.get_tracer("app").start_as_current_span("quiet"):
        assert tracing.with_context(None, tracing.current_context()) is None


async def test_batches_carry_the_senders_context(
    broker: Any, provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    """Default mode, end to end: one `send` span per batch (CLIENT, linked to the contexts its
    records carry, `server.*` the leader's); records carry the sender's current span; the
    consumer makes `poll` spans, `process` spans only for the traced records (current in the
    `async for` body), and `commit` spans with the coordinator's address."""
    topic, group = topic_name("flow"), f"g-{time.time_ns()}"
    bootstrap = f"{DEAD},{broker.bootstrap_servers}"
    tracer = provider.get_tracer("app")
    async with Producer(
        bootstrap, client_id="p1", tracer_provider=provider, linger=30.0
    ) as producer:
        with tracer.start_as_current_span("request") as request:
            await producer.send(topic, b"a", key=b"k1", partition=1, headers=[("h", b"1")])
            await producer.send(topic, None, key=b"k2", partition=1)
        await producer.send(topic, b"untraced", partition=1)
        await producer.flush()
    sends = named(exporter, f"send {topic}")
    assert sum(s.attributes["messaging.batch.message_count"] for s in sends) == 3  # type: ignore[index,misc]
    for send in sends:
        assert send.kind is SpanKind.CLIENT and send.parent is None
        assert send.status.is_ok
        assert {link.context.span_id for link in send.links} <= {request.context.span_id}
    (send,) = (s for s in sends if s.links)
    attributes = dict(send.attributes or {})
    assert attributes.pop("server.address") and attributes.pop("server.port")
    assert attributes.pop("messaging.batch.message_count") >= 2  # type: ignore[operator]
    assert attributes == {
        "messaging.system": "kafka",
        "messaging.client.id": "p1",
        "messaging.operation.name": "send",
        "messaging.operation.type": "send",
        "messaging.destination.name": topic,
        "messaging.destination.partition.id": "1",
    }

    exporter.clear()
    seen: list[tuple[int, Any]] = []
    async with Consumer(
        bootstrap,
        group_id=group,
        client_id="c1",
        auto_offset_reset="earliest",
        enable_auto_commit=False,
        session_timeout=6,  # Tansu holds a JoinGroup for half of it
        tracer_provider=provider,
    ) as consumer:
        await consumer.subscribe([topic])
        async for record in consumer:
            seen.append((record.offset, trace.get_current_span().get_span_context()))
            if record.offset < 2:
                assert header(record, "traceparent") == traceparent_of(request)
            else:
                assert header(record, "traceparent") is None
            if len(seen) == 3:
                break
        await consumer.commit()
        await consumer.commit_async()
        address = leader(consumer, topic, 1)
    assert (send.attributes or {})["server.address"] == address[0]
    assert (send.attributes or {})["server.port"] == address[1]
    assert not trace.get_current_span().is_recording()

    processes = named(exporter, f"process {topic}")
    assert [p.attributes["messaging.kafka.offset"] for p in processes] == [0, 1]  # type: ignore[index]
    for (_, context), process in zip(seen, processes, strict=False):
        assert process.kind is SpanKind.CONSUMER and process.parent is None
        assert context.span_id == process.context.span_id  # current in the loop body
        assert [link.context.span_id for link in process.links] == [request.context.span_id]
        attributes = dict(process.attributes or {})
        assert attributes["messaging.operation.type"] == "process"
        assert attributes["messaging.consumer.group.name"] == group
        assert attributes["messaging.destination.partition.id"] == "1"
        assert attributes["messaging.client.id"] == "c1"
    assert not seen[2][1].is_valid  # the untraced record: no span
    first, second = processes
    assert (first.attributes or {})["messaging.kafka.message.key"] == "k1"
    assert (second.attributes or {})["messaging.kafka.message.tombstone"]

    polls = [s for s in exporter.get_finished_spans() if s.name.startswith("poll")]
    assert polls and polls[0].name == f"poll {topic}" and polls[0].kind is SpanKind.CONSUMER
    assert (polls[0].attributes or {})["messaging.operation.type"] == "receive"
    assert sum(p.attributes["messaging.batch.message_count"] for p in polls) >= 3  # type: ignore[index,misc]
    assert any(link.context.span_id == request.context.span_id for link in polls[0].links)

    commits = named(exporter, f"commit {group}")
    assert len(commits) == 2  # commit() and commit_async()
    for commit in commits:
        assert commit.kind is SpanKind.CLIENT
        attributes = dict(commit.attributes or {})
        assert attributes["messaging.operation.name"] == "commit"
        assert attributes["messaging.operation.type"] == "settle"
        assert attributes["messaging.consumer.group.name"] == group
        assert (attributes["server.address"], attributes["server.port"]) == address


async def test_poll_recv_and_automatic_commits(
    broker: Any, provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    """`poll()` returns a list whose iteration makes each traced record's `process` span
    current (untraced ones get none); `recv()` keeps a traced record's span current until the
    next call; an automatic commit gets its `commit {group}` span."""
    topic, group = topic_name("poll"), f"g-{time.time_ns()}"
    tracer = provider.get_tracer("app")
    async with Producer(broker.bootstrap_servers, tracer_provider=provider) as producer:
        with tracer.start_as_current_span("job") as job:
            await producer.send_and_wait(topic, b"0", partition=0)
        await producer.send_and_wait(topic, b"1", partition=0)
        with tracer.start_as_current_span("job2") as job2:
            await producer.send_and_wait(topic, b"2", partition=0)
    exporter.clear()
    opened = time.time_ns()
    async with Consumer(
        broker.bootstrap_servers,
        group_id=group,
        auto_offset_reset="earliest",
        auto_commit_interval=0.2,
        max_poll_records=2,
        tracer_provider=provider,
    ) as consumer:
        await consumer.assign([TopicPartition(topic, 0)])
        records: list[Any] = []
        while not records:
            records = await consumer.poll(5.0)
        assert isinstance(records, TracedList) and len(records) == 2
        current = []
        for _record in records:
            current.append(trace.get_current_span().get_span_context())
        assert current[0].is_valid and not current[1].is_valid
        assert not trace.get_current_span().get_span_context().is_valid
        assert (records[0].offset, records[1].offset) == (0, 1)  # indexing is a list's
        record = await consumer.recv()
        assert record.offset == 2
        during = trace.get_current_span().get_span_context()
        deadline = time.monotonic() + 20
        while not named(exporter, f"commit {group}") and time.monotonic() < deadline:
            await consumer.poll(0.1)
    closed = time.time_ns()
    first, third = named(exporter, f"process {topic}")
    assert current[0].span_id == first.context.span_id
    assert [link.context.span_id for link in first.links] == [job.context.span_id]
    assert during.span_id == third.context.span_id
    assert [link.context.span_id for link in third.links] == [job2.context.span_id]
    (commit, *_) = named(exporter, f"commit {group}")
    assert commit.kind is SpanKind.CLIENT
    assert (commit.attributes or {})["messaging.operation.type"] == "settle"
    assert (commit.attributes or {})["server.port"]
    assert commit.start_time is not None and commit.end_time is not None
    assert 0 < commit.end_time - commit.start_time <= closed - opened  # from when it was sent


async def test_anext_poll_batches_and_poll_arrow(
    broker: Any, provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    """`anext(consumer)` keeps a traced record's `process` span current until the next call,
    as `recv()`; `poll_arrow()` and `poll_batches()` make `poll {topic}` spans counting what
    they hand out, the Arrow rows' linked to the contexts their headers carry."""
    topic = topic_name("bulk")
    tracer = provider.get_tracer("app")
    async with Producer(broker.bootstrap_servers, tracer_provider=provider) as producer:
        with tracer.start_as_current_span("job") as job:
            await producer.send_and_wait(topic, b"0", partition=0)
        await producer.send_and_wait(topic, b"1", partition=0, headers=[("h", b"1")])
    exporter.clear()
    tp = TopicPartition(topic, 0)
    async with Consumer(
        broker.bootstrap_servers,
        client_id="bulk",
        auto_offset_reset="earliest",
        tracer_provider=provider,
    ) as consumer:
        await consumer.assign([tp])
        first = await anext(consumer)
        during_first = trace.get_current_span().get_span_context()
        second = await anext(consumer)
        during_second = trace.get_current_span().get_span_context()
        (process,) = named(exporter, f"process {topic}")
        assert (first.offset, second.offset) == (0, 1)
        assert during_first.span_id == process.context.span_id
        assert [link.context.span_id for link in process.links] == [job.context.span_id]
        assert not during_second.is_valid

        exporter.clear()
        await consumer.seek(tp, 0)
        rows = 0
        while rows < 2:
            rows += sum(b.num_rows for b in await consumer.poll_arrow(5.0))
        polls = named(exporter, f"poll {topic}")
        assert sum(p.attributes["messaging.batch.message_count"] for p in polls) == 2  # type: ignore[index,misc]
        assert [link.context.span_id for p in polls for link in p.links] == [job.context.span_id]

        exporter.clear()
        await consumer.seek(tp, 0)
        offsets = 0
        while offsets < 2:
            offsets = max([offsets] + [b.next_offset for b in await consumer.poll_batches(5.0)])
        polls = named(exporter, f"poll {topic}")
        assert sum(p.attributes["messaging.batch.message_count"] for p in polls) == 2  # type: ignore[index,misc]
    for poll in polls:
        assert poll.kind is SpanKind.CONSUMER and not poll.links
        attributes = dict(poll.attributes or {})
        assert attributes["messaging.operation.type"] == "receive"
        assert attributes["messaging.destination.name"] == topic
        assert attributes["messaging.client.id"] == "bulk"
    assert not named(exporter, "poll")  # every poll handing out rows named its topic


def test_sync_next_and_bulk_polls(
    broker: Any, provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    """The sync consumer's `next(consumer)` keeps a traced record's `process` span current on
    the caller's thread until the next call, as `recv()`; its `poll_arrow()` and
    `poll_batches()` make `poll {topic}` spans."""
    topic = topic_name("next")
    tracer = provider.get_tracer("app")
    with krafka.sync.Producer(broker.bootstrap_servers, tracer_provider=provider) as producer:
        with tracer.start_as_current_span("job") as job:
            producer.send(topic, b"0", partition=0).result(timeout=20)
        producer.send(topic, b"1", partition=0).result(timeout=20)
    exporter.clear()
    tp = TopicPartition(topic, 0)
    with krafka.sync.Consumer(
        broker.bootstrap_servers, auto_offset_reset="earliest", tracer_provider=provider
    ) as consumer:
        consumer.assign([tp])
        assert next(consumer).offset == 0
        during = trace.get_current_span().get_span_context()
        assert next(consumer).offset == 1
        assert not trace.get_current_span().get_span_context().is_valid
        for bulk in (consumer.poll_arrow, consumer.poll_batches):
            consumer.seek(tp, 0)
            while not bulk(5.0):
                pass
    *_, arrow, batches = named(exporter, f"poll {topic}")
    assert [link.context.span_id for link in arrow.links] == [job.context.span_id]
    assert not batches.links
    (process,) = named(exporter, f"process {topic}")
    assert during.span_id == process.context.span_id
    assert [link.context.span_id for link in process.links] == [job.context.span_id]
    with pytest.raises(StopIteration):
        next(consumer)


async def test_per_record_spans_and_a_parented_process(
    broker: Any, provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    """`trace_records=True`: a `send` span (PRODUCER) per record, child of the caller's span,
    whose own context the record carries; `trace_context="parent"` makes the process span its
    child; a send that fails ends its span with `error.type`."""
    topic = topic_name("records")
    tracer = provider.get_tracer("app")
    async with Producer(
        f"{DEAD},{broker.bootstrap_servers}",
        client_id="p2",
        tracer_provider=provider,
        trace_records=True,
    ) as producer:
        with tracer.start_as_current_span("request") as request:
            meta = await producer.send_and_wait(topic, b"v", key=b"k1", partition=0)
            await producer.send_and_wait(topic, None, key=b"k2", partition=0)
        with pytest.raises(Exception) as failed:
            await producer.send_and_wait(topic, b"x" * 2_000_000, partition=0)
    send, tomb, bad = named(exporter, f"send {topic}")
    assert send.kind is SpanKind.PRODUCER
    assert send.parent is not None and send.parent.span_id == request.context.span_id
    attributes = dict(send.attributes or {})
    assert f"{attributes.pop('server.address')}:{attributes.pop('server.port')}" != DEAD
    assert attributes == {
        "messaging.system": "kafka",
        "messaging.client.id": "p2",
        "messaging.operation.name": "send",
        "messaging.operation.type": "send",
        "messaging.destination.name": topic,
        "messaging.destination.partition.id": "0",
        "messaging.kafka.message.key": "k1",
        "messaging.kafka.offset": meta.offset,
    }
    assert (tomb.attributes or {})["messaging.kafka.message.tombstone"]
    error = type(failed.value)
    assert (bad.attributes or {})["error.type"] == f"{error.__module__}.{error.__qualname__}"
    assert bad.status.status_code is trace.StatusCode.ERROR

    async with Consumer(
        broker.bootstrap_servers,
        group_id=f"g-{time.time_ns()}",
        auto_offset_reset="earliest",
        tracer_provider=provider,
        trace_context="parent",
    ) as consumer:
        assert consumer.tracing is not None
        assert consumer.tracing.trace_context is TraceContext.PARENT
        await consumer.assign([TopicPartition(topic, 0)])
        async for record in consumer:
            assert header(record, "traceparent") == traceparent_of(send)
            break
    (process,) = named(exporter, f"process {topic}")
    assert process.parent is not None and process.parent.span_id == send.context.span_id
    assert process.context.trace_id == send.context.trace_id


@pytest.mark.parametrize("implementation", sorted(tracing_send.implementations()))
async def test_both_traced_sends(
    broker: Any, provider: TracerProvider, exporter: InMemorySpanExporter, implementation: str
) -> None:
    """The compiled traced `send` and its pure twin: a coroutine; a record sent in a sampled
    span carries it and links its batch's span, one sent outside carries nothing."""
    topic = topic_name(implementation)
    tracer = provider.get_tracer("app")
    async with Producer(broker.bootstrap_servers, tracer_provider=provider, linger=30) as producer:
        assert producer.tracing is not None
        send = tracing_send.implementations()[implementation](producer, producer.tracing)
        with tracer.start_as_current_span("job") as job:
            sending = send(topic, b"a", partition=0)
            assert isinstance(sending, collections.abc.Coroutine)
            traced = await sending
        plain = await send(topic, b"b", partition=0)
        await producer.flush()
        assert (await traced).offset == 0 and (await plain).offset == 1
    (batch,) = named(exporter, f"send {topic}")
    assert (batch.attributes or {})["messaging.batch.message_count"] == 2
    assert [link.context.span_id for link in batch.links] == [job.context.span_id]
