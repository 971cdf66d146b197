"""Runs any sans-IO machine (`krafka.sansio.actions.Machine`) on a `KafkaClient`, on anyio.

One loop per machine: take `next_actions(now)`, send each `SendRequest` in its own task and hand
the answer back (`on_response` / `on_failure`), pass events on, then sleep until the machine's
`next_deadline()` or until something wakes it (an answer arrived, the application called the
machine). The application's calls return operation ids; `outcome(op)` waits for the machine's
`Completed` / `Failed` event for it. The driver knows nothing about what the machine does.

A machine that raises (a bug, or input it was not written for) stops the driver with `error`
set: waiting operations fail with it and `on_event` gets `Stopped`, so the application learns
of it instead of waiting on a dead loop.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import anyio
import anyio.abc

from krafka.errors import KafkaTimeoutError, KrafkaError
from krafka.io.client import KafkaClient
from krafka.protocol.error_codes import ErrorCode
from krafka.sansio.actions import Completed, CoordinatorMoved, Failed, Machine, SendRequest

log = logging.getLogger(__name__)


class OutcomeTimeout(KafkaTimeoutError):
    """The wait for an operation's outcome ran out; the operation itself goes on."""


@dataclass(frozen=True, slots=True)
class Stopped:
    """The machine raised: the driver stopped for good (`error` says why)."""

    error: KrafkaError


class _Outcome:
    __slots__ = ("done", "error", "value")

    def __init__(self) -> None:
        self.done = anyio.Event()
        self.value: Any = None
        self.error: KrafkaError | None = None


class MachineDriver:
    """Drive `machine` with `client` until cancelled; events other than operation outcomes go to
    `on_event` (called in the driver's task, never inside the machine)."""

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
        self._wake = anyio.Event()
        self._outcomes: dict[int, _Outcome] = {}
        self._finished: dict[int, Completed | Failed] = {}
        self._tg: anyio.abc.TaskGroup | None = None
        #: Why the driver stopped (the machine raised), or None while it runs.
        self.error: KrafkaError | None = None

    async def run(
        self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        """The loop; start it with `task_group.start(driver.run)` and cancel the group to stop."""
        async with anyio.create_task_group() as tg:
            self._tg = tg
            task_status.started()
            while self.error is None:
                self._wake = anyio.Event()
                try:
                    self.step()
                    deadline = self.machine.next_deadline()
                except Exception as exc:
                    self._crashed(exc)
                    break
                delay = math.inf if deadline is None else deadline - anyio.current_time()
                if delay > 0:
                    with anyio.move_on_after(delay):
                        await self._wake.wait()
            tg.cancel_scope.cancel()

    def step(self) -> None:
        """Carry out what the machine wants now (sends start in tasks of the running loop)."""
        for action in self.machine.next_actions(anyio.current_time()):
            if isinstance(action, SendRequest):
                assert self._tg is not None, "driver is not running"
                self._tg.start_soon(self._send, action, name=f"{self.name} request")
            elif isinstance(action, Completed | Failed):
                self._settle(action)
            elif isinstance(action, CoordinatorMoved):
                self.client.report_error(ErrorCode.NOT_COORDINATOR)
            elif self._on_event is not None:
                self._on_event(action)

    def wake(self) -> None:
        """The machine has new input (an application call): run a step soon."""
        self._wake.set()

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

    async def _send(self, action: SendRequest[Any]) -> None:
        try:
            response = await self.client.execute(action)
        except KrafkaError as exc:
            failure: KrafkaError | None = exc
        except Exception as exc:  # a bug below must reach the machine, not kill the loop
            log.exception("%s: request %r crashed", self.name, action.request)
            failure = KrafkaError(repr(exc))
        else:
            failure = None
        if self.error is not None:
            return
        try:
            if failure is None:
                self.machine.on_response(action, response, anyio.current_time())
            else:
                self.machine.on_failure(action, failure, anyio.current_time())
        except Exception as exc:
            self._crashed(exc)
        self.wake()

    def _crashed(self, exc: Exception) -> None:
        """The machine raised: stop, fail every waiter, tell the owner (`Stopped`)."""
        log.error("%s stopped: the state machine raised %r", self.name, exc, exc_info=exc)
        error = KrafkaError(f"{self.name} stopped: its state machine raised {exc!r}")
        error.__cause__ = exc
        self.error = error
        for waiter in self._outcomes.values():
            waiter.error = error
            waiter.done.set()
        self.wake()
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
