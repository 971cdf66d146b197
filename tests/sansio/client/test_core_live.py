"""`ClientCore` + `ConsumerEngine` under a plain `selectors` loop against live brokers: join a
group, consume what the io Producer wrote, commit, read the commit back, leave."""

from __future__ import annotations

import time
from typing import Any

import anyio
import pytest
from _selector_loop import SelectorLoop

from krafka import Producer
from krafka.sansio.actions import Completed, Failed
from krafka.sansio.admin.cluster import DescribeCluster
from krafka.sansio.admin.operation import AdminOperation
from krafka.sansio.admin.routing import ToAnyBroker
from krafka.sansio.admin.topics import CLUSTER
from krafka.sansio.client import ClientConfig, ClientCore
from krafka.sansio.consumer.config import ConsumerConfig
from krafka.sansio.consumer.engine import ConsumerEngine
from krafka.sansio.consumer.events import (
    PartitionsAssigned,
    PartitionsLost,
    PartitionsRevoked,
    PollReady,
)
from krafka.sansio.consumer.fetcher import FetchConfig
from krafka.sansio.consumer.subscription import ResetStrategy
from krafka.sansio.group.classic.assignors import assignors_for
from krafka.sansio.group.config import GroupConfig
from krafka.structs import OffsetAndMetadata, TopicPartition

pytestmark = [pytest.mark.broker, pytest.mark.timeout(90)]

COUNT = 200
#: Long enough that a commit queued behind the long-poll Fetch would show.
LONG_POLL = 4.0


async def produce(bootstrap: str, topic: str) -> None:
    async with Producer(bootstrap_servers=bootstrap) as producer:
        for i in range(COUNT):
            await producer.send(topic, b"%d" % i, partition=i % 2)
        await producer.flush()


def engine_for(core: ClientCore, group: str) -> ConsumerEngine:
    config = ConsumerConfig(
        fetch=FetchConfig(fetch_max_wait=LONG_POLL),
        group=GroupConfig(
            group_id=group, session_timeout=6.0, heartbeat_interval=1.0, enable_auto_commit=False
        ),
        assignors=assignors_for("range"),
        auto_offset_reset=ResetStrategy.EARLIEST,
    )
    return ConsumerEngine(config, core.cluster)


class Outcomes:
    """Waits for one operation of the engine, answering rebalance steps on the way."""

    def __init__(self, engine: ConsumerEngine) -> None:
        self.engine = engine
        self.assigned: set[TopicPartition] = set()
        self.records: list[Any] = []
        self.results: dict[int, Completed | Failed] = {}

    def on_event(self, event: Any, now: float) -> bool:
        engine = self.engine
        if isinstance(event, PartitionsAssigned):
            self.assigned |= set(event.partitions)
            engine.rebalance_done(event, now)
        elif isinstance(event, PartitionsRevoked | PartitionsLost):
            self.assigned -= set(event.partitions)
            engine.rebalance_done(event, now)
        elif isinstance(event, PollReady):
            self.records += engine.poll(now)
        elif isinstance(event, Completed | Failed):
            self.results[event.op] = event
        return False

    def until_records(self, count: int) -> Any:
        def done(event: Any, now: float) -> bool:
            self.on_event(event, now)
            self.records += self.engine.poll(now)
            return len(self.records) >= count

        return done

    def until(self, op: int) -> Any:
        def done(event: Any, now: float) -> bool:
            self.on_event(event, now)
            return op in self.results

        return done

    def value(self, op: int) -> Any:
        result = self.results.pop(op)
        if isinstance(result, Failed):
            raise result.error
        return result.value


def test_a_selectors_loop_joins_consumes_and_commits(broker: Any) -> None:
    topic, group = f"core-live-{time.time_ns()}", f"core-g-{time.time_ns()}"
    anyio.run(produce, broker.bootstrap_servers, topic)
    core = ClientCore(ClientConfig(broker.bootstrap_servers, client_id="core-live"), now=0.0)
    loop = SelectorLoop(core)
    engine = engine_for(core, group)
    core.add(engine)
    outcomes = Outcomes(engine)
    started = time.monotonic()
    try:
        engine.subscribe([topic], started)
        loop.run_until(outcomes.until_records(COUNT), timeout=60)
        got = sorted((r.partition, r.offset) for r in outcomes.records)
        assert len(got) == COUNT and len(set(got)) == COUNT
        assert {tp.topic for tp in outcomes.assigned} == {topic}
        asked = time.monotonic()
        op = engine.commit(None, asked)
        answered = loop.run_until(outcomes.until(op), timeout=30)
        committed = outcomes.value(op)
        assert answered - asked < LONG_POLL / 2, "the commit waited behind the long poll"
        assert sum(o.offset for o in committed.values()) == COUNT
        tps = [TopicPartition(topic, 0), TopicPartition(topic, 1)]
        op = engine.committed(tps, time.monotonic())
        loop.run_until(outcomes.until(op), timeout=30)
        read_back = outcomes.value(op)
        assert {
            tp: o.offset for tp, o in read_back.items() if isinstance(o, OffsetAndMetadata)
        } == {
            TopicPartition(topic, 0): COUNT // 2,
            TopicPartition(topic, 1): COUNT // 2,
        }
        op = engine.close(time.monotonic(), 10.0)
        loop.run_until(outcomes.until(op), timeout=30)
        outcomes.value(op)
    finally:
        core.close(time.monotonic())
        loop.close()
    elapsed = time.monotonic() - started
    assert loop.spins <= 5, f"{loop.spins} spins in {loop.turns} turns"
    assert loop.turns < 200 * elapsed + 500


def test_admin_operations_run_side_by_side_in_one_core(broker: Any) -> None:
    core = ClientCore(ClientConfig(broker.bootstrap_servers, client_id="core-admin"), now=0.0)
    loop = SelectorLoop(core)
    operations = [
        AdminOperation(DescribeCluster(False), ToAnyBroker(), [CLUSTER], timeout=30.0)
        for _ in range(3)
    ]
    results: dict[int, Any] = {}

    def done(event: Any, now: float) -> bool:
        if isinstance(event, Completed | Failed):
            results[event.op] = event
        return len(results) == len(operations)

    try:
        for operation in operations:
            core.add(operation)
        ops = [operation.start(time.monotonic()) for operation in operations]
        loop.run_until(done, timeout=30)
    finally:
        core.close(time.monotonic())
        loop.close()
    assert sorted(results) == sorted(ops)
    described = [r.value[CLUSTER] for r in results.values() if isinstance(r, Completed)]
    assert len(described) == 3 and all(d.nodes for d in described)
    assert len({d.cluster_id for d in described}) == 1
