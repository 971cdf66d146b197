"""Rebalance cost: a third member joins a consuming group — cooperative vs eager.

One local Tansu broker, a 12-partition topic a producer keeps writing to, two krafka members
consuming in a group; then a third member subscribes. Measured from that moment:

- **time to all consuming**: until the assignment is complete again (12 partitions over the
  three members, the newcomer has some) and every member has received a record since its last
  assignment;
- **partitions paused**: partitions revoked from the first two members (under eager: all they
  had; under cooperative: only those that move to the newcomer);
- **records during the rebalance**: records the first two members received between the join and
  the moment the assignment is complete again (cooperative keeps retained partitions flowing;
  eager revokes everything before rejoining, so only records already buffered arrive).

Both protocols use the sticky assignor (`sticky` is its eager form, `cooperative-sticky` the
incremental one), so only the protocol differs. Rounds alternate; medians are printed.

Tansu shapes both times: it holds every join round for its 3 s rebalance delay, and it answers a
follower's SyncGroup only on a 1 s poll (up to 80% of the session timeout). Cooperative needs a
second round when partitions move; the members that revoked rejoin at once, the newcomer's
SyncGroup is still polling, misses that round and forces a third.

    python benches/rebalance.py [--rounds 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from krafka import AdminClient, Consumer, NewTopic, Producer, TopicPartition

PARTITIONS = 12


@dataclass
class Watch:
    """One member's rebalance listener and what it saw."""

    name: str
    revoked: set[TopicPartition] = field(default_factory=set)
    last_assigned_at: float = 0.0
    first_record_after_assign: float | None = None
    received_during: int = 0

    def on_partitions_revoked(self, partitions: set[TopicPartition]) -> None:
        self.revoked |= partitions

    def on_partitions_assigned(self, partitions: set[TopicPartition]) -> None:
        self.last_assigned_at = time.perf_counter()
        self.first_record_after_assign = None

    def on_partitions_lost(self, partitions: set[TopicPartition]) -> None:
        self.revoked |= partitions


@dataclass(frozen=True, slots=True)
class Result:
    seconds: float
    paused: int
    records_during: int


async def one_round(bootstrap: str, strategy: str) -> Result:
    topic = f"rebalance-{strategy}-{time.time_ns()}"
    group = f"g-{topic}"
    async with AdminClient(bootstrap) as admin:
        (await admin.create_topics([NewTopic(topic, PARTITIONS)])).raise_for_errors()
    stop = anyio.Event()

    async def produce() -> None:
        async with Producer(bootstrap, linger=0.005) as producer:
            i = 0
            while not stop.is_set():
                await producer.send(topic, b"x" * 100, partition=i % PARTITIONS)
                i += 1
                if i % 50 == 0:
                    await anyio.sleep(0.005)

    def member(watch: Watch) -> Consumer:
        return Consumer(
            bootstrap,
            group_id=group,
            partition_assignment_strategy=strategy,
            rebalance_listener=watch,
            auto_offset_reset="latest",
            fetch_max_wait=0.05,
            session_timeout=10.0,
            heartbeat_interval=0.5,
        )

    watches = [Watch("a"), Watch("b"), Watch("c")]
    consumers = [member(w) for w in watches]
    joined_at = 0.0
    joined = anyio.Event()
    assignment_complete = anyio.Event()

    async def consume(consumer: Consumer, watch: Watch) -> None:
        await consumer.subscribe([topic])
        while not stop.is_set():
            records = await consumer.poll(timeout=0.05)
            if not records:
                continue
            now = time.perf_counter()
            if watch.first_record_after_assign is None and watch.last_assigned_at:
                watch.first_record_after_assign = now
            if joined.is_set() and not assignment_complete.is_set():
                watch.received_during += len(records)

    def settled() -> bool:
        owned = [consumers[i].assignment() for i in range(3)]
        if sum(len(o) for o in owned) == PARTITIONS and all(owned):
            assignment_complete.set()
            return all(w.first_record_after_assign is not None for w in watches)
        return False

    async with anyio.create_task_group() as tg:
        tg.start_soon(produce)
        for consumer in consumers:
            await consumer.start()
        tg.start_soon(consume, consumers[0], watches[0])
        tg.start_soon(consume, consumers[1], watches[1])
        with anyio.fail_after(60):  # the first two share the partitions and consume
            while not (
                len(consumers[0].assignment()) + len(consumers[1].assignment()) == PARTITIONS
                and all(w.first_record_after_assign for w in watches[:2])
            ):
                await anyio.sleep(0.01)
        for w in watches[:2]:
            w.revoked.clear()
            w.received_during = 0
        joined_at = time.perf_counter()
        joined.set()
        tg.start_soon(consume, consumers[2], watches[2])
        with anyio.fail_after(60):
            while not settled():
                await anyio.sleep(0.005)
        seconds = time.perf_counter() - joined_at
        paused = len(watches[0].revoked | watches[1].revoked)
        stop.set()
    for consumer in consumers:
        await consumer.close()
    during = watches[0].received_during + watches[1].received_during
    return Result(seconds, paused, during)


async def main_async(bootstrap: str, rounds: int) -> None:
    results: dict[str, list[Result]] = {"sticky": [], "cooperative-sticky": []}
    for _ in range(rounds):
        for strategy in results:
            result = await one_round(bootstrap, strategy)
            results[strategy].append(result)
            print(
                f"  {strategy:20} {result.seconds:6.2f} s  paused {result.paused:2}  "
                f"records during {result.records_during}",
                flush=True,
            )
    print("\n## third member joins: 3 members, 12 partitions, Tansu (medians)")
    for strategy, runs in results.items():
        seconds = statistics.median(r.seconds for r in runs)
        print(
            f"{strategy:20} time to all consuming {seconds:5.2f} s"
            f"  partitions paused {statistics.median(r.paused for r in runs):4.1f}"
            f"  records consumed during the rebalance "
            f"{statistics.median(r.records_during for r in runs):8.0f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    from krafka.testing import LocalBroker

    with LocalBroker() as broker:
        anyio.run(main_async, broker.bootstrap_servers, args.rounds)


if __name__ == "__main__":
    main()
