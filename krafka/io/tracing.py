"""OpenTelemetry tracing of the clients, following the messaging semantic conventions.

On when a tracer provider is configured: `tracer_provider=` on a client, else the global one
(`opentelemetry.trace.set_tracer_provider`) if one was set when the client was made. Off (no
OpenTelemetry installed, or only the API's default provider) a client holds `None` here and
its paths are the untraced ones: tracing costs nothing then.

Why the default spans are per batch and per poll: producing costs ~0.7 µs CPU per record and
consuming ~0.3 µs, while one SDK span costs 20-35 µs, so a span per record makes a traced
client 30-60 times slower. The conventions allow batch operations: the default mode makes

- `send {topic}` (CLIENT) per produced batch (one ProduceRequest's partition), from the
  batch's opening to its acknowledgement, with `messaging.batch.message_count`, linked to the
  creation contexts its records carry. Records carry the *sender's current* trace context in
  `traceparent`/`tracestate` when a sampled span is current there: the context variable is read
  per record (one C call, compared by identity with the last one) and the headers are formatted
  once per span context. A record sent with no sampled span current carries nothing. That
  `send` is compiled (`krafka.io.tracing_send`), so its per-record cost stays that of the
  untraced one.
- `poll {topic}` (CONSUMER, `receive`) per poll returning records, linked to their contexts;
  also per `poll_batches()` (counting the offsets handed out; no links: finding them would
  decode what it hands out undecoded) and per `poll_arrow()` (counting rows; linked to the
  contexts in the `headers` column it decodes anyway).
- `process {topic}` (CONSUMER) only for a record carrying a trace context, linked to it
  (`TraceContext.LINK`, the default) or its child (`TraceContext.PARENT`), and current while
  the application handles the record: in `async for`, the sync `for`, after `recv()` or
  `anext(consumer)` (the sync `next(consumer)`) until the next call, and while a `poll()`
  list is iterated (as Java's instrumentation does with `ConsumerRecords`). A record without
  one costs a look at its headers (in C).
- `commit {group}` (CLIENT, `settle`) per commit, explicit or automatic (from when the engine
  sent it), and `ack {group}` for a share consumer's acknowledgements.

`trace_records=True` on a producer is the per-record mode of Java's instrumentation: a
`send {topic}` span (PRODUCER) per record, from `send` to its acknowledgement, whose own
context the record carries (with the key, tombstone and offset attributes). It costs one SDK
span per record (~25 µs CPU with a no-op exporter).

`server.address`/`server.port` are the broker a request went to: the partition's leader for
`send`, the group coordinator for `commit`, the leader of the acknowledged partitions for `ack`.
"""

from __future__ import annotations

import contextvars
import importlib
import os
import sys
import time
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping, Sequence
from enum import Enum
from typing import Any, Final, TypeVar

from krafka.errors import KrafkaError
from krafka.io.iteration import scan, traced, traceparent
from krafka.sansio.actions import Coordinator
from krafka.sansio.producer.record import Header

T = TypeVar("T")
SYSTEM: Final = "kafka"
_PROVIDER_VARIABLE: Final = "OTEL_PYTHON_TRACER_PROVIDER"
#: The headers W3C trace context travels in.
TRACE_HEADERS: Final = frozenset({"traceparent", "tracestate"})


class TraceContext(Enum):
    """How a `process` span relates to the `send` span whose context its record carries."""

    LINK = "link"
    PARENT = "parent"

    @classmethod
    def parse(cls, value: TraceContext | str) -> TraceContext:
        return value if isinstance(value, TraceContext) else cls(value.lower())


def _otel() -> tuple[Any, Any] | None:
    """(opentelemetry.trace, opentelemetry.propagate), or None when the API is not installed."""
    try:
        trace = importlib.import_module("opentelemetry.trace")
        propagate = importlib.import_module("opentelemetry.propagate")
    except ImportError:
        return None
    return trace, propagate


def _provider(trace: Any, given: Any) -> Any:
    """The provider to use, or None: the API's own default (no SDK configured) means off."""
    if given is not None:
        return given
    found = trace.get_tracer_provider()
    if isinstance(found, trace.ProxyTracerProvider | trace.NoOpTracerProvider):
        return None
    return found


