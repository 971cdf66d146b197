"""The awaitable delivery handle `Producer.send` returns, and the producer record interceptors see.

A handle is `(batch, index)` (`RecordHandle`) made awaitable: `await handle` returns the
record's `RecordMetadata` or raises its delivery error. Awaiting a handle whose batch is done
runs no coroutine and never suspends (`__await__` is a generator that returns at once), so
confirming every record costs a fraction of a microsecond; waiting for a pending batch costs
one `anyio.Event` per *batch*, created only when someone waits.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import anyio

from krafka.errors import KrafkaError
from krafka.sansio.producer.batch import ProducerBatch
from krafka.sansio.producer.record import Header, RecordHandle, RecordMetadata, metadata_of

log = logging.getLogger(__name__)


class DeliveryHandle(RecordHandle):
    """A record on its way; `await` it for its `RecordMetadata` (or its delivery error)."""

    __slots__ = ()

    def __await__(self) -> Generator[Any, None, RecordMetadata]:
        batch = self.batch
        if batch.done:  # a done batch was never split: `batch` and `index` are current
            if batch.error is None:
                return metadata_of(batch, self.index)
            raise batch.error.with_traceback(None)
        return (yield from self.wait().__await__())

    async def wait(self) -> RecordMetadata:
        """Wait for the delivery (what `await handle` does)."""
        while True:
            batch, _ = self.locate()
            if batch.done:
                return self.result()
            event = batch.waiter
            if event is None:
                event = batch.waiter = anyio.Event()
            await event.wait()  # type: ignore[attr-defined]

    def __repr__(self) -> str:
        batch, index = self.locate()
        state = "done" if batch.done else "pending"
        return f"<DeliveryHandle {batch.topic}-{batch.partition} #{index} {state}>"


def wake_waiters(batch: ProducerBatch) -> None:
    """Batch hook: a batch finished (or was split): wake whoever awaits its records."""
    event = batch.waiter
    if event is not None:
        batch.waiter = None
        event.set()  # type: ignore[attr-defined]


class Hooks:
    """What happens around records: interceptors see each send; when a batch finishes (or is
    split) its waiters wake, `on_progress` is called and interceptors see each record's
    outcome. Interceptors' exceptions are logged, never raised."""

    def __init__(
        self, interceptors: Sequence[ProducerInterceptor], on_progress: Callable[[], None]
    ) -> None:
        self.interceptors = tuple(interceptors)
        self._on_progress = on_progress

    def on_send(self, record: ProducerRecord) -> ProducerRecord:
        for interceptor in self.interceptors:
            hook = getattr(interceptor, "on_send", None)
            if hook is None:
                continue
            try:
                record = hook(record)
            except Exception:
                log.exception("producer interceptor %r failed in on_send", interceptor)
        return record

    def batch_done(self, batch: ProducerBatch) -> None:
        wake_waiters(batch)
        self._on_progress()
        if self.interceptors and batch.done:
            self._acknowledge(batch)

    def _acknowledge(self, batch: ProducerBatch) -> None:
        for interceptor in self.interceptors:
            hook = getattr(interceptor, "on_acknowledgement", None)
            if hook is None:
                continue
            for index in range(len(batch.records)):
                meta = metadata_of(batch, index) if batch.error is None else None
                try:
                    hook(meta, batch.error)
                except Exception:
                    log.exception("producer interceptor %r failed in on_acknowledgement", hook)


@dataclass(frozen=True, slots=True)
class ProducerRecord:
    """What an interceptor's `on_send` sees and may return changed."""

    topic: str
    value: bytes | None
    key: bytes | None = None
    headers: Sequence[Header] = ()
    partition: int | None = None
    timestamp: int | None = None


class ProducerInterceptor(Protocol):
    """Java's ProducerInterceptor: both hooks optional; their exceptions are logged, not raised."""

    def on_send(self, record: ProducerRecord) -> ProducerRecord: ...

    def on_acknowledgement(
        self, metadata: RecordMetadata | None, error: KrafkaError | None
    ) -> None: ...
