"""Classic groups under churn on a live cluster (Apache Kafka and Tansu): a slow handler
exceeding max_poll_interval, paused partitions kept across a cooperative rebalance, and a
rebalance storm of asyncio and trio members (a short one by default, the issue's 60 s /
100k-record one marked slow).

The storm runs on Apache Kafka. The librdkafka mock cluster completes a SyncGroup round as soon
as the leader's assignments arrive and answers followers whose SyncGroup comes later with
INVALID_REQUEST, so a group whose members sync at the same instant rarely settles there. Tansu
wedges a group whose leader leaves between its JoinGroup and SyncGroup answers (about one storm
in twenty): every later generation names the departed leader, which Tansu never removes (no
rejoin deadline, no session expiry for it), so the followers' SyncGroup is answered
REBALANCE_IN_PROGRESS for ever (seen in a replay with each JoinGroup's leader logged: 90 s of
generation 6 led by a member that had left in generation 3). Java's members loop the same way
there; Apache Kafka removes the member and settles."""

from __future__ import annotations

import random
import threading
import time
from collections import Counter
from functools import partial
from typing import Any

import _groups
import anyio
import pytest
from _groups import make_topic

from krafka import Consumer, Producer, TopicPartition
from krafka.errors import CommitFailedError, RebalanceInProgressError

pytestmark = [pytest.mark.anyio, pytest.mark.broker]


def member(bootstrap: str, group: str, **kw: Any) -> Consumer:
    """A cooperative-sticky member with quick heartbeats (see `_groups.member`)."""
    options = {"heartbeat_interval": 0.3, "partition_assignment_strategy": "cooperative-sticky"}
    return _groups.member(bootstrap, group, **{**options, **kw})


@pytest.mark.one_backend
@pytest.mark.timeout(90)
async def test_slow_handler_leaves_and_rejoins(broker: Any) -> None:
    topic = await make_topic(broker.bootstrap_servers, 2, prefix="live")
    group = f"slow-{time.time_ns()}"
    async with (
        member(broker.bootstrap_servers, group, max_poll_interval=2.0) as slow,
        member(broker.bootstrap_servers, group) as steady,
    ):
        await slow.subscribe([topic])
        await steady.subscribe([topic])
        with anyio.fail_after(30):
            while not (slow.assignment() and steady.assignment()):
                await slow.poll(timeout=0.1)
                await steady.poll(timeout=0.1)
        # the slow member's handler runs 4 s: past max_poll_interval it leaves the group
        with anyio.fail_after(30):
            started = anyio.current_time()
            while anyio.current_time() - started < 4.0 or len(steady.assignment()) < 2:
                await steady.poll(timeout=0.2)
        assert len(steady.assignment()) == 2
        # polling again rejoins: the partitions are shared again, no generation stuck
        with anyio.fail_after(30):
            while not slow.assignment() or len(steady.assignment()) != 1:
                await slow.poll(timeout=0.1)
                await steady.poll(timeout=0.1)
        assert slow.assignment().isdisjoint(steady.assignment())


@pytest.mark.one_backend
@pytest.mark.timeout(90)
async def test_paused_partitions_stay_paused_when_retained(broker: Any) -> None:
    topic = await make_topic(broker.bootstrap_servers, 4, prefix="live")
    group = f"pause-{time.time_ns()}"
    async with member(broker.bootstrap_servers, group) as first:
        await first.subscribe([topic])
        with anyio.fail_after(30):
            while len(first.assignment()) < 4:
                await first.poll(timeout=0.1)
        for tp in first.assignment():
            first.pause(tp)
        async with member(broker.bootstrap_servers, group) as second:
            await second.subscribe([topic])
            with anyio.fail_after(30):
                while not second.assignment() or len(first.assignment()) == 4:
                    await first.poll(timeout=0.1)
                    await second.poll(timeout=0.1)
            assert first.paused() == first.assignment()
            assert first.assignment() | second.assignment() == {
                TopicPartition(topic, p) for p in range(4)
            }


