"""A group member on a real cluster, attached to a client's core (`AttachedMachine`), with a
stand-in application loop: it polls every 50 ms, answers every listener step at once
(auto-commits commit nothing) and, as the io consumer does, looks its topic up again while the
cluster does not know it yet; metadata rounds reach the member as partition counts. For io
tests of the sans-IO member; the io Consumer integrates it for real."""

from __future__ import annotations

from typing import Any

import anyio

from krafka.io.attached import AttachedMachine
from krafka.io.client import KafkaClient
from krafka.protocol.messages import SyncGroupRequest
from krafka.sansio.actions import Machine, SendRequest
from krafka.sansio.group import (
    CommitPositions,
    GroupConfig,
    GroupFailed,
    GroupMember,
)
from krafka.sansio.metadata import ClusterMetadata
from krafka.testing.machine_proxy import MachineProxy


class App:
    """One member with its driver and a stand-in application loop that polls and runs a
    listener that does nothing but answer."""

    def __init__(
        self,
        client: KafkaClient,
        group: str,
        topic: str,
        assignor: Any,
        session_timeout: float = 6.0,  # Apache Kafka refuses less (group.min.session.timeout.ms)
    ) -> None:
        self.client = client
        self.topic = topic
        config = GroupConfig(
            group_id=group,
            session_timeout=session_timeout,
            heartbeat_interval=0.5,
            enable_auto_commit=False,
            retry_backoff=0.05,
            retry_backoff_max=0.5,
        )
        self.member = GroupMember(config, [assignor])
        self.events: list[Any] = []
        self.driver = AttachedMachine(
            client, _Counted(self.member, client.metadata), on_event=self.events.append
        )
        self.steps: list[Any] = []
        self.failures: list[Any] = []

    async def metadata(self, topics: list[str]) -> None:
        meta = await self.client.refresh_metadata(topics)
        counts = {t: len(meta.partitions_for(t)) for t in topics if meta.partitions_for(t)}
        self.member.update_metadata(counts, anyio.current_time())

    async def run(self, *, task_status: Any = anyio.TASK_STATUS_IGNORED) -> None:
        await self.metadata([self.topic])
        self.member.subscribe([self.topic], anyio.current_time())
        task_status.started()
        while True:
            if self.topic not in self.client.metadata.partition_counts:
                await self.metadata([self.topic])  # as the io consumer: until it exists
            self.member.poll(anyio.current_time())
            while self.events:
                event = self.events.pop(0)
                if isinstance(event, GroupFailed):
                    self.failures.append(event.error)
                elif hasattr(event, "step"):
                    self.steps.append(event)
                    offsets = {} if isinstance(event, CommitPositions) else None
                    self.member.listener_done(event.step, anyio.current_time(), offsets)
            self.driver.wake()
            await anyio.sleep(0.05)


class _Counted(MachineProxy):
    """The member as the core runs it: each metadata round reaches it as partition counts."""

    def __init__(self, member: GroupMember, metadata: ClusterMetadata) -> None:
        super().__init__(member)
        self.member = member
        self.metadata = metadata

    def metadata_updated(self, now: float) -> None:
        self.member.update_metadata(dict(self.metadata.partition_counts), now)


class _SyncsLate(MachineProxy):
    """Holds a leader's SyncGroup (the one carrying assignments) back 0.3 s."""

    def outgoing(self, sent: SendRequest[Any], now: float) -> tuple[SendRequest[Any], float]:
        request = sent.request
        late = isinstance(request, SyncGroupRequest) and bool(request.assignments)
        return sent, now + 0.3 if late else now


class LeaderSyncsLast(KafkaClient):
    """A client whose leader SyncGroup (the one carrying assignments) leaves 0.3 s late.

    librdkafka's mock cluster answers a follower's SyncGroup that arrives after the leader's
    with REBALANCE_IN_PROGRESS (and a null assignment) instead of its assignment, as Kafka
    would; librdkafka's own leaders refresh metadata before assigning, so their followers
    always sync first. This makes krafka's leaders as slow as that.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._proxies: dict[int, Machine] = {}

    def attach(self, machine: Machine, on_event: Any, on_stopped: Any) -> None:
        proxy = self._proxies[id(machine)] = _SyncsLate(machine)
        super().attach(proxy, on_event, on_stopped)

    def detach(self, machine: Machine) -> None:
        super().detach(self._proxies.pop(id(machine), machine))


async def wait_until(condition: Any, timeout: float = 40) -> None:
    with anyio.fail_after(timeout):
        while not condition():
            await anyio.sleep(0.05)


__all__ = ["App", "LeaderSyncsLast", "wait_until"]
