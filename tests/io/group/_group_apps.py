"""A group member on a real cluster, driven by `MachineDriver`, with a stand-in application
loop: it polls every 50 ms, answers every listener step at once (auto-commits commit
nothing) and, as the io consumer does, looks its topic up again while the cluster does not
know it yet. For io tests of the sans-IO member; the io Consumer integrates it for real."""

from __future__ import annotations

from typing import Any

import anyio

from krafka.io.client import KafkaClient
from krafka.io.driver import MachineDriver
from krafka.protocol.messages import SyncGroupRequest
from krafka.sansio.actions import RefreshMetadata, SendRequest
from krafka.sansio.group import (
    CommitPositions,
    GroupConfig,
    GroupFailed,
    GroupMember,
)


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
        self.driver = MachineDriver(client, self.member, on_event=self.events.append)
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
                if isinstance(event, RefreshMetadata):
                    await self.metadata(sorted(event.topics or {self.topic}))
                elif isinstance(event, GroupFailed):
                    self.failures.append(event.error)
                elif hasattr(event, "step"):
                    self.steps.append(event)
                    offsets = {} if isinstance(event, CommitPositions) else None
                    self.member.listener_done(event.step, anyio.current_time(), offsets)
            self.driver.wake()
            await anyio.sleep(0.05)


class LeaderSyncsLast(KafkaClient):
    """A client whose leader SyncGroup (the one carrying assignments) leaves 0.3 s late.

    librdkafka's mock cluster answers a follower's SyncGroup that arrives after the leader's
    with REBALANCE_IN_PROGRESS (and a null assignment) instead of its assignment, as Kafka
    would; librdkafka's own leaders refresh metadata before assigning, so their followers
    always sync first. This makes krafka's leaders as slow as that.
    """

    async def execute(self, action: SendRequest[Any]) -> Any:
        request = action.request
        if isinstance(request, SyncGroupRequest) and request.assignments:
            await anyio.sleep(0.3)
        return await super().execute(action)


async def wait_until(condition: Any, timeout: float = 40) -> None:
    with anyio.fail_after(timeout):
        while not condition():
            await anyio.sleep(0.05)


__all__ = ["App", "LeaderSyncsLast", "wait_until"]
