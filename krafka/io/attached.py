"""A sans-IO machine (`krafka.sansio.actions.Machine`) attached to a `KafkaClient`'s core.

The client runs every machine of its core in its one loop (`KafkaClient.attach`): it routes
their requests and hands back the answers, and gives each event to the machine's owner. What is
left per machine is this: the application's calls return operation ids and `outcome(op)` waits
for the machine's `Completed` / `Failed` event for it (ids are unique process-wide); other
events go to `on_event`, called in the client's loop task; `wake()` says an application call
gave the machine input.

A machine that raises (a bug, or input it was not written for) is dropped by the core:
`error` is set, waiting operations fail with it and `on_event` gets `Stopped`, so the
application learns of it instead of waiting on a dead machine.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import anyio

from krafka.errors import InvalidStateError, KafkaTimeoutError, KrafkaError
from krafka.io.client import KafkaClient
from krafka.sansio.actions import Completed, Failed, Machine

log = logging.getLogger(__name__)


class OutcomeTimeout(KafkaTimeoutError):
    """The wait for an operation's outcome ran out; the operation itself goes on."""


@dataclass(frozen=True, slots=True)
class Stopped:
    """The machine raised: the core dropped it for good (`error` says why)."""

    error: KrafkaError


class _Outcome:
    __slots__ = ("done", "error", "value")

    def __init__(self) -> None:
        self.done = anyio.Event()
        self.value: Any = None
        self.error: KrafkaError | None = None


class AttachedMachine:
    """`machine` run by `client` from `start()` to `stop()`; events other than operation
    outcomes go to `on_event` (in the client's loop task, never inside the machine)."""

    def __init__(
        self,
        client: KafkaClient,
        machine: Machine,
        *,
        on_event: Callable[[Any], None] | None = None,
        name: str = "krafka machine",
    ) -> None:
        self.client = client
        self.machine = machine
        self.name = name
        self._on_event = on_event
        self._outcomes: dict[int, _Outcome] = {}
        self._finished: dict[int, Completed | Failed] = {}
        #: Why the machine stopped (it raised), or None while it runs.
        self.error: KrafkaError | None = None
        #: Between `start()` and `stop()` (or the machine raising).
        self.running = False
        #: The machine has new input (an application call): the client's loop steps soon (the
        #: client's own `wake`, bound here: appending producers call it per batch).
        self.wake = client.wake

    def start(self) -> None:
        """Add the machine to the (started) client's core: it runs from the next turn on."""
        self.client.attach(self.machine, self._deliver, self._crashed)
        self.running = True

    def stop(self) -> None:
        """Take the machine out of the core (answers still under way are dropped); operations
        still awaited fail."""
        if not self.running:
            return
        self.running = False
        self.client.detach(self.machine)
        closed = InvalidStateError(
            f"{self.name} stopped before the outcome came: the operation may or may not have "
            "been carried out"
        )
        for waiter in self._outcomes.values():
            waiter.error = closed
            waiter.done.set()

    def step(self) -> bool:
        """Step the client's core now (the machine's requests go out, its events come in);
        False when the client is not running."""
        return self.client.step()

    async def outcome(self, op: int, timeout: float | None = None) -> Any:
        """Wait for operation `op` to finish; its value, or its error raised (`OutcomeTimeout`
        when `timeout` runs out first: a later `outcome(op)` still gets it)."""
        if self.error is not None:
            raise self.error
        self.wake()
        result = self._finished.pop(op, None)
        if result is None:
            waiter = self._outcomes.setdefault(op, _Outcome())
            try:
                with anyio.move_on_after(timeout):
                    await waiter.done.wait()
            finally:
                self._outcomes.pop(op, None)
            if not waiter.done.is_set():
                raise OutcomeTimeout(f"{self.name}: no answer within {timeout}s")
            if waiter.error is not None:
                raise waiter.error
            return waiter.value
        if isinstance(result, Failed):
            raise result.error
        return result.value

    def _deliver(self, event: Any) -> None:
        """An event of the machine, from the client's loop."""
        if isinstance(event, Completed | Failed):
            self._settle(event)
        elif self._on_event is not None:
            self._on_event(event)

    def _crashed(self, raised: KrafkaError) -> None:
        """The machine raised: fail every waiter, tell the owner (`Stopped`)."""
        cause = raised.__cause__
        log.error("%s stopped: the state machine raised %r", self.name, cause, exc_info=cause)
        error = KrafkaError(f"{self.name} stopped: its state machine raised {cause!r}")
        error.__cause__ = cause
        self.error = error
        self.running = False
        for waiter in self._outcomes.values():
            waiter.error = error
            waiter.done.set()
        if self._on_event is not None:
            self._on_event(Stopped(error))

    def _settle(self, result: Completed | Failed) -> None:
        waiter = self._outcomes.get(result.op)
        if waiter is None:
            self._finished[result.op] = result
            return
        if isinstance(result, Failed):
            waiter.error = result.error
        else:
            waiter.value = result.value
        waiter.done.set()


__all__ = ["AttachedMachine", "OutcomeTimeout", "Stopped"]
