"""One run: fresh topics on a shared 3-node cluster, every workload at once, one fault from a
seeded schedule, then a drain (the group and the pipeline catch up with everything written),
the final reads, and the checker's report.

`fault_cluster()` starts the cluster: in network namespaces where the machine allows it
(`NetworkMode.NETNS`), else behind one FaultProxy per node (`NetworkMode.PROXY`).
"""

from __future__ import annotations

import contextlib
import os
import resource
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import anyio

from faultkit.checker import Report, check
from faultkit.history import History
from faultkit.nemesis import FaultKind, Lab, NetworkMode, Schedule, run_fault
from faultkit.workloads import (
    GroupMember,
    IdempotentWriter,
    PipelineWorker,
    Settings,
    Topics,
    TxnWriter,
    churn,
    ends_reached,
    read_all,
)
from krafka import AdminClient, Consumer, NewTopic, Producer, TopicPartition
from krafka.testing import netns
from krafka.testing.broker import free_port
from krafka.testing.kafka import KafkaCluster
from krafka.testing.proxy import FaultProxy

PARTITIONS = 3


@dataclass(frozen=True, slots=True)
class Shape:
    """How much load a run puts on: writers of each kind, group members, pipeline workers."""

    seconds: float = 6.0
    rate: float = 250.0
    idempotent_writers: int = 2
    txn_writers: int = 1
    members: int = 2
    pipeline_workers: int = 2
    pause: float = 4.0
    drain_timeout: float = 90.0
    #: Keep writing after `seconds` (the fault long over) until this many records were sent.
    records: int = 0
    #: The producers' delivery timeout: shorter than a fault, sends fail (indeterminate) and
    #: the idempotent producer must carry on in order past the expired batches.
    delivery_timeout: float = 60.0


@dataclass
class RunResult:
    schedule: Schedule
    backend: str
    mode: NetworkMode
    report: Report
    history: History
    log: list[str]
    wall: float
    drained: bool
    samples: list[tuple[int, int]] = field(default_factory=list)  # (rss KiB, open fds)

    def format(self) -> str:
        lines = [
            f"fault {self.schedule.kind.value} on {self.backend} ({self.mode.value}), "
            f"replay: python tests/faults/run.py {self.schedule.describe().split(':')[0]} "
            f"--backend {self.backend}",
            f"schedule: {self.schedule.describe()}; wall {self.wall:.1f} s; drained {self.drained}",
            *self.log,
            self.report.format(),
        ]
        if self.history.notes:
            lines.append(f"notes ({len(self.history.notes)}): " + "; ".join(self.history.notes[:5]))
        return "\n".join(lines)


@contextlib.contextmanager
def fault_cluster(
    directory: Path | None = None, mode: NetworkMode | None = None
) -> Iterator[tuple[KafkaCluster, NetworkMode, dict[int, FaultProxy]]]:
    """A started 3-node cluster ready for every fault; stopped (namespaces removed) on exit."""
    if mode is None:
        mode = NetworkMode.NETNS if netns.available() is None else NetworkMode.PROXY
    proxies: dict[int, FaultProxy] = {}
    options: dict[str, object] = {"directory": directory, "broker_config": _BROKER_CONFIG}
    if mode is NetworkMode.NETNS:
        options["netns"] = True
    else:
        proxies = {n: FaultProxy(("127.0.0.1", 1), port=free_port()) for n in (1, 2, 3)}
        options["advertised_ports"] = {n: p.port for n, p in proxies.items()}
    cluster = KafkaCluster(3, **options)  # type: ignore[arg-type]
    try:
        for node_id, proxy in proxies.items():
            proxy.target = ("127.0.0.1", cluster.node(node_id).ports["PLAINTEXT"])
            proxy.start()
        cluster.start()
        yield cluster, mode, proxies
    finally:
        cluster.close()
        for proxy in proxies.values():
            proxy.stop()


_BROKER_CONFIG = {
    "min.insync.replicas": "2",
    "unclean.leader.election.enable": "false",
}


async def run_scenario(
    cluster: KafkaCluster,
    mode: NetworkMode,
    proxies: dict[int, FaultProxy],
    kind: FaultKind,
    seed: int,
    backend: str,
    shape: Shape = Shape(),
    *,
    echo: bool = False,
) -> RunResult:
    started = time.monotonic()
    schedule = Schedule.draw(kind, seed, shape.seconds, shape.pause)
    run_id = f"{kind.value}-{seed}-{backend}-{time.time_ns() % 10**9}"
    topics = Topics(f"plain-{run_id}", f"txn-{run_id}", f"out-{run_id}", PARTITIONS)
    groups = (f"group-{run_id}", f"pipe-{run_id}")
    lab = Lab(cluster, mode, topics.plain, groups, proxies, echo=echo)
    lab.note(f"run {run_id}: {schedule.describe()}")
    await lab.wait_healthy()
    await _warm_up(lab.bootstrap, run_id)
    await _create_topics(lab.bootstrap, topics)
    history = History(pipeline=(topics.plain, topics.out))
    history.final_topics = {topics.plain, topics.txn, topics.out}
    settings = Settings(
        lab.bootstrap, rate=shape.rate, run=run_id, delivery_timeout=shape.delivery_timeout
    )
    samples: list[tuple[int, int]] = []
    drained = await _load(lab, schedule, shape, settings, topics, history, groups, samples)
    await lab.wait_healthy()
    lab.note("final reads")
    for isolation, reads in (
        ("read_committed", history.committed_reads),
        ("read_uncommitted", history.uncommitted_reads),
    ):
        partitions = [tp for t in (topics.plain, topics.txn, topics.out) for tp in topics.of(t)]
        reads.extend(await read_all(lab.bootstrap, partitions, isolation))
    report = check(history)
    return RunResult(
        schedule, backend, mode, report, history, lab.log, time.monotonic() - started, drained,
        samples,
    )  # fmt: skip


