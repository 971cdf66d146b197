"""Faults on a 3-node cluster, each from a seeded schedule: when it starts, how long it lasts
and which node it hits (chosen from what the cluster says: partition leaders and group
coordinators from krafka's own AdminClient and FindCoordinator, the active controller from
the DescribeQuorum API).

The network partition cuts the link between the client and one broker: with `netns` (root
and `ip`) each node runs in its own network namespace and the client's link to it goes down;
otherwise (`proxy`) every node advertises a FaultProxy in front of it that stops forwarding.
"""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from enum import Enum

import anyio

from krafka import AdminClient
from krafka.io.client import KafkaClient
from krafka.protocol.messages import DescribeQuorumRequest
from krafka.testing.kafka import KafkaCluster
from krafka.testing.proxy import FaultProxy

METADATA_TOPIC = "__cluster_metadata"
_REBALANCING = ("PreparingRebalance", "CompletingRebalance")


class FaultKind(Enum):
    KILL_LEADER = "kill-leader"
    KILL_CONTROLLER = "kill-controller"
    PAUSE = "pause"
    ROLLING_RESTART = "rolling-restart"
    KILL_COORDINATOR = "kill-coordinator"
    PARTITION = "partition"
    NONE = "none"


class NetworkMode(Enum):
    NETNS = "netns"
    PROXY = "proxy"


@dataclass
class Lab:
    """What a fault acts on: the cluster, how its network is cut, and the run's topics and
    groups; `rebalancing` is set whenever a member starts joining the group."""

    cluster: KafkaCluster
    mode: NetworkMode
    topic: str
    groups: tuple[str, ...]
    proxies: dict[int, FaultProxy] = field(default_factory=dict)
    rebalancing: anyio.Event = field(default_factory=anyio.Event)
    log: list[str] = field(default_factory=list)
    echo: bool = False

    @property
    def bootstrap(self) -> str:
        if self.mode is NetworkMode.PROXY:
            return ",".join(p.bootstrap_servers for p in self.proxies.values())
        return self.cluster.bootstrap_servers

    def note(self, what: str) -> None:
        self.log.append(f"{anyio.current_time():.1f} {what}")
        if self.echo:
            print(self.log[-1], flush=True)

    async def leader_of(self, partition: int) -> int:
        for _ in range(20):
            async with AdminClient(self.bootstrap, request_timeout=5) as admin:
                found = (await admin.describe_topics([self.topic])).raise_for_errors()
            for info in found[self.topic].partitions:
                if info.partition == partition and info.leader is not None:
                    return info.leader
            await anyio.sleep(0.5)
        raise LookupError(f"{self.topic}-{partition} has no leader")

    async def active_controller(self) -> int:
        async with KafkaClient(self.bootstrap, request_timeout=5) as client:
            request = DescribeQuorumRequest(
                topics=[
                    DescribeQuorumRequest.TopicData(
                        topic_name=METADATA_TOPIC,
                        partitions=[
                            DescribeQuorumRequest.TopicData.PartitionData(partition_index=0)
                        ],
                    )
                ]
            )
            response = await client.send(request)
        leader = response.topics[0].partitions[0].leader_id
        if leader < 0:
            raise LookupError("the quorum has no leader")
        return int(leader)

    async def wait_rebalancing(self, group: str, timeout: float = 5.0) -> str:
        """The group's state once it is rebalancing (or whatever it is after `timeout`)."""
        state = "unknown"
        async with AdminClient(self.bootstrap, request_timeout=5) as admin:
            with anyio.move_on_after(timeout):
                while True:
                    found = (await admin.describe_groups([group])).get(group)
                    state = getattr(getattr(found, "state", None), "value", "unknown")
                    if state in _REBALANCING:
                        break
                    await anyio.sleep(0.05)
        return state

    async def coordinator_of(self, group: str) -> int:
        async with KafkaClient(self.bootstrap, request_timeout=5) as client:
            return (await client.find_coordinator(group)).node_id

    # -- node actions (blocking ones in a thread) -----------------------------------------------

    async def kill(self, node: int) -> None:
        self.note(f"SIGKILL node {node}")
        await anyio.to_thread.run_sync(self.cluster.kill, node)

    async def start(self, node: int) -> None:
        self.note(f"start node {node}")
        await anyio.to_thread.run_sync(lambda: self.cluster.start_node(node, wait=False))

    async def wait_healthy(self, timeout: float = 120.0) -> None:
        """Every node running, reachable and registered (a fault's damage repaired, also
        one an earlier failed run left behind)."""
        for node in self.cluster.nodes:
            self.cluster.resume(node.node_id)
            if not node.running:
                await self.start(node.node_id)
        if self.cluster.network is not None:
            self.cluster.network.heal()
        for proxy in self.proxies.values():
            proxy.heal()
        await anyio.to_thread.run_sync(lambda: self.cluster.wait_ready(timeout))

    def isolate(self, node: int) -> None:
        self.note(f"partition client | node {node} ({self.mode.value})")
        if self.mode is NetworkMode.NETNS:
            assert self.cluster.network is not None
            self.cluster.network.isolate(node)
        else:
            self.proxies[node].partition()

    def heal(self, node: int) -> None:
        self.note(f"heal client | node {node}")
        if self.mode is NetworkMode.NETNS:
            assert self.cluster.network is not None
            self.cluster.network.heal(node)
        else:
            self.proxies[node].heal()


