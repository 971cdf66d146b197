"""The rebalance listener runs in the application's task, inside its own calls (`poll`,
`close` ...), and what it raises is raised from them, as Java runs its callbacks on the polling
thread and throws their exceptions from `poll()`."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from _groups import make_topic, member

from krafka import TopicPartition

pytestmark = [pytest.mark.anyio, pytest.mark.broker, pytest.mark.timeout(90)]


class ListenerBug(Exception):
    pass


class Listener:
    """Records the task each callback ran in; raises from `on_partitions_assigned`."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, int, frozenset[TopicPartition]]] = []

    def _record(self, name: str, partitions: set[TopicPartition]) -> None:
        self.calls.append((name, anyio.get_current_task().id, frozenset(partitions)))

    def on_partitions_assigned(self, partitions: set[TopicPartition]) -> None:
        self._record("assigned", partitions)
        raise ListenerBug("on_partitions_assigned failed")

    async def on_partitions_revoked(self, partitions: set[TopicPartition]) -> None:
        self._record("revoked", partitions)


@pytest.mark.one_backend
async def test_the_listener_runs_in_the_application_task_and_poll_raises_its_error(
    broker: Any,
) -> None:
    topic = await make_topic(broker.bootstrap_servers, 1, prefix="listener")
    tp = TopicPartition(topic, 0)
    listener = Listener()
    me = anyio.get_current_task().id
    consumer = member(broker.bootstrap_servers, f"g-{topic}", rebalance_listener=listener)
    async with consumer:
        await consumer.subscribe([topic])
        with anyio.fail_after(15), pytest.raises(ListenerBug):
            while True:
                await consumer.poll(0.2)
        assert listener.calls == [("assigned", me, frozenset({tp}))]
        assert consumer.assignment() == {tp}  # the rebalance went on all the same
        assert await consumer.poll(0.1) == []  # and the error was raised once
        closer = anyio.get_current_task().id
    assert listener.calls[-1] == ("revoked", closer, frozenset({tp}))


async def test_the_revocation_at_close_may_commit_what_was_consumed(broker: Any) -> None:
    """Java's usual `onPartitionsRevoked`: commit the positions, also when `close` revokes."""
    topic = await make_topic(broker.bootstrap_servers, 1, records=5, prefix="listener-commit")
    tp = TopicPartition(topic, 0)
    group = f"g-{topic}"

    class Committing:
        async def on_partitions_revoked(self, partitions: set[TopicPartition]) -> None:
            await consumer.commit()

    consumer = member(broker.bootstrap_servers, group, rebalance_listener=Committing())
    async with consumer:
        await consumer.subscribe([topic])
        seen = 0
        with anyio.fail_after(30):
            while seen < 5:
                seen += len(await consumer.poll(0.5))
    async with member(broker.bootstrap_servers, group) as check:
        committed = await check.committed([tp])
    assert committed[tp] is not None and committed[tp].offset == 5
