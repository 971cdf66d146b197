"""`wakeup()` beside Java's `KafkaConsumer.wakeup()` on Apache Kafka: called from another thread
while the member polls, the poll raises (Java's WakeupException, krafka's WakeupError) once per
wakeup, and the member polls on in its group with its partitions."""

from __future__ import annotations

import threading
from typing import Any

import anyio
import pytest
from _java import new_topics

from krafka import TopicPartition, WakeupError
from krafka.sync import Consumer
from krafka.testing.javapeer import JavaPeer, Role
from krafka.testing.kafka import KafkaCluster

pytestmark = [pytest.mark.anyio, pytest.mark.one_backend, pytest.mark.timeout(120)]


def woken(java: JavaPeer) -> int:
    return sum(1 for event in list(java.events) if event.kind == "woken")


async def test_a_wakeup_from_another_thread_raises_once_in_java_and_in_krafka(
    cluster: KafkaCluster,
) -> None:
    bootstrap = cluster.bootstrap_servers
    (topic,) = await new_topics(bootstrap, 1, "wakeup-java")
    with JavaPeer(Role.GROUP_MEMBER, bootstrap, topics=[topic], group=f"java-{topic}") as java:
        await java.aexpect("assigned", timeout=30)
        java.send("wakeup")
        await java.aexpect("woken", timeout=20)
        await anyio.sleep(2.0)  # it polls on: no second WakeupException
        assert woken(java) == 1
        java.send("assignment")
        assert (await java.aexpect("assignment")).assignment == {TopicPartition(topic, 0)}

    def krafka_member() -> dict[str, Any]:
        raised: list[BaseException] = []
        with Consumer(bootstrap_servers=bootstrap, group_id=f"krafka-{topic}",
                      session_timeout=10.0, heartbeat_interval=0.5) as consumer:  # fmt: skip
            consumer.subscribe([topic])
            while not consumer.assignment():
                consumer.poll(0.1)
            threading.Timer(0.3, consumer.wakeup).start()
            for _ in range(30):  # 3 s of polls
                try:
                    consumer.poll(0.1)
                except WakeupError as exc:
                    raised.append(exc)
            return {"raised": len(raised), "assignment": consumer.assignment()}

    got = await anyio.to_thread.run_sync(krafka_member)
    assert got == {"raised": 1, "assignment": {TopicPartition(topic, 0)}}