def _may_have_global() -> bool:
    """Whether a global tracer provider may be set: only code that imported
    `opentelemetry.trace` can have set one (or the SDK's environment variable names one). Not
    importing OpenTelemetry otherwise keeps an untraced process exactly as it was: its import
    alone adds thousands of objects every full garbage collection then walks."""
    return "opentelemetry.trace" in sys.modules or bool(os.environ.get(_PROVIDER_VARIABLE))


def tracing_for(
    tracer_provider: Any,
    client_id: str,
    client: Any,
    *,
    group: str | None = None,
    trace_context: TraceContext | str = TraceContext.LINK,
    trace_records: bool = False,
) -> Tracing | None:
    """A client's `Tracing`, or None when tracing is off."""
    if tracer_provider is None and not _may_have_global():
        return None
    modules = _otel()
    if modules is None:
        if tracer_provider is not None:
            from krafka._optional import require

            require("opentelemetry", "tracer_provider=")
        return None
    trace, propagate = modules
    provider = _provider(trace, tracer_provider)
    if provider is None:
        return None
    from krafka import __version__

    tracer = provider.get_tracer("krafka", __version__)
    return Tracing(trace, propagate, tracer, client_id, client, group, trace_context, trace_records)


def _key(key: Any) -> str | None:
    if key is None:
        return None
    if isinstance(key, bytes | bytearray | memoryview):
        return bytes(key).decode("utf-8", "backslashreplace")
    return str(key)


def error_type(error: BaseException) -> str:
    """`error.type`: the exception's fully qualified class name."""
    cls = type(error)
    return f"{cls.__module__}.{cls.__qualname__}"


class _HeaderGetter:
    """Reads W3C trace context from a record's `(str, bytes)` headers."""

    def get(self, carrier: Sequence[Header], key: str) -> list[str] | None:
        found = [v.decode("latin-1") for k, v in carrier if k == key and v is not None]
        return found or None

    def keys(self, carrier: Sequence[Header]) -> list[str]:
        return [k for k, _ in carrier]


_GETTER: Final = _HeaderGetter()
_NOT_POLLED: Final[tuple[int, Any, list[Any]]] = (0, None, [])


