"""Java's `KafkaConsumer.close(CloseOptions)` (KIP-1092) beside krafka's, on Apache Kafka: a Java
member closes with each group membership operation while a krafka member shares the group; whether
its partition moves to the krafka member at once is what krafka's own `close` does in the same
case (tests/io/consumer/test_close_options.py). In KIP-848 groups the Java member's id has the
form of krafka's (KIP-1082: a base64url UUID made by the client)."""

from __future__ import annotations

import re
from typing import Any

import anyio
import pytest
from _java import new_topics

from krafka import AdminClient, Consumer, TopicPartition
from krafka.testing.javapeer import JavaPeer, Role
from krafka.testing.kafka import KafkaCluster

pytestmark = [pytest.mark.anyio, pytest.mark.one_backend, pytest.mark.timeout(120)]

CASES = [
    ("consumer", None, "default", True),
    ("consumer", None, "remain_in_group", True),  # no way to stay for a dynamic member
    ("consumer", "a", "default", False),
    ("consumer", "a", "remain_in_group", False),
    ("consumer", "a", "leave_group", True),
    ("classic", None, "remain_in_group", False),
    ("classic", "a", "default", False),
    ("classic", "a", "leave_group", True),
]


@pytest.mark.slow
@pytest.mark.parametrize(("protocol", "instance_id", "operation", "moves"), CASES)
async def test_java_close_options_move_partitions_as_krafkas(
    cluster: KafkaCluster, protocol: str, instance_id: str | None, operation: str, moves: bool
) -> None:
    bootstrap = cluster.bootstrap_servers
    (topic,) = await new_topics(bootstrap, 2, f"close-{protocol}-{operation}")
    group = f"g-{topic}"
    everything = {TopicPartition(topic, p) for p in range(2)}
    options: dict[str, Any] = {"group_id": group, "group_protocol": protocol,
                               "auto_offset_reset": "earliest", "fetch_max_wait": 0.1}  # fmt: skip
    config: dict[str, object] = {} if instance_id is None else {"group.instance.id": instance_id}
    if protocol == "classic":
        options.update(session_timeout=6.0, heartbeat_interval=0.5)
        config["session.timeout.ms"] = 10000 if moves else 6000
    async with Consumer(bootstrap, **options) as mine:
        await mine.subscribe([topic])
        with anyio.fail_after(30):
            while mine.assignment() != everything:
                await mine.poll(timeout=0.1)
        java = JavaPeer(Role.GROUP_MEMBER, bootstrap, topics=[topic], group=group,
                        protocol=protocol, close=operation, config=config)  # fmt: skip
        with java:
            with anyio.fail_after(30):
                while len(mine.assignment()) != 1:
                    await mine.poll(timeout=0.1)
            if protocol == "consumer":  # KIP-1082: both made their ids alike
                async with AdminClient(bootstrap) as admin:
                    found = (await admin.describe_groups([group])).raise_for_errors()[group]
                ids = [m.member_id for m in found.members]
                assert len(ids) == 2 and mine.group_metadata().member_id in ids
                assert all(re.fullmatch(r"[A-Za-z0-9_-]{22}", i) for i in ids), ids
        if moves:
            with anyio.fail_after(8):  # within the Java member's session
                while mine.assignment() != everything:
                    await mine.poll(timeout=0.1)
        else:
            with anyio.move_on_after(3):
                while True:
                    await mine.poll(timeout=0.1)
            assert len(mine.assignment()) == 1
