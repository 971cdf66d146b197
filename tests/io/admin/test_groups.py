"""Group admin calls against Apache Kafka and Tansu with real members (librdkafka consumers):
list, describe, offsets (list, reset while active -> refused, reset when empty -> the group
resumes there), delete. Tansu lists a group once it has committed offsets, reports member ids
without client details or assignments, calls every state "Unknown" in ListGroups, and deletes
groups that still have members: what only Apache Kafka shows is tested on it alone below."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from _members import eventually, is_kafka, member, produce, unique

from krafka import (
    AdminClient,
    GroupListing,
    GroupState,
    GroupType,
    NewTopic,
    OffsetSpec,
    ShareConsumer,
    TopicPartition,
)
from krafka.errors import GroupIdNotFoundError, GroupSubscribedToTopicError, NonEmptyGroupError
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
        nobody = unique("adm-nobody")
        results = await admin.describe_groups([nobody])
        if is_kafka(broker):  # GROUP_ID_NOT_FOUND for every kind: an error, as Java raises
            assert isinstance(results[nobody], GroupIdNotFoundError)
            with pytest.raises(GroupIdNotFoundError, match=nobody):
                results.raise_for_errors()
        else:  # Tansu describes any group id as an empty classic group
            value = results[nobody]
            assert not isinstance(value, Exception) and value.state is GroupState.EMPTY
            assert value.members == ()


@pytest.mark.one_backend
async def test_on_kafka_every_kind_of_group_with_its_members(kafka: Any) -> None:
    """A classic group (client details and assignments), a KIP-848 consumer group and a
    share group, listed by type and state, described, refused deletion while live; OffsetDelete
    of an unsubscribed topic's offsets; every refusal an error of the right kind."""
    b = kafka.bootstrap_servers
    topic, other = unique("adm-kgrp-t"), unique("adm-kgrp-u")
    classic, consumer, share = unique("adm-kc"), unique("adm-k848"), unique("adm-ks")
    t0, t1, u0 = TopicPartition(topic, 0), TopicPartition(topic, 1), TopicPartition(other, 0)
    async with AdminClient(b) as admin:
        await admin.create_topics([NewTopic(topic, 2), NewTopic(other, 1)])
        with (
            member(b, classic, [topic], **{"client.id": "kc-member"}) as m1,
            member(b, consumer, [topic], **{"group.protocol": "consumer"}) as m2,
        ):
            await anyio.to_thread.run_sync(m1.wait_assigned)
            await anyio.to_thread.run_sync(m2.wait_assigned)
            await anyio.to_thread.run_sync(m1.commit, topic, {0: 1})
            async with ShareConsumer(bootstrap_servers=b, group_id=share) as sharer:
                await sharer.subscribe([topic])
                with anyio.fail_after(30):
                    while not sharer.assignment():
                        await sharer.poll(timeout=0.2)

                def listed(groups: list[GroupListing]) -> bool:
                    return {classic, consumer, share} <= {g.group_id for g in groups}

                every = await eventually(lambda: admin.list_groups(states=["Stable"]), listed)
                kinds = {g.group_id: g.type for g in every}
                assert (kinds[classic], kinds[consumer], kinds[share]) == (
                    GroupType.CLASSIC, GroupType.CONSUMER, GroupType.SHARE
                )  # fmt: skip
                only_share = await admin.list_groups(types=["share"])
                assert share in {g.group_id for g in only_share}
                assert {g.type for g in only_share} == {GroupType.SHARE}
                assert classic not in {
                    g.group_id for g in await admin.list_groups(states=["Empty"])
                }

                described = (
                    await admin.describe_groups([classic, consumer, share])
                ).raise_for_errors()
                c = described[classic]
                assert (c.type, c.state, c.assignor) == (
                    GroupType.CLASSIC,
                    GroupState.STABLE,
                    "range",
                )
                (cm,) = c.members
                assert (cm.client_id, cm.client_host) == ("kc-member", "/127.0.0.1")
                assert cm.assignment == (t0, t1) and cm.subscribed_topics == (topic,)
                k = described[consumer]
                assert (k.type, k.state, k.protocol_type) == (
                    GroupType.CONSUMER, GroupState.STABLE, "consumer"
                )  # fmt: skip
                (km,) = k.members
                assert km.assignment == (t0, t1) and km.member_epoch == k.group_epoch
                s = described[share]
                assert (s.type, s.protocol_type) == (GroupType.SHARE, "share")
                assert s.members[0].subscribed_topics == (topic,)

                refused = await admin.delete_groups([classic, consumer, share])
                assert all(isinstance(e, NonEmptyGroupError) for e in refused.values())
                subscribed = await admin.delete_group_offsets(classic, [t0])
                assert isinstance(subscribed[t0], GroupSubscribedToTopicError)

        assert await admin.alter_group_offsets(classic, {u0: 3}) == {u0: None}
        assert await admin.delete_group_offsets(classic, [u0, t0]) == {u0: None, t0: None}
        assert (await admin.list_group_offsets(classic)).raise_for_errors() == {}
        with pytest.raises(GroupIdNotFoundError):
            await admin.delete_group_offsets(unique("adm-knobody"), [u0])
        nobody = unique("adm-knobody")
        deleted = await admin.delete_groups([classic, consumer, share, nobody])
        assert dict(deleted) == {
            classic: None,
            consumer: None,
            share: None,
            nobody: deleted[nobody],
        }
        assert isinstance(deleted[nobody], GroupIdNotFoundError)
