"""Offsets on Apache Kafka, which answers what Tansu cannot: ListOffsets latest and by time
(`end_offsets`, `offsets_for_times`, `seek_to_end`) and OFFSET_OUT_OF_RANGE once DeleteRecords
moved a partition's log start past a consumer's position, met by the reset policy (earliest,
latest) or raised from poll (none), for an assigned consumer and for a group member."""

from __future__ import annotations

import time
from typing import Any

import anyio
import pytest

from krafka import AdminClient, Consumer, NewTopic, OffsetAndMetadata, Producer, TopicPartition
from krafka.errors import OffsetOutOfRangeError
from krafka.sansio.admin.offsets import ListedOffset

pytestmark = [pytest.mark.anyio, pytest.mark.broker, pytest.mark.timeout(60)]


async def new_topic(bootstrap: str, prefix: str, records: int, first_ts: int | None = None) -> str:
    """A one-partition topic holding b"0" .. b"<records - 1>", record i stamped
    `first_ts + 1000 * i` when `first_ts` is given."""
    topic = f"{prefix}-{time.time_ns()}"
    async with AdminClient(bootstrap) as admin:
        (await admin.create_topics([NewTopic(topic, 1)])).raise_for_errors()
    async with Producer(bootstrap, linger=0.002) as producer:
        for i in range(records):
            stamp = None if first_ts is None else first_ts + 1000 * i
            await producer.send(topic, b"%d" % i, partition=0, timestamp=stamp)
        await producer.flush()
    return topic


async def take(consumer: Consumer, count: int, timeout: float = 15) -> list[Any]:
    got: list[Any] = []
    with anyio.fail_after(timeout):
        while len(got) < count:
            got += await consumer.poll(timeout=0.5)
    return got


async def test_end_offsets_offsets_for_times_and_seek_to_end(kafka: Any) -> None:
    first_ts = int(time.time() * 1000) - 60_000
    topic = await new_topic(kafka.bootstrap_servers, "lookups", 10, first_ts)
    tp = TopicPartition(topic, 0)
    async with Consumer(kafka.bootstrap_servers, fetch_max_wait=0.1) as consumer:
        assert await consumer.beginning_offsets([tp]) == {tp: 0}
        assert await consumer.end_offsets([tp]) == {tp: 10}
        found = await consumer.offsets_for_times({tp: first_ts + 3500})
        assert found == {tp: ListedOffset(4, first_ts + 4000, 0)}
        assert await consumer.offsets_for_times({tp: first_ts}) == {
            tp: ListedOffset(0, first_ts, 0)
        }
        assert await consumer.offsets_for_times({tp: first_ts + 9001}) == {tp: None}
        await consumer.assign([tp])
        await consumer.seek_to_end(tp)
        assert await consumer.position(tp) == 10
        async with Producer(kafka.bootstrap_servers) as producer:
            await producer.send_and_wait(topic, b"next", partition=0)
        (record,) = await take(consumer, 1)
        assert (record.offset, record.value) == (10, b"next")
        assert await consumer.end_offsets([tp]) == {tp: 11}


@pytest.mark.parametrize("reset", ["earliest", "latest", "none"])
async def test_an_assigned_consumer_meets_deleted_records_by_its_reset_policy(
    kafka: Any, reset: str
) -> None:
    topic = await new_topic(kafka.bootstrap_servers, f"oor-{reset}", 20)
    tp = TopicPartition(topic, 0)
    async with AdminClient(kafka.bootstrap_servers) as admin:
        (await admin.delete_records({tp: 10})).raise_for_errors()
    async with Consumer(
        kafka.bootstrap_servers, auto_offset_reset=reset, fetch_max_wait=0.1
    ) as consumer:
        assert await consumer.beginning_offsets([tp]) == {tp: 10}
        await consumer.assign([tp])
        await consumer.seek(tp, 5)  # below the log start now
        if reset == "none":
            with pytest.raises(OffsetOutOfRangeError, match=f"{topic}-0"):
                await take(consumer, 1)
            await consumer.seek(tp, 12)
            assert [r.offset for r in await take(consumer, 8)] == list(range(12, 20))
        elif reset == "earliest":
            assert [r.offset for r in await take(consumer, 10)] == list(range(10, 20))
        else:
            assert await consumer.poll(timeout=1.0) == []
            assert await consumer.position(tp) == 20
            async with Producer(kafka.bootstrap_servers) as producer:
                await producer.send_and_wait(topic, b"after", partition=0)
            assert [r.offset for r in await take(consumer, 1)] == [20]


@pytest.mark.parametrize("reset", ["earliest", "latest", "none"])
async def test_a_group_member_resuming_below_the_log_start_resets(kafka: Any, reset: str) -> None:
    """The group's committed offset (5) was deleted: the member's first fetch is
    OFFSET_OUT_OF_RANGE and the reset policy decides, as for an assigned consumer."""
    topic = await new_topic(kafka.bootstrap_servers, f"oor-group-{reset}", 20)
    tp, group = TopicPartition(topic, 0), f"g-{time.time_ns()}"
    async with Consumer(kafka.bootstrap_servers, group_id=group) as committer:
        await committer.assign([tp])
        await committer.commit({tp: OffsetAndMetadata(5)})
    async with AdminClient(kafka.bootstrap_servers) as admin:
        (await admin.delete_records({tp: 10})).raise_for_errors()
    async with Consumer(
        kafka.bootstrap_servers,
        group_id=group,
        auto_offset_reset=reset,
        enable_auto_commit=False,
        fetch_max_wait=0.1,
        session_timeout=6.0,
        heartbeat_interval=0.5,
    ) as member:
        await member.subscribe([topic])
        if reset == "none":
            with pytest.raises(OffsetOutOfRangeError):
                await take(member, 1)
            assert member.assignment() == {tp}
        elif reset == "earliest":
            assert [r.offset for r in await take(member, 10)] == list(range(10, 20))
        else:
            with anyio.fail_after(15):
                while member.assignment() != {tp} or await member.position(tp) != 20:
                    assert await member.poll(timeout=0.2) == []
