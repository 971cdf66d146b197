"""MachineDriver runs a sans-IO machine against a real broker, under asyncio and trio."""

from __future__ import annotations

import itertools
from typing import Any

import anyio
import pytest

from krafka.errors import KrafkaError
from krafka.io.client import KafkaClient
from krafka.io.driver import MachineDriver, Stopped
from krafka.protocol.messages import MetadataRequest, MetadataResponse
from krafka.sansio.actions import AnyBroker, Completed, Failed, SendRequest

pytestmark = [pytest.mark.anyio, pytest.mark.broker, pytest.mark.timeout(30)]


class BrokerCounter:
    """A tiny machine: each `count(now)` asks Metadata and completes with the broker count;
    it also wants a tick every 50 ms (an event), to show deadlines are honoured."""

    def __init__(self) -> None:
        self.ops = itertools.count(1)
        self.queue: list[Any] = []
        self.asked: dict[SendRequest[Any], int] = {}
        self.tick_at = 0.0
        self.ticks = 0

    def count(self, now: float) -> int:
        op = next(self.ops)
        sent = SendRequest(AnyBroker(), MetadataRequest(topics=[]))
        self.asked[sent] = op
        self.queue.append(sent)
        return op

    def next_actions(self, now: float) -> list[Any]:
        actions, self.queue = self.queue, []
        if now >= self.tick_at:
            self.ticks += 1
            self.tick_at = now + 0.05
            actions.append(("tick", self.ticks))
        return actions

    def on_response(self, sent: SendRequest[Any], response: Any, now: float) -> None:
        assert isinstance(response, MetadataResponse)
        self.queue.append(Completed(self.asked.pop(sent), len(response.brokers)))

    def on_failure(self, sent: SendRequest[Any], error: KrafkaError, now: float) -> None:
        self.queue.append(Failed(self.asked.pop(sent), error))

    def next_deadline(self) -> float | None:
        return self.tick_at


async def test_requests_outcomes_events_and_deadlines(broker: Any) -> None:
    machine = BrokerCounter()
    events: list[Any] = []
    async with KafkaClient(broker.bootstrap_servers) as client:
        driver = MachineDriver(client, machine, on_event=events.append)
        async with anyio.create_task_group() as tg:
            await tg.start(driver.run)
            first, second = machine.count(anyio.current_time()), machine.count(anyio.current_time())
            assert await driver.outcome(second, timeout=5) == 1
            assert await driver.outcome(first, timeout=5) == 1
            await anyio.sleep(0.3)
            tg.cancel_scope.cancel()
    assert 3 <= len(events) <= 12 and events[0] == ("tick", 1)


class Broken:
    """A machine that raises once asked for its second step (a bug, or input it cannot take)."""

    def __init__(self) -> None:
        self.steps = 0

    def next_actions(self, now: float) -> list[Any]:
        self.steps += 1
        if self.steps > 1:
            raise ValueError("machine bug")
        return []

    def on_response(self, sent: SendRequest[Any], response: Any, now: float) -> None: ...

    def on_failure(self, sent: SendRequest[Any], error: KrafkaError, now: float) -> None: ...

    def next_deadline(self) -> float | None:
        return None


async def test_a_machine_that_raises_stops_the_driver_visibly() -> None:
    events: list[Any] = []
    driver = MachineDriver(KafkaClient("127.0.0.1:1"), Broken(), on_event=events.append)
    async with anyio.create_task_group() as tg:
        await tg.start(driver.run)
        with anyio.fail_after(5):
            with pytest.raises(KrafkaError, match="machine bug"):
                await driver.outcome(1)  # wakes the driver: its next step raises
        tg.cancel_scope.cancel()
    assert driver.error is not None and isinstance(driver.error.__cause__, ValueError)
    assert [type(e) for e in events] == [Stopped]
