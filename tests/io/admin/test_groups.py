"""Group admin calls against Tansu with real members (librdkafka consumers): list, describe,
offsets (list, reset while active -> refused, reset when empty -> the group resumes there),
delete. Tansu lists a group once it has committed offsets, reports member ids without client
details or assignments (scripted coordinators cover those), calls every state "Unknown" in
ListGroups, and deletes groups that still have members (Kafka refuses: scripted)."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from _members import member, produce, unique

from krafka import AdminClient, GroupState, GroupType, NewTopic, OffsetSpec, TopicPartition
from krafka.errors import NonEmptyGroupError
from krafka.structs import OffsetAndMetadata

pytestmark = [pytest.mark.anyio, pytest.mark.broker, pytest.mark.timeout(120)]


async def test_a_live_group_then_an_empty_one(broker: Any) -> None:
    topic, group = unique("adm-grp-t"), unique("adm-grp")
    t0, t1 = TopicPartition(topic, 0), TopicPartition(topic, 1)
    async with AdminClient(broker.bootstrap_servers) as admin:
        await admin.create_topics([NewTopic(topic, 2)])
        await anyio.to_thread.run_sync(produce, broker.bootstrap_servers, topic, {0: 5, 1: 3})
        with member(broker.bootstrap_servers, group, [topic]) as m:
            await anyio.to_thread.run_sync(m.wait_assigned)
            await anyio.to_thread.run_sync(m.commit, topic, {0: 4, 1: 1})

            listed = {g.group_id: g for g in await admin.list_groups()}
            assert listed[group].protocol_type == "consumer"
            assert listed[group].type is GroupType.CLASSIC

            described = (await admin.describe_groups([group])).raise_for_errors()[group]
            assert described.type is GroupType.CLASSIC and described.state is GroupState.STABLE
            assert described.protocol_type == "consumer" and len(described.members) == 1
            assert described.coordinator is not None

            offsets = (await admin.list_group_offsets(group)).raise_for_errors()
            assert offsets == {t0: OffsetAndMetadata(4), t1: OffsetAndMetadata(1)}
            some = await admin.list_group_offsets(group, [t1, TopicPartition(topic, 9)])
            assert some[t1] == OffsetAndMetadata(1)

            with pytest.raises(NonEmptyGroupError, match="active members"):
                await admin.alter_group_offsets(group, {t0: 0})

        # the member left: the group is empty and takes an admin's offsets
        earliest = await admin.list_offsets([t0, t1], OffsetSpec.EARLIEST)
        reset = {tp: earliest.raise_for_errors()[tp].offset for tp in (t0, t1)}  # type: ignore[union-attr]
        assert (
            await admin.alter_group_offsets(
                group, {t0: reset[t0], t1: OffsetAndMetadata(2, "admin")}
            )
        ) == {
            t0: None,
            t1: None,
        }
        offsets = (await admin.list_group_offsets(group)).raise_for_errors()
        assert offsets[t0] is not None and offsets[t0].offset == 0
        assert offsets[t1] is not None and offsets[t1].offset == 2

        with member(broker.bootstrap_servers, group, [topic]) as again:
            await anyio.to_thread.run_sync(again.wait_assigned)
            with anyio.fail_after(30):
                while len(again.values) < 5 + 1:
                    await anyio.sleep(0.1)
            assert sorted(again.values) == sorted([b"v%d" % i for i in range(5)] + [b"v2"])

        assert (await admin.delete_groups([group])) == {group: None}
        assert group not in {g.group_id for g in await admin.list_groups()}


async def test_listing_filters_and_unknown_groups(broker: Any) -> None:
    async with AdminClient(broker.bootstrap_servers) as admin:
        consumer_groups = await admin.list_groups(types=["consumer"])
        assert all(g.type is GroupType.CONSUMER for g in consumer_groups)
        results = await admin.describe_groups([unique("adm-nobody")])
        (value,) = results.values()
        # Tansu describes any group id as an empty classic group; a Kafka broker says Dead
        # (then GroupIdNotFoundError, covered with scripted coordinators)
        assert not isinstance(value, Exception) and value.state is GroupState.EMPTY
        assert value.members == ()
