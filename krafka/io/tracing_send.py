"""`send` of a traced producer in the default mode (`krafka.io.tracing`): the caller's current
OpenTelemetry context is read per record (one C call, compared by identity with the context
where nothing was attached); a record sent with no context takes `Producer.send`'s fast path,
one sent in a context (or with headers) goes through `Producer._carrying_send`.

The compiled twin (`_tracing_send.pyx`) is the same closure as a Cython coroutine (still a
`collections.abc.Coroutine`, so `create_task` and `start_soon` take it); this pure one is the
readable reference and the fallback (`KRAFKA_NO_EXTENSIONS=1`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from krafka import _twins
from krafka.sansio.producer.record import Header


def pure_context_send(producer: Any, tracing: Any) -> Callable[..., Awaitable[Any]]:
    """`producer`'s `send` with tracing on (default mode)."""
    current, empty = tracing.current_context, tracing.empty_context
    append_open, engine = producer._append_open, producer._engine
    send_checked, attend, carrying = (
        producer._send_checked,
        producer._attend,
        producer._carrying_send,
    )

    async def send(
        topic: str,
        value: bytes | None = None,
        key: bytes | None = None,
        *,
        headers: Sequence[Header] | None = None,
        partition: int | None = None,
        timestamp: int | None = None,
    ) -> Any:
        context = current()
        if context is not empty or headers or timestamp is not None or not producer.direct:
            return await carrying(context, topic, value, key, headers, partition, timestamp)
        try:
            handle = append_open(topic, partition, None, key, value)
        except (TypeError, ValueError):
            return await carrying(context, topic, value, key, headers, partition, timestamp)
        if handle is None or type(handle) is int:
            chosen = partition if handle is None else handle
            return await send_checked(topic, value, key, None, chosen, None)
        if engine.due:
            await attend()
        return handle

    return send


def implementations() -> dict[str, Any]:
    """Every implementation importable here, by name (ignores KRAFKA_NO_EXTENSIONS)."""
    return _twins.implementations(pure_context_send, "krafka.io._tracing_send", "context_send")


context_send: Callable[[Any, Any], Callable[..., Awaitable[Any]]] = _twins.selected(
    implementations()
)

__all__ = ["context_send", "implementations", "pure_context_send"]