class Tracing:
    """Makes one client's spans (see the module doc)."""

    def __init__(
        self,
        trace: Any,
        propagate: Any,
        tracer: Any,
        client_id: str,
        client: Any,
        group: str | None,
        trace_context: TraceContext | str,
        trace_records: bool = False,
    ) -> None:
        self._trace = trace
        self._propagate = propagate
        self.tracer = tracer
        self.group = group
        self.trace_context = TraceContext.parse(trace_context)
        #: Per-record `send` spans (the opt-in mode) instead of per-batch ones.
        self.trace_records = trace_records
        self._client = client
        self.base: Final = {"messaging.system": SYSTEM, "messaging.client.id": client_id}
        self._kind = trace.SpanKind
        context = importlib.import_module("opentelemetry.context")
        self._attach = context.attach
        #: Reads the current OpenTelemetry context; `empty_context` is what it returns where
        #: nothing was attached (compared by identity: the untraced sender's whole cost).
        self.current_context, self.empty_context = _context_reader(context)
        self._last_context: Any = self.empty_context
        self._last_carried: list[Header] | None = None
        self._last_span_context: Any = None
        self._last_parent: tuple[bytes | None, Any] = (None, None)
        #: The creation contexts of each open batch's records (links of its `send` span).
        self._created: dict[Any, list[Any]] = {}
        #: The record being processed (`async for`, `recv`, a traced `poll()` list's `for`).
        self.current: Processing | None = None
        #: The last poll span's records (their count and first: holding them all would keep
        #: them alive), and those of them carrying a trace context.
        self._polled: tuple[int, Any, list[Any]] = _NOT_POLLED
        #: Tokens of process spans ended from another context, to reset where they were made.
        self._stale: list[Any] = []

    # -- addresses ------------------------------------------------------------------------------

    def _server(self, attributes: dict[str, Any], address: tuple[str, int] | None) -> None:
        if address is not None:
            attributes["server.address"], attributes["server.port"] = address

    def leader_address(self, topic: str, partition: int | None) -> tuple[str, int] | None:
        """The partition leader's address, as the client's metadata knows it."""
        if partition is None or partition < 0:
            return None
        found = self._client.metadata.leader_for(topic, partition)
        return None if found is None else (found.host, found.port)

    def coordinator_address(self, key_type: Any = None) -> tuple[str, int] | None:
        """The address of the group's coordinator (known after any group request)."""
        if self.group is None:
            return None
        coordinator = (
            Coordinator(self.group) if key_type is None else Coordinator(self.group, key_type)
        )
        metadata = self._client.metadata
        found = self._client.core.find_coordinator(coordinator, metadata.now)
        if found is None:
            return None
        if found.host is not None and found.port is not None:
            return (found.host, found.port)
        broker = metadata.broker(found.node_id)
        return None if broker is None else (broker.host, broker.port)

    # -- producer: trace context carried in records ---------------------------------------------

    def carried(self, context: Any) -> list[Header] | None:
        """The trace headers a record sent in `context` carries (None: no sampled span
        current there); made once per context."""
        if context is self._last_context:
            return self._last_carried
        span_context = self._trace.get_current_span(context).get_span_context()
        carried = None
        if span_context.is_valid and span_context.trace_flags.sampled:
            if span_context == self._last_span_context and self._last_carried is not None:
                carried = self._last_carried
            else:
                carrier: dict[str, str] = {}
                self._propagate.inject(carrier, context=context)
                carried = [(k, v.encode("latin-1")) for k, v in carrier.items()]
        self._last_context, self._last_carried = context, carried
        self._last_span_context = span_context if carried is not None else None
        return carried

    def with_context(self, headers: Sequence[Header] | None, context: Any) -> Any:
        """`headers` with the trace context of `context` (replacing any there), or `headers`
        as they were when no sampled span is current in it."""
        carried = self.carried(context)
        if carried is None:
            return headers
        if not headers:
            return carried
        names = {k for k, _ in carried}
        return [h for h in headers if h[0] not in names] + carried

    def created(self, batch: Any, headers: Sequence[Header] | None) -> None:
        """A record carrying `headers` went into `batch`: its context is a link of the batch's
        `send` span."""
        found = self.extract(headers)
        if found is None:
            return
        links = self._created.setdefault(batch, [])
        if not links or links[-1] != found:
            links.append(found)

    @property
    def last_span_context(self) -> Any:
        """The span context of the headers `with_context` gave last."""
        return self._last_span_context

    def link(self, batch: Any, found: Any) -> None:
        """A record carrying `found` (a span context) went into `batch`."""
        links = self._created.get(batch)
        if links is None:
            self._created[batch] = [found]
        elif links[-1] is not found:
            links.append(found)

    def batch_done(self, batch: Any) -> None:
        """`batch` was acknowledged or failed: its `send {topic}` span (default mode), from its
        opening to now. A split batch hands its links to its halves."""
        links = self._created.pop(batch, None)
        if not batch.done:
            if links and batch.halves is not None:
                for half in batch.halves:
                    self._created[half] = list(links)
            return
        attributes = {
            **self.base,
            "messaging.operation.name": "send",
            "messaging.operation.type": "send",
            "messaging.destination.name": batch.topic,
            "messaging.destination.partition.id": str(batch.partition),
            "messaging.batch.message_count": batch.count,
        }
        self._server(attributes, self.leader_address(batch.topic, batch.partition))
        span = self.tracer.start_span(
            f"send {batch.topic}",
            kind=self._kind.CLIENT,
            attributes=attributes,
            links=[self._trace.Link(c) for c in links or ()],
            start_time=batch.created_ms * 1_000_000,
        )
        if batch.error is not None:
            self.failed(span, batch.error)
        span.end()

    # -- producer: per-record spans (trace_records=True) ----------------------------------------

    def start_send(
        self,
        topic: str,
        partition: int | None,
        key: Any,
        value: Any,
        headers: Sequence[Header] | None,
    ) -> tuple[Any, list[Header]]:
        """A started `send` span, and `headers` with its W3C context (replacing any there)."""
        attributes: dict[str, Any] = {
            **self.base,
            "messaging.operation.name": "send",
            "messaging.operation.type": "send",
            "messaging.destination.name": topic,
        }
        if partition is not None:
            attributes["messaging.destination.partition.id"] = str(partition)
        text = _key(key)
        if text is not None:
            attributes["messaging.kafka.message.key"] = text
        if value is None:
            attributes["messaging.kafka.message.tombstone"] = True
        span = self.tracer.start_span(
            f"send {topic}", kind=self._kind.PRODUCER, attributes=attributes
        )
        carrier: dict[str, str] = {}
        self._propagate.inject(carrier, context=self._trace.set_span_in_context(span))
        kept = [h for h in headers or () if h[0] not in carrier]
        return span, kept + [(k, v.encode("latin-1")) for k, v in carrier.items()]

    def end_send(
        self, span: Any, topic: str, partition: int | None, offset: int | None, error: Any
    ) -> None:
        """The record was acknowledged at `offset` (or failed with `error`)."""
        if partition is not None:
            span.set_attribute("messaging.destination.partition.id", str(partition))
            address = self.leader_address(topic, partition)
            if address is not None:
                span.set_attributes({"server.address": address[0], "server.port": address[1]})
        if offset is not None:
            span.set_attribute("messaging.kafka.offset", offset)
        if error is not None:
            self.failed(span, error)
        span.end()

    def failed(self, span: Any, error: BaseException) -> None:
        span.set_attribute("error.type", error_type(error))
        span.set_status(self._trace.Status(self._trace.StatusCode.ERROR, str(error)))

    # -- consumers ------------------------------------------------------------------------------

    def extract(self, headers: Sequence[Header] | None) -> Any:
        """The span context a record's headers carry, or None (the last one is remembered:
        the records of one sender's span carry the same)."""
        if not headers:
            return None
        parent = next((v for k, v in headers if k == "traceparent"), None)
        if parent is None:
            return None
        state = next((v for k, v in headers if k == "tracestate"), None)
        if state is None and self._last_parent[0] == parent:
            return self._last_parent[1]
        context = self._propagate.extract(headers, getter=_GETTER)
        found = self._trace.get_current_span(context).get_span_context()
        found = found if found.is_valid else None
        if state is None:
            self._last_parent = (parent, found)
        return found

    def poll(self, records: Sequence[Any]) -> None:
        """One finished `poll` span for records a poll returned, linked to the contexts of
        those that carry one."""
        topics, found = scan(records)
        self._polled = (len(records), records[0] if records else None, found)
        self._poll_span(topics, len(records), (self.extract(r.headers) for r in found))

    def polled_batches(self, batches: Sequence[Any]) -> None:
        """The `poll` span of a `poll_batches()`: its count is the offsets handed out (their
        records, but for compacted-away offsets and transaction markers). No links: finding
        the traced records would decode the batches this path hands out undecoded."""
        topics = {b.partition.topic for b in batches}
        self._poll_span(topics, sum(b.next_offset - b.start for b in batches), ())

    def polled_rows(self, rows: Sequence[Any]) -> None:
        """The `poll` span of a `poll_arrow()`: its rows, linked to the contexts of those whose
        `headers` column (decoded anyway) has a `traceparent`."""
        topics: set[str] = set()
        contexts: list[Any] = []
        for batch in rows:
            topics.update(batch.column("topic").unique().to_pylist())
            contexts += map(self.extract, _arrow_traceparents(batch))
        self._poll_span(topics, sum(b.num_rows for b in rows), contexts)

    def _poll_span(self, topics: set[str], count: int, contexts: Iterable[Any]) -> None:
        """One finished `poll {topic}` span (CONSUMER, `receive`) of `count` records, linked
        to `contexts` (None ones skipped, repeats of the last one too)."""
        topic = next(iter(topics)) if len(topics) == 1 else None
        attributes = {
            **self.base,
            "messaging.operation.name": "poll",
            "messaging.operation.type": "receive",
            "messaging.batch.message_count": count,
        }
        if topic is not None:
            attributes["messaging.destination.name"] = topic
        if self.group is not None:
            attributes["messaging.consumer.group.name"] = self.group
        links: list[Any] = []
        for context in contexts:
            if context is not None and (not links or links[-1].context != context):
                links.append(self._trace.Link(context))
        name = "poll" if topic is None else f"poll {topic}"
        self.tracer.start_span(
            name, kind=self._kind.CONSUMER, attributes=attributes, links=links
        ).end()

    def start_process(self, record: Any) -> Any:
        """A started `process` span for `record`, linked to (or the child of) its context."""
        attributes = {
            **self.base,
            "messaging.operation.name": "process",
            "messaging.operation.type": "process",
            "messaging.destination.name": record.topic,
            "messaging.destination.partition.id": str(record.partition),
            "messaging.kafka.offset": record.offset,
        }
        if self.group is not None:
            attributes["messaging.consumer.group.name"] = self.group
        text = _key(record.key)
        if text is not None:
            attributes["messaging.kafka.message.key"] = text
        if record.value is None:
            attributes["messaging.kafka.message.tombstone"] = True
        found = self.extract(record.headers)
        context = links = None
        if found is not None:
            if self.trace_context is TraceContext.PARENT:
                span = self._trace.NonRecordingSpan(found)
                context = self._trace.set_span_in_context(span)
            else:
                links = [self._trace.Link(found)]
        return self.tracer.start_span(
            f"process {record.topic}",
            context=context,
            kind=self._kind.CONSUMER,
            attributes=attributes,
            links=links,
        )

    def settle_span(
        self, operation: str, count: int | None = None, start_time: int | None = None
    ) -> Any:
        """A started `commit {group}` or `ack {group}` span (CLIENT, a settle operation)."""
        attributes: dict[str, Any] = {
            **self.base,
            "messaging.operation.name": operation,
            "messaging.operation.type": "settle",
        }
        if self.group is not None:
            attributes["messaging.consumer.group.name"] = self.group
        if count is not None:
            attributes["messaging.batch.message_count"] = count
        name = operation if self.group is None else f"{operation} {self.group}"
        return self.tracer.start_span(
            name, kind=self._kind.CLIENT, attributes=attributes, start_time=start_time
        )

    def end_settle(
        self,
        span: Any,
        address: tuple[str, int] | None,
        error: BaseException | None = None,
        end_time: int | None = None,
    ) -> None:
        """End a settle span sent to the broker at `address` (at `end_time`, default now)."""
        if address is not None:
            span.set_attributes({"server.address": address[0], "server.port": address[1]})
        if error is not None:
            self.failed(span, error)
        span.end(end_time)

    def auto_committed(self, elapsed: float, error: BaseException | None = None) -> None:
        """An automatic commit finished: its `commit {group}` span, from when the engine sent
        it (`elapsed` seconds ago on the client's clock) to now. The engine knows only its own
        clock, so the start is now's wall clock less `elapsed`."""
        end = wall_ns()
        span = self.settle_span("commit", start_time=end - max(0, int(elapsed * 1e9)))
        self.end_settle(span, self.coordinator_address(), error, end)

    async def committed(self, span: Any, outcome: Awaitable[T]) -> T:
        """`await outcome` (a commit to the group coordinator), then end `span`."""
        try:
            result = await outcome
        except BaseException as exc:
            self.end_settle(span, self.coordinator_address(), exc)
            raise
        self.end_settle(span, self.coordinator_address())
        return result

    async def acknowledged(
        self, span: Any, outcome: Awaitable[Mapping[Any, KrafkaError | None]]
    ) -> Any:
        """`await outcome` (a share consumer's acknowledgements: {partition: error}), then
        end `span`, sent to the partitions' leader when they share one."""
        try:
            result = await outcome
        except BaseException as exc:
            self.end_settle(span, None, exc)
            raise
        leaders = {self.leader_address(tp.topic, tp.partition) for tp in result}
        address = leaders.pop() if len(leaders) == 1 else None
        error = next((e for e in result.values() if e is not None), None)
        self.end_settle(span, address, error)
        return result

    async def ended(self, span: Any, outcome: Awaitable[T]) -> T:
        """`await outcome`, then end `span` (failed if it raised)."""
        try:
            return await outcome
        except BaseException as exc:
            self.failed(span, exc)
            raise
        finally:
            span.end()

    # -- processing -----------------------------------------------------------------------------

    def use(self, span: Any) -> Any:
        """A context manager making `span` current (not ending it)."""
        return self._trace.use_span(span, end_on_exit=False, record_exception=False)

    def process(self, record: Any) -> None:
        """End the last record's `process` span; start `record`'s, current in the caller's
        context until the next record, the end of the loop or the consumer's close."""
        self.finish_current()
        span = self.start_process(record)
        self.current = Processing(span, self._attach(self._trace.set_span_in_context(span)))

    def received(self, record: Any) -> None:
        """`recv()` handed out `record`: the last one's span ends; a traced record's is current
        until the next call."""
        self.finish_current()
        if traceparent(record) is not None:
            self.process(record)

    def finish_current(self, error: BaseException | None = None) -> None:
        """End the current record's `process` span and restore the context before it. Ended
        from another context (an abandoned async generator's finalizer), the context it was
        current in is restored by the next call made there."""
        if self._stale:
            self._stale = [t for t in self._stale if not _reset(t)][-8:]
        current, self.current = self.current, None
        if current is not None and not current.finish(error):
            self._stale.append(current.token)

    def handed(self, records: list[T]) -> list[T]:
        """What a `poll()` returns: `records` as they are when none carries a trace context,
        else a `TracedList` whose iteration makes each traced record's `process` span current
        while the loop body handles it."""
        (count, first, found), self._polled = self._polled, _NOT_POLLED
        same = count == len(records) and records and records[0] is first
        if not (found if same else traced(records)):
            return records
        return TracedList(records, self)

    def iterate(self, records: Iterable[T]) -> Iterator[T]:
        """`records` one by one, each traced one in its `process` span."""
        mine: Processing | None = None
        try:
            for record in records:
                if traceparent(record) is not None:
                    self.process(record)
                    mine = self.current
                yield record
                if mine is not None:
                    self._finish_own(mine)
                    mine = None
        finally:
            if mine is not None:
                self._finish_own(mine)

    def _finish_own(self, processing: Processing) -> None:
        """End `processing` if it is still the current one (a loop abandoned and closed late
        must not end a later record's span)."""
        if self.current is processing:
            self.finish_current()


