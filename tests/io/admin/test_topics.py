"""Topic admin calls against Apache Kafka and Tansu, under asyncio and trio; what Tansu lacks or
ignores (CreatePartitions, validate_only, replica assignments) on Apache Kafka alone."""

from __future__ import annotations

from typing import Any

import pytest
from _members import eventually, unique

from krafka import AdminClient, NewPartitions, NewTopic
from krafka.errors import (
    InvalidConfigError,
    InvalidPartitionsError,
    InvalidReplicaAssignmentError,
    InvalidReplicationFactorError,
    InvalidStateError,
    InvalidTopicError,
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

        names = await eventually(admin.list_topics, lambda names: {a, b, c} <= set(names))
        assert names == sorted(names)

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
        await eventually(admin.list_topics, lambda names: a not in names)


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


async def test_create_partitions_where_the_broker_lacks_it_raises(tansu: Any) -> None:
    async with AdminClient(tansu.bootstrap_servers) as admin:
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


async def test_on_kafka_validate_only_configs_and_refusals(kafka: Any) -> None:
    name, checked = unique("adm-k"), unique("adm-k-v")
    async with AdminClient(kafka.bootstrap_servers) as admin:
        validated = await admin.create_topics([NewTopic(checked, 2)], validate_only=True)
        assert validated[checked].num_partitions == 2  # type: ignore[union-attr]
        refused = await admin.create_topics(
            [
                NewTopic(unique("adm-k-cfg"), 1, configs={"cleanup.policy": "nope"}),
                NewTopic(unique("adm-k-rf"), 1, 3),
                NewTopic(unique("adm-k-7"), replica_assignment={0: [7]}),
                NewTopic(unique("adm-k-dup"), replica_assignment={0: [1, 1]}),
                NewTopic("bad name!", 1),
                NewTopic(name, 2, configs={"retention.ms": "100000"}),
            ]
        )
        assert [type(e) for e in refused.failed.values()] == [
            InvalidConfigError,
            InvalidReplicationFactorError,
            InvalidReplicaAssignmentError,
            InvalidReplicaAssignmentError,
            InvalidTopicError,
        ]
        assert "cleanup.policy" in str(next(iter(refused.failed.values())))
        assert list(refused.succeeded) == [name]
        assert checked not in await admin.list_topics()  # validate_only created nothing

        assert await admin.create_partitions({name: 4}) == {name: None}
        assert await admin.create_partitions({name: 6}, validate_only=True) == {name: None}
        grown = await admin.create_partitions({name: NewPartitions(5, [[1]])})
        assert grown == {name: None}
        topics = await eventually(
            lambda: admin.describe_topics([name]),
            lambda found: len(found.raise_for_errors()[name].partitions) == 5,
        )
        described = topics.raise_for_errors()[name]
        assert [p.partition for p in described.partitions] == [0, 1, 2, 3, 4]
        assert described.partitions[4].replicas == (1,)
        refusals = await admin.create_partitions({name: 3, checked: 4})
        assert isinstance(refusals[name], InvalidPartitionsError)  # not an increase
        assert isinstance(refusals[checked], UnknownTopicOrPartitionError)
        with pytest.raises(InvalidReplicaAssignmentError, match="broker 9"):
            (await admin.create_partitions({name: NewPartitions(6, [[9]])})).raise_for_errors()
        assert await admin.delete_topics([name]) == {name: None}
