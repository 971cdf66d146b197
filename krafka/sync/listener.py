"""`OnCallerListener`: a sync consumer's rebalance listener, run on the application's thread.

Java runs a `ConsumerRebalanceListener` on the thread that called `poll()` (or `close()`,
`unsubscribe()`), so a callback may use the consumer: `commitSync` in `onPartitionsRevoked`
is the usual pattern. The async consumer runs its listener inside `poll` on the loop; this
wrapper hands each plain callback to the thread blocked in the sync call waiting for that
poll (`LoopThread.on_caller`) and awaits its outcome there. Coroutine callbacks run on the
loop, as they do for the async consumer.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import Any

_CALLBACKS = frozenset({"on_partitions_assigned", "on_partitions_revoked", "on_partitions_lost"})


class OnCallerListener:
    """`listener`'s callbacks, each plain one run through `run_on_caller(callback, partitions)`."""

    __slots__ = ("_run_on_caller", "listener")

    def __init__(self, listener: Any, run_on_caller: Callable[..., Awaitable[Any]]) -> None:
        self.listener = listener
        self._run_on_caller = run_on_caller

    def __getattr__(self, name: str) -> Any:
        callback = getattr(self.listener, name)
        if name not in _CALLBACKS or inspect.iscoroutinefunction(callback):
            return callback
        run_on_caller = self._run_on_caller

        async def on_caller(partitions: Any) -> Any:
            return await run_on_caller(callback, partitions)

        return on_caller


def on_caller(listener: Any, run_on_caller: Callable[..., Awaitable[Any]]) -> Any:
    """`listener` wrapped (None stays None; an already wrapped one is kept)."""
    if listener is None or isinstance(listener, OnCallerListener):
        return listener
    return OnCallerListener(listener, run_on_caller)


__all__ = ["OnCallerListener", "on_caller"]
