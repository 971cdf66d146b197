"""krafka's ShareConsumer and Apache Kafka's `KafkaShareConsumer` in one share group (KIP-932) on
Apache Kafka, both acknowledging explicitly: every record is accepted exactly once in total, and
records krafka released come back (to either) with a delivery count of 2."""

from __future__ import annotations

from collections import Counter

import anyio
import pytest
from _java import new_topics

from krafka import (
    AcknowledgeType,
    AdminClient,
    ConfigResource,
    Producer,
    ShareConsumer,
    ShareRecord,
)
from krafka.testing.javapeer import JavaPeer, Role
from krafka.testing.kafka import KafkaCluster

pytestmark = [pytest.mark.anyio, pytest.mark.one_backend, pytest.mark.timeout(120)]

PARTITIONS = 2
WAVES = 8
PER_WAVE = 40
RECORDS = WAVES * PER_WAVE


async def start_from_earliest(bootstrap: str, group: str) -> None:
    """Share groups start at the latest offset unless the group's config says otherwise. The
    change reaches the brokers through the metadata log: wait until it is seen."""
    resource = ConfigResource.group(group)
    async with AdminClient(bootstrap) as admin:
        changes = {resource: {"share.auto.offset.reset": "earliest"}}
        (await admin.alter_configs(changes)).raise_for_errors()
        with anyio.fail_after(20):
            while True:
                configs = (await admin.describe_configs([resource])).raise_for_errors()
                if configs[resource]["share.auto.offset.reset"].value == "earliest":
                    break
                await anyio.sleep(0.05)


async def test_share_group_with_kafka_share_consumer(cluster: KafkaCluster) -> None:
    bootstrap = cluster.bootstrap_servers
    (topic,) = await new_topics(bootstrap, PARTITIONS, "share-java")
    group = f"sg-{topic}"
    await start_from_earliest(bootstrap, group)
    mine: list[ShareRecord] = []  # accepted by krafka
    released: list[ShareRecord] = []
    async with Producer(bootstrap, linger=0.002) as producer:
        for i in range(PER_WAVE):  # before anyone joined: read thanks to the group's config
            await producer.send(topic, b"%d" % i, partition=i % PARTITIONS)
        await producer.flush()
        async with (
            JavaPeer(
                Role.SHARE_CONSUME, bootstrap, topics=[topic], group=group,
                config={"max.poll.records": 20},
            ) as java,
            ShareConsumer(
                bootstrap, group_id=group, acknowledgement_mode="explicit", fetch_max_wait=0.1,
                max_poll_records=20,
            ) as consumer,
        ):  # fmt: skip
            await java.aexpect("record")  # Java is in and reading the first wave: krafka joins,
            # and the next waves come once the group gave krafka its share of the partitions
            await consumer.subscribe([topic])
            sent = PER_WAVE
            with anyio.fail_after(60):
                while len(mine) + len(java.records()) < RECORDS:
                    joined = bool(consumer.assignment())
                    if joined and sent < RECORDS and len(mine) + len(java.records()) >= sent:
                        for i in range(sent, sent + PER_WAVE):  # the next wave, both polling
                            await producer.send(topic, b"%d" % i, partition=i % PARTITIONS)
                        await producer.flush()
                        sent += PER_WAVE
                    records = await consumer.poll(timeout=0.1)
                    # krafka's first records go back to the group once: someone takes them again
                    settle = AcknowledgeType.RELEASE if not released else AcknowledgeType.ACCEPT
                    for record in records:
                        consumer.acknowledge(record, settle)
                    if records:
                        results = await consumer.commit_sync()
                        assert not [e for e in results.values() if e is not None], results
                    (released if settle is AcknowledgeType.RELEASE else mine).extend(records)
            # nothing comes back to either of them
            with anyio.move_on_after(1.5):
                while True:
                    mine += await consumer.poll(timeout=0.1)
    theirs = java.records()
    counts = Counter([r.value for r in mine] + [r.value for r in theirs])
    assert set(counts) == {b"%d" % i for i in range(RECORDS)}
    twice = sorted(v for v, n in counts.items() if n > 1)
    assert not twice, f"accepted more than once: {twice[:10]}"
    assert mine, "krafka got no record"
    assert theirs, "the Java share consumer got no record"
    again = {r.value for r in released}
    assert again and {r.delivery_count for r in released} == {1}
    for record in [*mine, *theirs]:
        assert record.delivery_count == (2 if record.value in again else 1), record
    assert not [e for e in java.events if e.kind == "acknowledged" and e.data["errors"]]
