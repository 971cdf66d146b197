"""Offset lookups against Tansu (its earliest offsets are right; its latest and by-time ones
are not, see BROKER.md: those run against librdkafka's mock cluster)."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from _members import produce, unique

from krafka import AdminClient, NewTopic, OffsetSpec, TopicPartition
from krafka.errors import UnknownTopicOrPartitionError

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
