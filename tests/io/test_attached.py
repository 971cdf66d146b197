"""Machines attached to a `KafkaClient` run in its one loop, under asyncio and trio: requests,
outcomes, events and deadlines; a machine that raises stops visibly; a running Producer and a
subscribed Consumer have one driver task (the client's loop) besides their sockets' tasks."""

from __future__ import annotations

import asyncio
import itertools
import sys
import uuid
from typing import Any

import anyio
import pytest

from krafka.errors import KrafkaError
from krafka.io.attached import AttachedMachine, Stopped
from krafka.io.client import KafkaClient
from krafka.io.consumer import Consumer
from krafka.io.producer import Producer
from krafka.protocol.messages import MetadataRequest, MetadataResponse
from krafka.sansio.actions import AnyBroker, Completed, Failed, SendRequest

pytestmark = [pytest.mark.anyio, pytest.mark.broker, pytest.mark.timeout(60)]


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
        attached = AttachedMachine(client, machine, on_event=events.append)
        attached.start()
        first, second = machine.count(anyio.current_time()), machine.count(anyio.current_time())
        assert await attached.outcome(second, timeout=5) == 1
        assert await attached.outcome(first, timeout=5) == 1
        await anyio.sleep(0.3)
        attached.stop()
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


async def test_a_machine_that_raises_stops_visibly(broker: Any) -> None:
    events: list[Any] = []
    async with KafkaClient(broker.bootstrap_servers) as client:
        attached = AttachedMachine(client, Broken(), on_event=events.append)
        attached.start()
        with anyio.fail_after(5):
            with pytest.raises(KrafkaError, match="machine bug"):
                await attached.outcome(1)  # wakes the loop: the machine's next step raises
    assert attached.error is not None and isinstance(attached.error.__cause__, ValueError)
    assert [type(e) for e in events] == [Stopped]
    assert not attached.running


def _task_names() -> list[str]:
    """Every task of the running event loop, by name (trio: system tasks included, which
    `anyio.get_running_tasks()` does not reach)."""
    if "trio" in sys.modules:
        import trio

        try:
            task = trio.lowlevel.current_root_task()
        except RuntimeError:
            task = None
        if task is not None:
            while task.parent_nursery is not None:
                task = task.parent_nursery.parent_task
            names, nurseries = [], list(task.child_nurseries)
            while nurseries:
                nursery = nurseries.pop()
                for child in nursery.child_tasks:
                    names.append(child.name)
                    nurseries.extend(child.child_nurseries)
            return names
    return [task.get_name() for task in asyncio.all_tasks()]


#: Per-socket transport tasks (a reader per socket, its writer, connecting and closing).
_TRANSPORT = ("krafka connection ", "krafka connect ", "krafka close ", "Sockets._writer")


def _drivers(before: list[str]) -> list[str]:
    """The tasks started since `before`, less the sockets' own."""
    started = list(_task_names())
    for name in before:
        if name in started:
            started.remove(name)
    return sorted(n for n in started if not any(part in n for part in _TRANSPORT))


#: What a client runs besides its sockets: the loop that steps its core, and the task that
#: holds the client's task group (it only waits for the client to close).
_ONE_DRIVER = ["krafka client loop", "krafka client runner"]


async def test_a_running_producer_has_one_driver_task(broker: Any) -> None:
    topic = f"one-driver-{uuid.uuid4().hex[:8]}"
    before = _task_names()
    async with Producer(bootstrap_servers=broker.bootstrap_servers, linger=0.001) as producer:
        handles = [await producer.send(topic, b"%d" % i) for i in range(50)]
        await producer.flush()
        assert all(handle.done for handle in handles)
        assert _drivers(before) == _ONE_DRIVER


async def test_a_subscribed_consumer_has_one_driver_task(broker: Any) -> None:
    topic, group = f"one-driver-{uuid.uuid4().hex[:8]}", f"g-{uuid.uuid4().hex[:8]}"
    async with Producer(bootstrap_servers=broker.bootstrap_servers) as producer:
        await producer.send_and_wait(topic, b"x")
    before = _task_names()
    async with Consumer(
        bootstrap_servers=broker.bootstrap_servers,
        group_id=group,
        auto_offset_reset="earliest",
        session_timeout=6.0,
    ) as consumer:
        await consumer.subscribe([topic])
        with anyio.fail_after(30):
            records: list[Any] = []
            while not records:
                records = await consumer.poll(timeout=1.0)
        await consumer.commit()
        assert _drivers(before) == _ONE_DRIVER


async def test_an_engine_that_raises_is_raised_from_the_producers_next_call(broker: Any) -> None:
    async with Producer(bootstrap_servers=broker.bootstrap_servers) as producer:
        engine = producer.engine

        def broken(now: float) -> list[Any]:
            raise ValueError("engine bug")

        engine.next_actions = broken  # type: ignore[method-assign]
        producer.driver.wake()
        with anyio.fail_after(10):
            while producer.driver.running:
                await anyio.sleep(0.01)
        with pytest.raises(KrafkaError, match="engine bug") as info:
            await producer.send("t", b"x")
        assert isinstance(info.value.__cause__, ValueError)
