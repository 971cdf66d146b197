"""Cluster admin calls against Apache Kafka and Tansu; on Tansu (the demo's broker), how calls
to APIs it lacks or answers badly fail: at once, as a whole, with one clear error (never a hang,
never a crashed broker)."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from _members import eventually, unique

from krafka import (
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AdminClient,
    NewTopic,
    PatternType,
    Producer,
    ResourceType,
    ScramDeletion,
    ScramMechanism,
    ScramUpsertion,
    TopicPartition,
)
from krafka.errors import (
    AuthenticationError,
    BrokerNotAvailableError,
    ClusterAuthorizationFailedError,
    DuplicateResourceError,
    InvalidRequestError,
    RemoteProtocolError,
    ResourceNotFoundError,
    TopicAuthorizationFailedError,
    TransactionalIdNotFoundError,
    UnsupportedVersionError,
)
from krafka.sansio.admin import ScramCredentialInfo, TransactionState

pytestmark = [pytest.mark.anyio, pytest.mark.broker, pytest.mark.timeout(60)]


async def test_describe_cluster(broker: Any) -> None:
    async with AdminClient(broker.bootstrap_servers) as admin:
        cluster = await admin.describe_cluster()
    assert cluster.cluster_id
    assert cluster.controller is not None and cluster.controller in cluster.nodes
    node = cluster.nodes[0]
    assert (node.host, node.port) == ("127.0.0.1", broker.port)


async def test_apis_tansu_lacks_fail_at_once(tansu: Any) -> None:
    async with AdminClient(tansu.bootstrap_servers) as admin:
        with anyio.fail_after(10):
            for call in (
                admin.describe_log_dirs(),
                admin.list_transactions(),
                admin.describe_transactions(["tx"]),
                admin.delete_group_offsets("g", [("t", 0)]),
                admin.delete_acls([AclBindingFilter()]),
            ):
                with pytest.raises(UnsupportedVersionError):
                    await call


async def test_acls_and_scram_where_tansu_answers(tansu: Any) -> None:
    """Tansu answers DescribeAcls (no ACLs) and takes SCRAM upsertions; its CreateAcls and
    DescribeUserScramCredentials answers are malformed (a null array): that raises."""
    async with AdminClient(tansu.bootstrap_servers) as admin:
        assert await admin.describe_acls() == []
        upsert = ScramUpsertion("alice", "SCRAM-SHA-256", "s3cret", iterations=8192)
        assert (await admin.alter_user_scram_credentials([upsert])) == {"alice": None}
        with anyio.fail_after(10), pytest.raises(RemoteProtocolError, match="null array"):
            await admin.create_acls(
                [AclBinding("topic", "t", "literal", "User:a", "*", "read", "allow")]  # type: ignore[arg-type]
            )
        with anyio.fail_after(10), pytest.raises(RemoteProtocolError, match="null array"):
            await admin.describe_user_scram_credentials(["alice"])


async def test_on_kafka_log_dirs_producers_and_transactions(kafka: Any) -> None:
    topic, txn = unique("adm-kcl"), unique("adm-kcl-tx")
    t0, t1 = TopicPartition(topic, 0), TopicPartition(topic, 1)
    async with AdminClient(kafka.bootstrap_servers) as admin:
        await admin.create_topics([NewTopic(topic, 2)])
        node = (await admin.describe_cluster()).nodes[0].node_id
        async with Producer(kafka.bootstrap_servers) as idempotent:
            await idempotent.send_and_wait(topic, b"x", partition=0)
        dirs = await admin.describe_log_dirs([node, 99])
        (log_dir,) = dirs[node].values()  # type: ignore[union-attr]
        assert log_dir.error is None and log_dir.replicas[t0].size > 0
        assert log_dir.total_bytes and log_dir.usable_bytes
        assert isinstance(dirs[99], BrokerNotAvailableError)
        assert set((await admin.describe_log_dirs()).raise_for_errors()) == {node}

        async with Producer(kafka.bootstrap_servers, transactional_id=txn) as tx:
            await tx.begin_transaction()
            await tx.send_and_wait(topic, b"open", partition=1)
            producers = (await admin.describe_producers([t0, t1])).raise_for_errors()
            (writer,) = producers[t0]
            assert writer.current_transaction_start_offset is None
            (open_txn,) = producers[t1]
            assert open_txn.current_transaction_start_offset == 0
            listed = await admin.list_transactions(states=["Ongoing"])
            assert txn in {t.transactional_id for t in listed}
            assert txn not in {
                t.transactional_id for t in await admin.list_transactions(states=["Empty"])
            }
            described = await admin.describe_transactions([txn, unique("adm-kcl-none")])
            mine = described[txn]
            assert not isinstance(mine, Exception)
            assert mine.state is TransactionState.ONGOING and mine.partitions == {t1}
            assert mine.producer_id == open_txn.producer_id and mine.coordinator_id == node
            (missing,) = described.failed.values()
            assert isinstance(missing, TransactionalIdNotFoundError)
            await tx.commit_transaction()
        done = await eventually(
            lambda: admin.describe_transactions([txn]),
            lambda d: d[txn].state is TransactionState.COMPLETE_COMMIT,  # type: ignore[union-attr]
        )
        assert done[txn].partitions == frozenset()  # type: ignore[union-attr]


def _sasl(cluster: Any, user: str, password: str, mechanism: str) -> dict[str, Any]:
    return {
        "bootstrap_servers": cluster.bootstrap_for("SASL_PLAINTEXT"),
        "sasl_mechanism": mechanism,
        "sasl_username": user,
        "sasl_password": password,
        "default_api_timeout": 15.0,
    }


async def _logs_in(cluster: Any, user: str, password: str) -> bool:
    """Whether `user` authenticates with SCRAM-SHA-256 (a new or deleted credential takes
    effect once the broker applied it, a moment after the controller answered)."""
    try:
        async with AdminClient(**_sasl(cluster, user, password, "SCRAM-SHA-256")) as client:
            await client.list_topics()
    except AuthenticationError:
        return False
    return True


async def test_on_kafka_acls_and_scram_users_with_an_authorizer(kafka_cluster_factory: Any) -> None:
    """ACLs and SCRAM credentials as Java's AdminClient sees them, by a super user over SASL:
    a rule takes effect for the user it names, a new credential logs in, a deleted one no
    longer does; refusals are errors of the matching kind."""
    cluster = kafka_cluster_factory(1, listeners=("PLAINTEXT", "SASL_PLAINTEXT"), authorizer=True)
    prefix, user = unique("adm-acl"), unique("carol")
    readable, hidden = f"{prefix}-a", unique("adm-hidden")
    read = AclBinding("topic", prefix, "prefixed", "User:alice", "*", "describe", "allow")  # type: ignore[arg-type]
    group = AclBinding("group", prefix, "literal", "User:alice", "*", "read", "allow")  # type: ignore[arg-type]
    bad = AclBinding("topic", prefix, "literal", "alice", "*", "read", "allow")  # type: ignore[arg-type]
    async with AdminClient(**_sasl(cluster, "admin", "admin-secret", "SCRAM-SHA-512")) as admin:
        described_cluster = await admin.describe_cluster(include_authorized_operations=True)
        operations = described_cluster.authorized_operations
        assert operations is not None and {AclOperation.ALTER, AclOperation.DESCRIBE} <= operations
        await admin.create_topics([NewTopic(readable, 1), NewTopic(hidden, 1)])
        created = await admin.create_acls([read, group, bad])
        assert created[read] is None and created[group] is None
        assert isinstance(created[bad], InvalidRequestError) and "principal" in str(created[bad])
        mine = AclBindingFilter(principal="User:alice", resource_name=prefix)
        rules = await eventually(lambda: admin.describe_acls(mine), lambda b: len(b) == 2)
        assert set(rules) == {read, group}
        matching = AclBindingFilter(ResourceType.TOPIC, readable, PatternType.MATCH)
        assert await admin.describe_acls(matching) == [read]

        alice = _sasl(cluster, "alice", "alice-secret", "SCRAM-SHA-256")
        async with AdminClient(**alice) as as_alice:
            seen = await eventually(
                lambda: as_alice.describe_topics([readable, hidden]),
                lambda r: not isinstance(r[readable], Exception),
            )
            assert isinstance(seen[hidden], TopicAuthorizationFailedError)
            with pytest.raises(ClusterAuthorizationFailedError):
                await as_alice.describe_acls()
            on_topics = AclBindingFilter(ResourceType.TOPIC, prefix)
            deleted = await admin.delete_acls(
                [on_topics, AclBindingFilter(principal="User:nobody")]
            )
            assert list(deleted.values()) == [(read,), ()]
            await eventually(
                lambda: as_alice.describe_topics([readable]),
                lambda r: isinstance(r[readable], TopicAuthorizationFailedError),
            )

        upsert = ScramUpsertion(user, "SCRAM-SHA-256", "carol-secret", iterations=8192)
        assert await admin.alter_user_scram_credentials([upsert]) == {user: None}
        described = await admin.describe_user_scram_credentials([user, "nobody"])
        assert described[user] == (ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 8192),)
        assert isinstance(described["nobody"], ResourceNotFoundError)
        everyone = (await admin.describe_user_scram_credentials()).raise_for_errors()
        assert {"admin", "alice", "bob", user} <= set(everyone)
        await eventually(lambda: _logs_in(cluster, user, "carol-secret"), lambda ok: ok)
        twice = await admin.alter_user_scram_credentials(
            [ScramUpsertion(user, "SCRAM-SHA-512", "x"), ScramDeletion(user, "SCRAM-SHA-256")]
        )
        assert isinstance(twice[user], DuplicateResourceError)  # one change per user per request
        removal = await admin.alter_user_scram_credentials(
            [ScramDeletion(user, "SCRAM-SHA-256"), ScramDeletion("nobody", "SCRAM-SHA-256")]
        )
        assert removal[user] is None and isinstance(removal["nobody"], ResourceNotFoundError)
        await eventually(lambda: _logs_in(cluster, user, "carol-secret"), lambda ok: not ok)

    async with AdminClient(cluster.bootstrap_servers, default_api_timeout=15.0) as anonymous:
        with pytest.raises(ClusterAuthorizationFailedError):
            await anonymous.describe_acls()