class Storm:
    """Members join and leave a group at random for `seconds` while a producer writes keyed
    records, half of them on asyncio, half on trio (an event loop in a second thread); then the
    churn stops and the group drains the topic. Every record must be consumed at least once;
    duplicates (records consumed again after an uncommitted window) are counted and printed.

    Members stay 2-6 s: on Tansu every join waits out its 3 s rebalance delay, so shorter stays
    would only measure joins that never finish."""

    def __init__(self, bootstrap: str, topic: str, seconds: float, records: int) -> None:
        self.bootstrap, self.topic, self.seconds, self.records = bootstrap, topic, seconds, records
        self.group = f"storm-{time.time_ns()}"
        self.seen: Counter[bytes] = Counter()
        self.failed_commits: Counter[str] = Counter()
        self.lock = threading.Lock()
        self.calm = threading.Event()
        self.done = threading.Event()

    async def produce(self) -> None:
        async with Producer(self.bootstrap, linger=0.01) as producer:
            for i in range(self.records):
                await producer.send(self.topic, b"%d" % i, key=b"%d" % (i % 97))
                if i % 200 == 0:
                    await anyio.sleep(self.seconds / (self.records / 200))
            await producer.flush()

    async def members(self, count: int, seed: int) -> None:
        async with anyio.create_task_group() as tg:
            for index in range(count):
                tg.start_soon(self.member, random.Random(seed * 100 + index))

    async def member(self, rng: random.Random) -> None:
        while not self.done.is_set():
            async with member(self.bootstrap, self.group) as consumer:
                await consumer.subscribe([self.topic])
                stay = anyio.current_time() + rng.uniform(2.0, 6.0)
                while not self.done.is_set() and (
                    self.calm.is_set() or anyio.current_time() < stay
                ):
                    batch = await consumer.poll(timeout=0.1)
                    with self.lock:
                        self.seen.update(r.value for r in batch)
                    if batch:
                        try:
                            await consumer.commit()
                        except (RebalanceInProgressError, CommitFailedError) as exc:
                            # Java's contract: these records stay uncommitted and the next
                            # owner consumes them again (counted as duplicates)
                            with self.lock:
                                self.failed_commits[type(exc).__name__] += 1
            await anyio.sleep(rng.uniform(0.0, 1.0))

    async def run(self, members: int) -> None:
        trio_members = members // 2
        async with anyio.create_task_group() as tg:
            tg.start_soon(self.members, members - trio_members, 1)
            tg.start_soon(
                partial(anyio.to_thread.run_sync, abandon_on_cancel=True),
                partial(anyio.run, self.members, trio_members, 2, backend="trio"),
            )
            try:
                with anyio.fail_after(self.seconds * 2 + 30):
                    await self.produce()
                self.calm.set()
                with anyio.fail_after(90):
                    while len(self.seen) < self.records:
                        await anyio.sleep(0.2)
            finally:
                self.done.set()
        duplicates = sum(self.seen.values()) - len(self.seen)
        print(
            f"\nstorm: {self.records} records, {len(self.seen)} distinct consumed, "
            f"{duplicates} duplicates, failed commits {dict(self.failed_commits)}"
        )
        assert set(self.seen) == {b"%d" % i for i in range(self.records)}


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
@pytest.mark.timeout(180)
async def test_short_rebalance_storm(kafka: Any) -> None:
    topic = await make_topic(kafka.bootstrap_servers, 6, prefix="live")
    await Storm(kafka.bootstrap_servers, topic, seconds=8.0, records=4000).run(members=4)


@pytest.mark.slow
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
@pytest.mark.timeout(600)
async def test_rebalance_storm_sixty_seconds(kafka: Any) -> None:
    topic = await make_topic(kafka.bootstrap_servers, 6, prefix="live")
    await Storm(kafka.bootstrap_servers, topic, seconds=60.0, records=100_000).run(members=6)
