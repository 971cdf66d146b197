"""The awaitable delivery handle `Producer.send` returns, and the producer record interceptors see.

A handle is `(batch, index)` made awaitable: `await handle` returns the record's
`RecordMetadata` or raises its delivery error. Awaiting a handle whose batch is done never
suspends and runs no coroutine (`await_delivery` is a generator that returns at once); waiting
for a pending batch costs one `anyio.Event` per *batch*, created only when someone waits and
kept here (`_WAITING`), not in the batch: batches are sans-IO state. The producer wakes them
(`wake_waiters`) when its engine reports the batch done (`BatchDone`).

Confirming every record means keeping one handle per record, often hundreds of thousands at
once. As Python objects they would be tracked by the garbage collector, whose full passes then
walk all of them again and again (measured: +0.5-0.8 µs per record). The compiled
`DeliveryHandle` (`krafka/io/_handle.pyx`) is the same handle in an untracked type: a handle
holds its batch but nothing reachable from a batch holds a handle (errors are raised as fresh
copies, see `fresh_error`), so
no reference cycle can run through one. `PureDeliveryHandle` is its readable twin and the
fallback (`KRAFKA_NO_EXTENSIONS=1`).
"""

from __future__ import annotations

import importlib
import logging
import os
from collections.abc import Generator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import anyio

from krafka.errors import KrafkaError
from krafka.sansio.producer.batch import ProducerBatch
from krafka.sansio.producer.record import (
    Header,
    RecordHandle,
    RecordMetadata,
    describe,
    fresh_error,
    locate,
    metadata_of,
    result_of,
)

log = logging.getLogger(__name__)

#: The event of every batch someone awaits, until the batch is reported done. Batches are
#: owned by one event loop each (one producer); dict operations are atomic, so producers on
#: several threads (`krafka.sync`) share it safely.
_WAITING: dict[ProducerBatch, Any] = {}


def await_delivery(handle: Any) -> Generator[Any, None, RecordMetadata]:
    """`handle.__await__`: the record's `RecordMetadata` at once if its batch is done."""
    batch = handle.batch
    if batch.done:  # a done batch was never split: `index` is current
        if batch.error is not None:
            raise fresh_error(batch.error)
        return metadata_of(batch, handle.index)
    return (yield from wait_delivery(handle).__await__())


async def wait_delivery(handle: Any) -> RecordMetadata:
    """Wait until the record's batch (or the half it went to) is done; its result."""
    while True:
        batch, index = locate(handle.batch, handle.index)
        if batch.done:
            return result_of(batch, index)
        await batch_event(batch).wait()


def batch_event(batch: ProducerBatch) -> Any:
    """The `anyio.Event` set when `batch` is reported done or split (made on first use)."""
    event = _WAITING.get(batch)
    if event is None:
        event = _WAITING[batch] = anyio.Event()
    return event


class PureDeliveryHandle(RecordHandle):
    """A record on its way; `await` it for its `RecordMetadata` (or its delivery error)."""

    __slots__ = ()

    __await__ = await_delivery

    def wait(self) -> Any:
        """Wait for the delivery (what `await handle` does)."""
        return wait_delivery(self)

    def __repr__(self) -> str:
        return describe(self, "DeliveryHandle")


def _import_compiled() -> Any:
    try:
        module = importlib.import_module("krafka.io._handle")
    except ImportError:
        return None
    module.configure(await_delivery, wait_delivery, locate, result_of, describe, RecordMetadata)
    return module.DeliveryHandle


def implementations() -> dict[str, Any]:
    """Every handle implementation importable here, by name (ignores KRAFKA_NO_EXTENSIONS;
    differential tests run them against each other)."""
    found: dict[str, Any] = {"pure": PureDeliveryHandle}
    compiled = _import_compiled()
    if compiled is not None:
        found["compiled"] = compiled
    return found


def _selected() -> Any:
    if os.environ.get("KRAFKA_NO_EXTENSIONS", "") not in ("", "0"):
        return PureDeliveryHandle
    return _import_compiled() or PureDeliveryHandle


if TYPE_CHECKING:
    DeliveryHandle = PureDeliveryHandle
else:
    DeliveryHandle = _selected()


def wake_waiters(batch: ProducerBatch) -> None:
    """A batch finished (or was split, `BatchDone`): wake whoever awaits its records (on the
    batch's event loop)."""
    event = _WAITING.pop(batch, None)
    if event is not None:
        event.set()


def waiting(batch: ProducerBatch) -> bool:
    """Someone awaits a record of `batch` (not woken yet)."""
    return batch in _WAITING


class Hooks:
    """The application's interceptors: each sees every send, and every record's outcome when
    its batch finishes. Their exceptions are logged, never raised (Java's rule): an `on_send`
    that raises, or returns something other than a `ProducerRecord`, leaves the record as it
    was."""

    def __init__(self, interceptors: Sequence[ProducerInterceptor]) -> None:
        self.interceptors = tuple(interceptors)

    def on_send(self, record: ProducerRecord) -> ProducerRecord:
        for interceptor in self.interceptors:
            hook = getattr(interceptor, "on_send", None)
            if hook is None:
                continue
            try:
                changed = hook(record)
            except Exception:
                log.exception("producer interceptor %r failed in on_send", interceptor)
                continue
            if isinstance(changed, ProducerRecord):
                record = changed
            else:
                log.error(
                    "producer interceptor %r returned %r from on_send, not a ProducerRecord: "
                    "the record is sent as it was",
                    interceptor,
                    changed,
                )
        return record

    def acknowledge(self, batch: ProducerBatch) -> None:
        """`batch` was delivered or failed: each interceptor sees each record's outcome."""
        for interceptor in self.interceptors:
            hook = getattr(interceptor, "on_acknowledgement", None)
            if hook is None:
                continue
            for index in range(batch.count):
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
