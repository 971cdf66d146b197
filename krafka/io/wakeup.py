"""`wakeup()` of the consumers (Java's WakeupTrigger): the consumer call blocked at that moment,
or else the next one that would block, raises `WakeupError` once per wakeup.

Lives on the consumer's event loop: `wakeup` is called from another task (the sync clients
hand it to their loop thread), and the waits it may interrupt run in `interruptible`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

import anyio

from krafka.errors import WakeupError

T = TypeVar("T")


class WakeupTrigger:
    """One consumer's pending wakeup and the waits it interrupts."""

    def __init__(self, client: str) -> None:
        self._client = client
        self._pending = False
        self._blocked: set[anyio.CancelScope] = set()

    def wakeup(self) -> None:
        """Interrupt the blocked calls, or the next one if none is blocked."""
        self._pending = True
        for scope in self._blocked:
            scope.cancel()

    @property
    def pending(self) -> bool:
        """A wakeup waits for the next call."""
        return self._pending

    def check(self) -> None:
        """Raise `WakeupError` (once) if a wakeup is pending."""
        if self._pending:
            self._pending = False
            raise WakeupError(f"the {self._client} was woken up (wakeup() was called)")

    async def interruptible(self, wait: Callable[[], Awaitable[T]]) -> T:
        """`await wait()`, unless a wakeup comes first (or is pending): `WakeupError` then."""
        self.check()
        with anyio.CancelScope() as scope:
            self._blocked.add(scope)
            try:
                return await wait()
            finally:
                self._blocked.discard(scope)
        self._pending = True
        self.check()
        raise AssertionError("unreachable")


__all__ = ["WakeupTrigger"]