def _arrow_traceparents(batch: Any) -> list[list[Header]]:
    """The `traceparent` headers of an Arrow batch of Kafka rows, each as a record's headers
    (vectorized over the `headers` column: no object per record)."""
    import pyarrow.compute as pc

    if "headers" not in batch.schema.names:
        return []
    flat = pc.list_flatten(batch.column("headers"))
    if not len(flat):
        return []
    found = pc.filter(flat.field("value"), pc.equal(flat.field("key"), "traceparent"))
    return [[("traceparent", v)] for v in found.to_pylist() if v is not None]


def _context_reader(context: Any) -> tuple[Callable[[], Any], Any]:
    """(a function returning the current OpenTelemetry context, what it returns where nothing
    was attached): the context variable's own `get` when the runtime context is the standard
    contextvars one, else the API's `get_current` (and a context nothing is identical to)."""
    runtime = getattr(context, "_RUNTIME_CONTEXT", None)
    variable = getattr(runtime, "_current_context", None)
    if isinstance(variable, contextvars.ContextVar):
        return variable.get, contextvars.Context().run(variable.get)
    return context.get_current, object()


class TracedList(list[T]):
    """A `poll()` result holding traced records: iterating it (`for record in records`) makes
    each traced record's `process` span current while the loop body runs (Java's
    instrumentation does the same with `ConsumerRecords`); indexing it does not."""

    __slots__ = ("_tracing",)

    def __init__(self, records: Iterable[T], tracing: Tracing) -> None:
        super().__init__(records)
        self._tracing = tracing

    def __iter__(self) -> Iterator[T]:
        return self._tracing.iterate(list.__iter__(self))


