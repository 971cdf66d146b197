"""Authorization on Apache Kafka's StandardAuthorizer: principals x operations.

The ACLs (`conftest.GRANTS`) are granted once through krafka's own AdminClient as the super
user. Every allowed call works; every denied one raises the specific authorization error naming
the resource, promptly (no hang, no retry loop, no generic error or timeout), writes nothing,
and a denied describe answers the same for a topic that exists and one that does not.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, Final

import anyio
import pytest
from _security import Authz, sasl, unique

from krafka import (
    AclBinding,
    AclBindingFilter,
    ConfigResource,
    Consumer,
    NewTopic,
    Producer,
    TopicPartition,
)
from krafka.errors import (
    ClusterAuthorizationFailedError,
    GroupAuthorizationFailedError,
    KrafkaError,
    TopicAuthorizationFailedError,
    TransactionalIdAuthorizationFailedError,
    UnknownTopicOrPartitionError,
)
from krafka.io.admin import AdminClient
from krafka.sansio.admin import IsolationLevel, OffsetSpec, ResourceType

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]

#: An authorization error arrives this fast, far inside every client timeout involved.
PROMPT: Final = 15.0
POLL: Final = 60.0


def as_user(authz: Authz, user: str, **options: Any) -> dict[str, Any]:
    return {**sasl(authz.cluster, user), **options}


@asynccontextmanager
async def superuser(authz: Authz) -> AsyncIterator[AdminClient]:
    async with AdminClient(**as_user(authz, "admin")) as admin:
        yield admin


async def make_topics(authz: Authz, *names: str, records: int = 0) -> None:
    async with superuser(authz) as admin:
        (await admin.create_topics([NewTopic(name, 1, 1) for name in names])).raise_for_errors()
    if records:
        async with Producer(**as_user(authz, "admin")) as producer:
            for name in names:
                for i in range(records):
                    await producer.send(name, f"{name}-{i}".encode())
            await producer.flush()


async def end_offsets(authz: Authz, *topics: str, committed: bool = False) -> dict[str, int]:
    isolation = IsolationLevel.READ_COMMITTED if committed else IsolationLevel.READ_UNCOMMITTED
    async with superuser(authz) as admin:
        found = await admin.list_offsets(
            [TopicPartition(t, 0) for t in topics], OffsetSpec.LATEST, isolation_level=isolation
        )
    return {tp.topic: listed.offset for tp, listed in found.raise_for_errors().items() if listed}


def names(error: BaseException, resource: str) -> bool:
    return re.search(rf"\b{re.escape(resource)}\b", str(error)) is not None


def without(error: BaseException, resource: str) -> str:
    return str(error).replace(resource, "<name>")


async def test_the_super_user_manages_acls_and_nobody_else_may(authz: Authz) -> None:
    topic = unique("acl")
    rule = AclBinding("TOPIC", topic, "LITERAL", "User:bob", "*", "READ", "ALLOW")
    match = AclBindingFilter(ResourceType.TOPIC, topic)
    async with AdminClient(**as_user(authz, "alice")) as alice:
        refused = await alice.create_acls([rule])
        assert isinstance(refused[rule], ClusterAuthorizationFailedError)
        assert topic in str(refused[rule])
        with pytest.raises(ClusterAuthorizationFailedError):
            await alice.describe_acls(match)
        deleted = (await alice.delete_acls([match]))[match]
        assert isinstance(deleted, ClusterAuthorizationFailedError)
    async with superuser(authz) as admin:
        assert (await admin.create_acls([rule]))[rule] is None
        assert await admin.describe_acls(match) == [rule]
        assert (await admin.delete_acls([match]))[match] == (rule,)
        assert await admin.describe_acls(match) == []


async def test_produce_needs_write_and_writes_only_where_allowed(authz: Authz) -> None:
    writable, readonly, hidden = unique("w"), unique("ro"), unique("hidden")
    await make_topics(authz, writable, readonly, hidden)
    async with Producer(**as_user(authz, "alice"), linger=0.05) as producer:
        with anyio.fail_after(PROMPT):
            allowed = await producer.send(writable, b"allowed")
            refused = await producer.send(readonly, b"refused")  # one Produce request for both
            assert (await allowed).offset == 0
            with pytest.raises(TopicAuthorizationFailedError) as info:
                await refused
            assert names(info.value, readonly)
            with pytest.raises(TopicAuthorizationFailedError) as info:
                await producer.send_and_wait(hidden, b"refused")
            assert names(info.value, hidden)
    assert await end_offsets(authz, writable, readonly, hidden) == {
        writable: 1,
        readonly: 0,
        hidden: 0,
    }


async def test_idempotence_needs_write_on_a_topic_not_idempotent_write(authz: Authz) -> None:
    topic = unique("w")
    await make_topics(authz, topic)
    async with Producer(**as_user(authz, "alice"), enable_idempotence=True) as producer:
        assert (await producer.send_and_wait(topic, b"v")).offset == 0  # KIP-679
    with anyio.fail_after(PROMPT):
        with pytest.raises(ClusterAuthorizationFailedError, match="InitProducerId"):
            async with Producer(**as_user(authz, "bob"), enable_idempotence=True) as producer:
                await producer.send_and_wait(topic, b"refused")
        async with Producer(**as_user(authz, "bob"), enable_idempotence=False) as producer:
            with pytest.raises(TopicAuthorizationFailedError) as info:
                await producer.send_and_wait(topic, b"refused")
    assert names(info.value, topic)
    assert await end_offsets(authz, topic) == {topic: 1}


@pytest.mark.one_backend
async def test_fetch_needs_read_and_a_refused_fetch_is_raised_at_once(authz: Authz) -> None:
    readable, hidden = unique("w"), unique("hidden")
    await make_topics(authz, readable, hidden, records=3)
    async with Consumer(**as_user(authz, "bob"), auto_offset_reset="earliest") as bob:
        await bob.assign([TopicPartition(readable, 0)])
        got: list[Any] = []
        with anyio.fail_after(PROMPT):
            while len(got) < 3:
                got += await bob.poll(timeout=1)
        assert [r.value for r in got] == [f"{readable}-{i}".encode() for i in range(3)]
    for user, topic in (("alice", readable), ("bob", hidden)):  # describe only / nothing
        async with Consumer(**as_user(authz, user), auto_offset_reset="earliest") as consumer:
            await consumer.assign([TopicPartition(topic, 0)])
            with anyio.fail_after(PROMPT), pytest.raises(TopicAuthorizationFailedError) as info:
                await consumer.poll(timeout=POLL)
            assert names(info.value, topic)
            fetches = consumer.metrics()["fetches"]
            await anyio.sleep(1.0)
            assert consumer.metrics()["fetches"] - fetches <= 1  # nothing asked until polled
            with anyio.fail_after(PROMPT), pytest.raises(TopicAuthorizationFailedError):
                await consumer.poll(timeout=POLL)  # and raised again by the next poll


@pytest.mark.one_backend
async def test_groups_need_read_on_the_group(authz: Authz) -> None:
    topic, hidden = unique("w"), unique("hidden")
    await make_topics(authz, topic, hidden, records=2)
    group = unique("g")
    bob = as_user(authz, "bob", auto_offset_reset="earliest", enable_auto_commit=False)
    async with Consumer(**bob, group_id=group) as member:
        await member.subscribe([topic])
        got: list[Any] = []
        with anyio.fail_after(PROMPT):
            while len(got) < 2:
                got += await member.poll(timeout=1)
        await member.commit()
        assert (await member.committed([TopicPartition(topic, 0)]))[
            TopicPartition(topic, 0)
        ].offset == 2  # type: ignore[union-attr]

    denied = unique("denied")
    async with Consumer(**bob, group_id=denied) as member:
        await member.subscribe([topic])
        with anyio.fail_after(PROMPT), pytest.raises(GroupAuthorizationFailedError) as info:
            await member.poll(timeout=POLL)
        assert names(info.value, denied)
    async with Consumer(**bob, group_id=denied) as standalone:
        await standalone.assign([TopicPartition(topic, 0)])
        with anyio.fail_after(PROMPT), pytest.raises(GroupAuthorizationFailedError) as info:
            await standalone.poll(timeout=POLL)  # its committed offsets are refused
        assert names(info.value, denied)
        with anyio.fail_after(PROMPT), pytest.raises(GroupAuthorizationFailedError) as info:
            await standalone.commit({TopicPartition(topic, 0): 1})
        assert names(info.value, denied)
    async with Consumer(**bob, group_id=unique("g")) as member:
        await member.subscribe([hidden])
        with anyio.fail_after(PROMPT), pytest.raises(TopicAuthorizationFailedError) as info:
            await member.poll(timeout=POLL)
        assert names(info.value, hidden)


async def test_a_denied_describe_does_not_reveal_whether_a_topic_exists(authz: Authz) -> None:
    hidden, absent = unique("hidden"), unique("hidden")
    await make_topics(authz, hidden)
    async with AdminClient(**as_user(authz, "alice")) as alice:
        assert hidden not in await alice.list_topics()
        described = await alice.describe_topics([hidden, absent])
        configs = await alice.describe_configs(
            [ConfigResource.topic(hidden), ConfigResource.topic(absent)]
        )
        cluster = await alice.describe_cluster()  # no right needed
    for answers in (described, configs):
        there, not_there = answers.values()
        assert isinstance(there, TopicAuthorizationFailedError)
        assert type(not_there) is type(there)
        assert without(there, hidden) == without(not_there, absent)
    async with Producer(**as_user(authz, "alice")) as producer:
        errors = []
        for topic in (hidden, absent):
            with anyio.fail_after(PROMPT), pytest.raises(TopicAuthorizationFailedError) as info:
                await producer.send_and_wait(topic, b"refused")
            errors.append(without(info.value, topic))
    assert errors[0] == errors[1]
    async with superuser(authz) as admin:
        assert absent not in await admin.list_topics()  # not auto-created either
        assert (await admin.describe_cluster()).cluster_id == cluster.cluster_id


async def test_topic_administration_follows_the_acls(authz: Authz) -> None:
    mine, theirs = unique("w"), unique("hidden")
    resource = ConfigResource.topic(mine)
    async with AdminClient(**as_user(authz, "alice")) as alice:
        created = await alice.create_topics([NewTopic(mine, 1, 1), NewTopic(theirs, 1, 1)])
        assert not isinstance(created[mine], KrafkaError)
        assert isinstance(created[theirs], TopicAuthorizationFailedError)
        assert names(created[theirs], theirs)
        # Kafka answers CreateTopics before its broker's metadata has the topic: a describe at
        # once may say UNKNOWN_TOPIC_OR_PARTITION (under load in CI)
        with anyio.fail_after(PROMPT):
            while isinstance(
                configs := (await alice.describe_configs([resource]))[resource],
                UnknownTopicOrPartitionError,
            ):
                await anyio.sleep(0.1)
        assert not isinstance(configs, KrafkaError) and "retention.ms" in configs
        altered = (await alice.alter_configs({resource: {"retention.ms": "1000"}}))[resource]
        assert isinstance(altered, TopicAuthorizationFailedError) and names(altered, mine)
        deleted = (await alice.delete_topics([mine]))[mine]
        assert isinstance(deleted, TopicAuthorizationFailedError) and names(deleted, mine)
        broker = ConfigResource.broker(1)
        refused = (await alice.alter_configs({broker: {"log.cleaner.threads": "2"}}))[broker]
        assert isinstance(refused, ClusterAuthorizationFailedError)
    async with superuser(authz) as admin:
        topics = await admin.list_topics()
        assert mine in topics and theirs not in topics
        entry = (await admin.describe_configs([resource])).raise_for_errors()[resource]
        assert entry["retention.ms"].value != "1000"


@pytest.mark.one_backend
async def test_transactions_need_the_transactional_id_and_every_topic(authz: Authz) -> None:
    topic, readonly = unique("w"), unique("ro")
    await make_topics(authz, topic, readonly)
    alice = as_user(authz, "alice")
    async with Producer(**alice, transactional_id=unique("tx")) as producer:
        producer.begin_transaction()
        await producer.send(topic, b"committed")
        await producer.commit_transaction()

        await producer.partitions_for(readonly)  # both join the transaction in one request
        producer.begin_transaction()
        allowed = await producer.send(topic, b"aborted")
        refused = await producer.send(readonly, b"refused")
        with anyio.fail_after(PROMPT):
            with pytest.raises(KrafkaError, match=re.escape(readonly)):
                await producer.commit_transaction()
            for handle in (allowed, refused):
                with pytest.raises(TopicAuthorizationFailedError) as info:
                    await handle
                assert names(info.value, readonly)
            await producer.abort_transaction()

        producer.begin_transaction()
        await producer.send(topic, b"aborted")
        with anyio.fail_after(PROMPT), pytest.raises(TopicAuthorizationFailedError):
            await producer.send(unique("hidden"), b"refused")
        with anyio.fail_after(PROMPT), pytest.raises(KrafkaError):
            await producer.commit_transaction()  # a failed send dooms the transaction
        await producer.abort_transaction()

        denied_group = unique("denied")
        producer.begin_transaction()
        await producer.send(topic, b"aborted")
        with anyio.fail_after(PROMPT), pytest.raises(GroupAuthorizationFailedError) as info:
            await producer.send_offsets_to_transaction({TopicPartition(topic, 0): 1}, denied_group)
        assert names(info.value, denied_group)
        await producer.abort_transaction()

    other = unique("other")
    with anyio.fail_after(PROMPT), pytest.raises(TransactionalIdAuthorizationFailedError) as info:
        async with Producer(**alice, transactional_id=other):
            pass
    assert names(info.value, other)
    assert await end_offsets(authz, readonly) == {readonly: 0}
    async with Consumer(
        **as_user(authz, "bob"), auto_offset_reset="earliest", isolation_level="read_committed"
    ) as reader:
        await reader.assign([TopicPartition(topic, 0)])
        with anyio.fail_after(PROMPT):
            end = (await end_offsets(authz, topic, committed=True))[topic]
            got: list[Any] = []
            while await reader.position(TopicPartition(topic, 0)) < end:
                got += await reader.poll(timeout=0.5)
    assert [r.value for r in got] == [b"committed"]