@dataclass(frozen=True, slots=True)
class Schedule:
    """When the fault starts (seconds into the load) and how long it lasts."""

    kind: FaultKind
    seed: int
    start: float
    duration: float
    partition: int

    @classmethod
    def draw(cls, kind: FaultKind, seed: int, seconds: float, pause: float) -> Schedule:
        rng = random.Random(f"{kind.value}/{seed}")
        start = seconds * rng.uniform(0.15, 0.3)
        duration = pause if kind is FaultKind.PAUSE else seconds * rng.uniform(0.25, 0.45)
        return cls(kind, seed, start, duration, rng.randrange(3))

    def describe(self) -> str:
        return (
            f"--fault {self.kind.value} --seed {self.seed}: at {self.start:.1f} s for "
            f"{self.duration:.1f} s, partition {self.partition}"
        )


async def run_fault(schedule: Schedule, lab: Lab) -> None:
    """Carry out one schedule (the caller runs it beside the load)."""
    await anyio.sleep(schedule.start)
    await _ACTIONS[schedule.kind](schedule, lab)


async def _kill_leader(schedule: Schedule, lab: Lab) -> None:
    node = await lab.leader_of(schedule.partition)
    await _kill_for(node, schedule.duration, lab, f"leader of partition {schedule.partition}")


async def _kill_controller(schedule: Schedule, lab: Lab) -> None:
    node = await lab.active_controller()
    await _kill_for(node, schedule.duration, lab, "active controller")


async def _kill_for(node: int, seconds: float, lab: Lab, why: str) -> None:
    lab.note(f"{why} is node {node}")
    await lab.kill(node)
    await anyio.sleep(seconds)
    await lab.start(node)


async def _pause(schedule: Schedule, lab: Lab) -> None:
    node = await lab.leader_of(schedule.partition)
    lab.note(f"SIGSTOP node {node} (leader of partition {schedule.partition})")
    lab.cluster.pause(node)
    try:
        await anyio.sleep(schedule.duration)
    finally:
        lab.note(f"SIGCONT node {node}")
        lab.cluster.resume(node)


async def _rolling_restart(schedule: Schedule, lab: Lab) -> None:
    for node in [n.node_id for n in lab.cluster.nodes]:
        lab.note(f"SIGTERM node {node} (rolling restart)")
        await anyio.to_thread.run_sync(lab.cluster.stop_node, node)
        await lab.start(node)
        await anyio.to_thread.run_sync(lambda: lab.cluster.wait_ready(120.0))
        lab.note(f"node {node} back")


async def _kill_coordinator(schedule: Schedule, lab: Lab) -> None:
    """Kill the churned group's coordinator while the group is rebalancing (a member joining:
    the coordinator reports PreparingRebalance or CompletingRebalance)."""
    group = lab.groups[0]
    lab.rebalancing = anyio.Event()
    with anyio.move_on_after(5):
        await lab.rebalancing.wait()
    state = await lab.wait_rebalancing(group)
    node = await lab.coordinator_of(group)
    await _kill_for(node, schedule.duration, lab, f"coordinator of {group} ({state})")


async def _partition(schedule: Schedule, lab: Lab) -> None:
    node = await lab.leader_of(schedule.partition)
    lab.isolate(node)
    try:
        await anyio.sleep(schedule.duration)
    finally:
        lab.heal(node)


async def _nothing(schedule: Schedule, lab: Lab) -> None:
    return None


_ACTIONS: dict[FaultKind, Callable[[Schedule, Lab], Awaitable[None]]] = {
    FaultKind.KILL_LEADER: _kill_leader,
    FaultKind.KILL_CONTROLLER: _kill_controller,
    FaultKind.PAUSE: _pause,
    FaultKind.ROLLING_RESTART: _rolling_restart,
    FaultKind.KILL_COORDINATOR: _kill_coordinator,
    FaultKind.PARTITION: _partition,
    FaultKind.NONE: _nothing,
}