async def _warm_up(bootstrap: str, run_id: str) -> None:
    """The internal topics exist before any fault (__transaction_state, __consumer_offsets):
    their creation on a fresh cluster is not what the runs measure."""
    producer = Producer(bootstrap, transactional_id=f"warm-up-{run_id}")
    async with producer, Consumer(bootstrap, group_id=f"warm-up-{run_id}") as consumer:
        await consumer.committed([TopicPartition("warm-up", 0)])


async def _create_topics(bootstrap: str, topics: Topics) -> None:
    configs = {"min.insync.replicas": "2"}
    async with AdminClient(bootstrap) as admin:
        result = await admin.create_topics(
            [
                NewTopic(t, PARTITIONS, 3, configs=configs)
                for t in (topics.plain, topics.txn, topics.out)
            ]
        )
        result.raise_for_errors()


async def _load(
    lab: Lab,
    schedule: Schedule,
    shape: Shape,
    settings: Settings,
    topics: Topics,
    history: History,
    groups: tuple[str, str],
    samples: list[tuple[int, int]],
) -> bool:
    """Writers and the fault for `shape.seconds` (and until the fault is over), then the
    consumers until they caught up (True) or `drain_timeout` passed (False)."""
    stop = anyio.Event()
    consumers_done = False
    progress: dict[TopicPartition, int] = {}
    group, pipe = groups

    def done() -> bool:
        return consumers_done

    def member(name: str) -> GroupMember:
        return GroupMember(name, settings, topics, history, group)

    async def joiner(until: object) -> None:
        lab.rebalancing.set()
        await member("g-churn").run(until)  # type: ignore[arg-type]

    async with anyio.create_task_group() as consumers:
        for i in range(shape.members):
            consumers.start_soon(member(f"g{i}").run, done)
        for i in range(shape.pipeline_workers):
            worker = PipelineWorker(f"p{i}", settings, topics, history, pipe)
            consumers.start_soon(worker.run, done, progress)
        consumers.start_soon(_sample, samples, done)
        async with anyio.create_task_group() as writers:
            for i in range(shape.idempotent_writers):
                writer = IdempotentWriter(f"i{i}", settings, topics, history, schedule.seed + i)
                writers.start_soon(writer.run, stop)
            for i in range(shape.txn_writers):
                txn_writer = TxnWriter(f"t{i}", settings, topics, history, schedule.seed + 100 + i)
                writers.start_soon(txn_writer.run, stop)
            writers.start_soon(churn, joiner, stop)
            async with anyio.create_task_group() as fault:
                fault.start_soon(run_fault, schedule, lab)
                await anyio.sleep(shape.seconds)
            while len(history.sent) < shape.records:
                await anyio.sleep(0.5)
            stop.set()
            lab.note("load stopped; writers finishing")
        lab.note("writers done")
        await lab.wait_healthy()
        ends = await _end_offsets(lab.bootstrap, topics.of(topics.plain))
        lab.note(f"load over: {sum(ends.values())} records in {topics.plain}; draining")
        with anyio.move_on_after(shape.drain_timeout):
            while not _caught_up(progress, history, ends):
                await anyio.sleep(0.2)
        drained = _caught_up(progress, history, ends)
        lab.note(f"drained: {drained}")
        consumers_done = True
    return drained


def _caught_up(
    progress: dict[TopicPartition, int], history: History, ends: dict[TopicPartition, int]
) -> bool:
    """The pipeline and the group committed up to `ends`."""
    group = {tp: history.committed.get((tp.topic, tp.partition), 0) for tp in ends}
    return ends_reached(progress, ends) and ends_reached(group, ends)


async def _end_offsets(
    bootstrap: str, partitions: list[TopicPartition]
) -> dict[TopicPartition, int]:
    async with Consumer(bootstrap) as consumer:
        return await consumer.end_offsets(partitions)


async def _sample(samples: list[tuple[int, int]], done: object) -> None:
    while not done():  # type: ignore[operator]
        samples.append((resident_kib(), open_fds()))
        await anyio.sleep(1.0)


def resident_kib() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))
