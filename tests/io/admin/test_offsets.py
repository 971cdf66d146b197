"""Offset lookups against Apache Kafka and Tansu (whose earliest offsets are right but latest
and by-time ones are not, see BROKER.md); every lookup, the last stable offset and
DeleteRecords on Apache Kafka alone."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from _members import produce, unique

from krafka import AdminClient, ListedOffset, NewTopic, OffsetSpec, Producer, TopicPartition
from krafka.errors import OffsetOutOfRangeError, UnknownTopicOrPartitionError

pytestmark = [pytest.mark.anyio, pytest.mark.broker, pytest.mark.timeout(60)]


async def test_earliest_offsets_and_unknown_partitions(broker: Any) -> None:
    topic = unique("adm-off")
    async with AdminClient(broker.bootstrap_servers) as admin:
        await admin.create_topics([NewTopic(topic, 2)])
        await anyio.to_thread.run_sync(produce, broker.bootstrap_servers, topic, {0: 3})
        parts = [TopicPartition(topic, 0), TopicPartition(topic, 1), TopicPartition(topic, 5)]
        with anyio.fail_after(10):  # unknown topics and partitions fail at once, not at timeout
            results = await admin.list_offsets(
                {**dict.fromkeys(parts, OffsetSpec.EARLIEST), ("gone-topic", 0): "earliest"}
            )
        assert results[parts[0]].offset == 0  # type: ignore[union-attr]
        assert results[parts[1]].offset == 0  # type: ignore[union-attr]
        assert isinstance(results[parts[2]], UnknownTopicOrPartitionError)
        assert isinstance(results[TopicPartition("gone-topic", 0)], UnknownTopicOrPartitionError)


async def test_on_kafka_every_spec_read_committed_and_delete_records(kafka: Any) -> None:
    topic = unique("adm-koff")
    t0, t1, t2 = (TopicPartition(topic, p) for p in range(3))
    async with AdminClient(kafka.bootstrap_servers) as admin:
        await admin.create_topics([NewTopic(topic, 3)])
        base = await anyio.to_thread.run_sync(produce, kafka.bootstrap_servers, topic, {0: 5, 1: 3})
        latest = (await admin.list_offsets([t0, t1, t2])).raise_for_errors()
        assert {tp: o.offset for tp, o in latest.items()} == {t0: 5, t1: 3, t2: 0}  # type: ignore[union-attr]
        newest = (await admin.list_offsets([t0, t1, t2], "max_timestamp")).raise_for_errors()
        assert newest[t0] == ListedOffset(4, base + 4, 0) and newest[t1] == ListedOffset(
            2, base + 2, 0
        )
        assert newest[t2] is None  # an empty partition has no newest record
        by_time = await admin.list_offsets({t0: base + 2, t1: base + 3, t2: 0})
        assert by_time[t0] == ListedOffset(2, base + 2, 0)
        assert by_time[t1] is None and by_time[t2] is None  # no record at or after that time

        async with Producer(kafka.bootstrap_servers, transactional_id=unique("adm-ktx")) as tx:
            await tx.begin_transaction()
            await tx.send_and_wait(topic, b"pending", partition=1)
            stable = await admin.list_offsets([t1], isolation_level="read_committed")
            assert stable[t1].offset == 3  # type: ignore[union-attr]  # the last stable offset
            assert (await admin.list_offsets([t1]))[t1].offset == 4  # type: ignore[union-attr]
            await tx.abort_transaction()

        deleted = await admin.delete_records({t0: 2, t1: -1, t2: 1, (topic, 9): 0})
        assert (deleted[t0], deleted[t1]) == (2, 5)  # -1: up to the high watermark
        assert isinstance(deleted[t2], OffsetOutOfRangeError)  # past the end of an empty log
        assert isinstance(deleted[TopicPartition(topic, 9)], UnknownTopicOrPartitionError)
        earliest = (await admin.list_offsets([t0, t1], OffsetSpec.EARLIEST)).raise_for_errors()
        assert [earliest[tp].offset for tp in (t0, t1)] == [2, 5]  # type: ignore[union-attr]
