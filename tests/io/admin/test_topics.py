"""Topic admin calls against Tansu, under asyncio and trio."""

from __future__ import annotations

from typing import Any

import pytest
from _members import unique

from krafka import AdminClient, NewTopic
from krafka.errors import (
    InvalidStateError,
    TopicAlreadyExistsError,
    UnknownTopicOrPartitionError,
    UnsupportedVersionError,
)

pytestmark = [pytest.mark.anyio, pytest.mark.broker, pytest.mark.timeout(60)]


async def test_create_list_describe_delete(broker: Any) -> None:
    a, b, c = unique("adm-a"), unique("adm-b"), unique("adm-c")
    async with AdminClient(broker.bootstrap_servers) as admin:
        created = await admin.create_topics(
            [
                NewTopic(a, 3),
                NewTopic(b, 1, configs={"cleanup.policy": "compact"}),
                NewTopic(c, None, None),
            ]
        )
        values = created.raise_for_errors()
        assert values[a].num_partitions == 3 and values[a].topic_id is not None
        assert values[c].num_partitions is not None  # the broker's default partition count
        again = await admin.create_topics([NewTopic(a, 3), NewTopic(unique("adm-d"), 2)])
        assert isinstance(again[a], TopicAlreadyExistsError) and len(again.succeeded) == 1
        with pytest.raises(TopicAlreadyExistsError):
            again.raise_for_errors()

        names = await admin.list_topics()
        assert names == sorted(names) and {a, b, c} <= set(names)

        described = await admin.describe_topics([a, "no-such-topic"])
        topic = described[a]
        assert not isinstance(topic, Exception)
        assert [p.partition for p in topic.partitions] == [0, 1, 2]
        assert all(p.leader is not None and p.leader in p.isr for p in topic.partitions)
        assert topic.topic_id == values[a].topic_id and not topic.internal
        assert isinstance(described["no-such-topic"], UnknownTopicOrPartitionError)

        deleted = await admin.delete_topics([a, "no-such-topic"])
        assert deleted[a] is None and isinstance(
            deleted["no-such-topic"], UnknownTopicOrPartitionError
        )
        assert a not in await admin.list_topics()


async def test_replica_assignment_and_validate_only(broker: Any) -> None:
    name = unique("adm-assigned")
    async with AdminClient(broker.bootstrap_servers) as admin:
        cluster = await admin.describe_cluster()
        node = cluster.nodes[0].node_id
        # Tansu accepts validate_only and replica assignments but ignores them: only the
        # answers are checked here; what the requests carry is checked against kafka-python.
        checked = await admin.create_topics([NewTopic(unique("adm-v"), 2)], validate_only=True)
        assert not checked.failed
        result = await admin.create_topics(
            [NewTopic(name, replica_assignment={0: [node], 1: [node]})]
        )
        assert not result.failed
        described = (await admin.describe_topics([name])).raise_for_errors()[name]
        # Tansu places replicas itself (its one broker) and its default partition count
        assert all(p.replicas == (node,) for p in described.partitions)


async def test_create_partitions_where_the_broker_lacks_it_raises(broker: Any) -> None:
    async with AdminClient(broker.bootstrap_servers) as admin:
        with pytest.raises(UnsupportedVersionError, match="CREATE_PARTITIONS"):
            await admin.create_partitions({"any": 4})


async def test_calls_need_a_started_client(broker: Any) -> None:
    admin = AdminClient(broker.bootstrap_servers)
    with pytest.raises(InvalidStateError):
        await admin.list_topics()
    async with admin:
        assert isinstance(await admin.list_topics(), list)
    with pytest.raises(InvalidStateError):
        await admin.list_topics()
    with pytest.raises(TypeError, match="not one string"):
        await AdminClient(broker.bootstrap_servers).delete_topics("abc")
