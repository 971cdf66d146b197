"""Share groups (KIP-932) where only Apache Kafka can show them: RENEW keeping a record
acquired past its lock (KIP-1222, ShareFetch v2), two krafka members of one group splitting the
records, and the group configs krafka's AdminClient set read back."""

from __future__ import annotations

from collections import Counter
from typing import Any

import anyio
import pytest
from _share_env import kafka_share_env

from krafka import AcknowledgeType, AdminClient, ConfigResource, Producer, ShareConsumer
from krafka.structs import TopicPartition

pytestmark = [pytest.mark.anyio, pytest.mark.broker, pytest.mark.timeout(60)]


def member(env: Any, **kw: Any) -> ShareConsumer:
    options: dict[str, Any] = {"group_id": env.group, "fetch_max_wait": 0.1, **kw}
    return ShareConsumer(env.bootstrap_servers, **options)


@pytest.mark.one_backend
async def test_renew_keeps_a_record_past_its_lock(kafka: Any) -> None:
    """A record renewed again and again stays with its member well past the 1 s lock: a second
    member never gets it, and the final ACCEPT is taken (no INVALID_RECORD_STATE)."""
    env = await kafka_share_env(kafka, 1, lock_ms=1000)
    async with Producer(env.bootstrap_servers) as producer:
        await producer.send_and_wait(env.topic, b"long job", partition=0)
    async with (
        member(env, acknowledgement_mode="explicit") as worker,
        member(env, acknowledgement_mode="explicit") as idle,
    ):
        await worker.subscribe([env.topic])
        await idle.subscribe([env.topic])
        with anyio.fail_after(20):
            while not (got := await worker.poll(timeout=0.2)):
                pass
        (record,) = got
        started = anyio.current_time()
        while anyio.current_time() - started < 2.5:
            worker.acknowledge(record, AcknowledgeType.RENEW)
            for again in await worker.poll(timeout=0.3):  # the renewed record, handed back
                assert (again.offset, again.delivery_count) == (record.offset, 1)
                record = again
            assert await idle.poll(timeout=0.1) == []
        worker.acknowledge(record, AcknowledgeType.ACCEPT)
        assert await worker.commit_sync(timeout=10) == {TopicPartition(env.topic, 0): None}
        assert await idle.poll(timeout=1.5) == []


async def test_two_members_split_the_records(kafka: Any) -> None:
    env = await kafka_share_env(kafka, 2)
    async with Producer(env.bootstrap_servers, batch_size=64, linger=0) as producer:
        for i in range(200):  # small batches: members acquire a few records at a time
            await producer.send(env.topic, b"%d" % i, partition=i % 2)
        await producer.flush()
    seen: dict[str, Counter[bytes]] = {"a": Counter(), "b": Counter()}
    async with (
        member(env, max_poll_records=10) as a,
        member(env, max_poll_records=10) as b,
    ):
        await a.subscribe([env.topic])
        await b.subscribe([env.topic])
        with anyio.fail_after(30):
            while sum(map(len, seen.values())) < 200:
                for name, consumer in (("a", a), ("b", b)):
                    seen[name].update(r.value for r in await consumer.poll(timeout=0.05))
        for consumer in (a, b):
            await consumer.commit_sync(timeout=10)
    assert seen["a"] and seen["b"], "one member got every record"
    assert seen["a"] + seen["b"] == Counter(b"%d" % i for i in range(200))


async def test_group_configs_set_through_the_admin_client(kafka: Any) -> None:
    env = await kafka_share_env(kafka, 1, lock_ms=1500, max_attempts=3)
    resource = ConfigResource.group(env.group)
    async with AdminClient(env.bootstrap_servers) as admin:
        described = (await admin.describe_configs([resource])).raise_for_errors()[resource]
    assert described["share.auto.offset.reset"].value == "earliest"
    assert described["share.record.lock.duration.ms"].value == "1500"
    assert described["share.delivery.count.limit"].value == "3"
    async with member(env) as consumer:
        await consumer.subscribe([env.topic])
        with anyio.fail_after(20):
            while consumer.acquisition_lock_timeout is None:
                await consumer.poll(timeout=0.2)
        assert consumer.acquisition_lock_timeout == 1.5
