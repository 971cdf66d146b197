"""Cluster admin calls against Tansu, and how calls to APIs it lacks or answers badly fail:
at once, as a whole, with one clear error (never a hang, never a crashed broker)."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from krafka import AclBinding, AclBindingFilter, AdminClient, ScramUpsertion
from krafka.errors import RemoteProtocolError, UnsupportedVersionError

pytestmark = [pytest.mark.anyio, pytest.mark.broker, pytest.mark.timeout(60)]


async def test_describe_cluster(broker: Any) -> None:
    async with AdminClient(broker.bootstrap_servers) as admin:
        cluster = await admin.describe_cluster()
    assert cluster.cluster_id
    assert cluster.controller is not None and cluster.controller in cluster.nodes
    node = cluster.nodes[0]
    assert (node.host, node.port) == ("127.0.0.1", broker.port)


async def test_apis_tansu_lacks_fail_at_once(broker: Any) -> None:
    async with AdminClient(broker.bootstrap_servers) as admin:
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


async def test_acls_and_scram_where_tansu_answers(broker: Any) -> None:
    """Tansu answers DescribeAcls (no ACLs) and takes SCRAM upsertions; its CreateAcls and
    DescribeUserScramCredentials answers are malformed (a null array): that raises."""
    async with AdminClient(broker.bootstrap_servers) as admin:
        assert await admin.describe_acls() == []
        upsert = ScramUpsertion("alice", "SCRAM-SHA-256", "s3cret", iterations=8192)
        assert (await admin.alter_user_scram_credentials([upsert])) == {"alice": None}
        with anyio.fail_after(10), pytest.raises(RemoteProtocolError, match="null array"):
            await admin.create_acls(
                [AclBinding("topic", "t", "literal", "User:a", "*", "read", "allow")]  # type: ignore[arg-type]
            )
        with anyio.fail_after(10), pytest.raises(RemoteProtocolError, match="null array"):
            await admin.describe_user_scram_credentials(["alice"])
