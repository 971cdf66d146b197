"""OpenTelemetry tracing of the clients, following the messaging semantic conventions.

On when a tracer provider is configured: `tracer_provider=` on a client, else the global one
(`opentelemetry.trace.set_tracer_provider`) if one was set when the client was made. Off (no
OpenTelemetry installed, or only the API's default provider) a client holds `None` here and
its paths are the untraced ones: tracing costs nothing then.

Spans: `send {topic}` (PRODUCER, from `send` until the record is acknowledged), `poll {topic}`
(CONSUMER, one per poll returning records), `process {topic}` (CONSUMER, one per record that
`async for` hands out, current while the loop body runs), `commit {group}` (CLIENT), and
`ack {group}` (CLIENT) for a share consumer's acknowledgements. The producer puts the W3C
trace context of its `send` span in the record's headers (`traceparent`, `tracestate`); a
process span is linked to it (`TraceContext.LINK`, the default) or its child
(`TraceContext.PARENT`).
"""

from __future__ import annotations

import contextlib
import contextvars
import importlib
import os
import sys
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping, Sequence
from enum import Enum
from typing import Any, Final, TypeVar

from krafka.errors import KrafkaError
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
    bootstrap: Sequence[tuple[str, int]],
    *,
    group: str | None = None,
    trace_context: TraceContext | str = TraceContext.LINK,
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
    return Tracing(trace, propagate, tracer, client_id, bootstrap, group, trace_context)


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


class Tracing:
    """Makes one client's spans (see the module doc)."""

    def __init__(
        self,
        trace: Any,
        propagate: Any,
        tracer: Any,
        client_id: str,
        bootstrap: Sequence[tuple[str, int]],
        group: str | None,
        trace_context: TraceContext | str,
    ) -> None:
        self._trace = trace
        self._propagate = propagate
        self.tracer = tracer
        self.group = group
        self.trace_context = TraceContext.parse(trace_context)
        base: dict[str, Any] = {"messaging.system": SYSTEM, "messaging.client.id": client_id}
        if bootstrap:
            host, port = bootstrap[0]
            base["server.address"] = host
            base["server.port"] = port
        self.base: Final = base
        self._kind = trace.SpanKind
        self._attach = importlib.import_module("opentelemetry.context").attach
        #: The record being processed in a traced loop (`async for`, the sync `for`).
        self.current: Processing | None = None

    # -- producer -------------------------------------------------------------------------------

    def start_send(
        self,
        topic: str,
        partition: int | None,
        key: Any,
        value: Any,
        headers: Sequence[Header] | None,
    ) -> tuple[Any, list[Header]]:
        """A started `send` span, and `headers` with its W3C context (replacing any there)."""
        attributes = {
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

    def end_send(self, span: Any, partition: int | None, offset: int | None, error: Any) -> None:
        """The record was acknowledged at `offset` (or failed with `error`)."""
        if partition is not None:
            span.set_attribute("messaging.destination.partition.id", str(partition))
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
        """The span context a record's headers carry, or None."""
        if not headers:
            return None
        context = self._propagate.extract(headers, getter=_GETTER)
        found = self._trace.get_current_span(context).get_span_context()
        return found if found.is_valid else None

    def poll(self, records: Sequence[Any]) -> None:
        """One finished `poll` span for records a poll returned, linked to their contexts."""
        topics = {r.topic for r in records}
        topic = next(iter(topics)) if len(topics) == 1 else None
        attributes = {
            **self.base,
            "messaging.operation.name": "poll",
            "messaging.operation.type": "receive",
            "messaging.batch.message_count": len(records),
        }
        if topic is not None:
            attributes["messaging.destination.name"] = topic
        if self.group is not None:
            attributes["messaging.consumer.group.name"] = self.group
        links = [self._trace.Link(c) for c in self._contexts(records)]
        name = "poll" if topic is None else f"poll {topic}"
        self.tracer.start_span(
            name, kind=self._kind.CONSUMER, attributes=attributes, links=links
        ).end()

    def _contexts(self, records: Iterable[Any]) -> Iterable[Any]:
        for record in records:
            found = self.extract(record.headers)
            if found is not None:
                yield found

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

    def settle_span(self, operation: str, count: int | None = None) -> Any:
        """A started `commit {group}` or `ack {group}` span (CLIENT, a settle operation)."""
        attributes = {
            **self.base,
            "messaging.operation.name": operation,
            "messaging.operation.type": "settle",
        }
        if self.group is not None:
            attributes["messaging.consumer.group.name"] = self.group
        if count is not None:
            attributes["messaging.batch.message_count"] = count
        name = operation if self.group is None else f"{operation} {self.group}"
        return self.tracer.start_span(name, kind=self._kind.CLIENT, attributes=attributes)

    def use(self, span: Any) -> Any:
        """A context manager making `span` current (not ending it)."""
        return self._trace.use_span(span, end_on_exit=False, record_exception=False)

    def process(self, record: Any) -> None:
        """End the last record's `process` span; start `record`'s, current in the caller's
        context until the next record, the end of the loop or the consumer's close."""
        self.finish_current()
        span = self.start_process(record)
        self.current = Processing(span, self._attach(self._trace.set_span_in_context(span)))

    def finish_current(self, error: BaseException | None = None) -> None:
        current, self.current = self.current, None
        if current is not None:
            current.finish(error)

    async def ended(self, span: Any, outcome: Awaitable[T]) -> T:
        """`await outcome`, then end `span` (failed if it raised)."""
        try:
            return await outcome
        except BaseException as exc:
            self.failed(span, exc)
            raise
        finally:
            span.end()


class TracedRecords:
    """`async for` over a consumer with tracing on: each record's `process` span is current
    while the loop body runs for it."""

    __slots__ = ("_next", "_tracing")

    def __init__(self, tracing: Tracing, next_record: Callable[[], Awaitable[Any]]) -> None:
        self._tracing = tracing
        self._next = next_record

    def __aiter__(self) -> TracedRecords:
        return self

    async def __anext__(self) -> Any:
        self._tracing.finish_current()
        record = await self._next()
        self._tracing.process(record)
        return record


def traced_records(tracing: Tracing, records: Iterator[Any]) -> Iterator[Any]:
    """The sync consumer's `for` with tracing on (as `TracedRecords`)."""
    try:
        for record in records:
            tracing.process(record)
            yield record
            tracing.finish_current()
    finally:
        tracing.finish_current()


class Processing:
    """The `process` span current while the application handles one record (`async for`,
    the sync consumer's `for`), until `finish`."""

    __slots__ = ("span", "token")

    def __init__(self, span: Any, token: object) -> None:
        self.span = span
        self.token = token

    def finish(self, error: BaseException | None = None) -> None:
        """End the span; restore the context before it, if this is still the context it was
        made current in (a loop left with `break` ends it later, elsewhere)."""
        if error is not None:
            self.span.set_attribute("error.type", error_type(error))
        self.span.end()
        token = self.token
        if isinstance(token, contextvars.Token):
            with contextlib.suppress(ValueError, RuntimeError):
                token.var.reset(token)


def settle_error(span: Any, tracing: Tracing, errors: Mapping[Any, Any]) -> None:
    """Mark a settle span failed with the first error among `errors`' values."""
    for error in errors.values():
        if isinstance(error, KrafkaError):
            tracing.failed(span, error)
            return


__all__ = [
    "TRACE_HEADERS",
    "Processing",
    "TraceContext",
    "TracedRecords",
    "Tracing",
    "error_type",
    "traced_records",
    "tracing_for",
]