def traced_records(tracing: Tracing, records: Iterator[Any]) -> Iterator[Any]:
    """Records one by one from an iterator, each traced one in its `process` span."""
    return tracing.iterate(records)


class Processing:
    """The `process` span current while the application handles one record (`async for`,
    the sync consumer's `for`), until `finish`."""

    __slots__ = ("span", "token")

    def __init__(self, span: Any, token: object) -> None:
        self.span = span
        self.token = token

    def finish(self, error: BaseException | None = None) -> bool:
        """End the span; restore the context before it, if this is the context it was made
        current in (False: another one; a loop left with `break` may end it elsewhere)."""
        if error is not None:
            self.span.set_attribute("error.type", error_type(error))
        self.span.end()
        return _reset(self.token)


def _reset(token: object) -> bool:
    """Reset a context variable's token; False when it belongs to another context."""
    if not isinstance(token, contextvars.Token):
        return True
    try:
        token.var.reset(token)
    except ValueError:
        return False
    except RuntimeError:  # reset already
        return True
    return True


def wall_ns() -> int:
    """The wall clock in nanoseconds (span times)."""
    return time.time_ns()


__all__ = [
    "TRACE_HEADERS",
    "Processing",
    "TraceContext",
    "TracedList",
    "Tracing",
    "error_type",
    "traced_records",
    "tracing_for",
    "wall_ns",
]
