"""The awaitable delivery handle `Producer.send` returns, and the producer record interceptors see.

A handle is `(batch, index)` (`RecordHandle`) made awaitable: `await handle` returns the
record's `RecordMetadata` or raises its delivery error. Waiting costs one `anyio.Event` per
*batch*, created only when someone waits before the batch is done.
"""

from __future__ import annotations

from collections.abc import Generator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import anyio

from krafka.errors import KrafkaError
from krafka.sansio.producer.batch import ProducerBatch
from krafka.sansio.producer.record import Header, RecordHandle, RecordMetadata


class DeliveryHandle(RecordHandle):
    """A record on its way; `await` it for its `RecordMetadata` (or its delivery error)."""

    __slots__ = ()

    def __await__(self) -> Generator[Any, None, RecordMetadata]:
        return self.wait().__await__()

    async def wait(self) -> RecordMetadata:
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
