"""The admin client against librdkafka's mock cluster (3 brokers): per-leader routing, latest
offsets (right there, unlike Tansu), retries of injected errors, a broker down failing only
its partitions, the DescribeCluster -> Metadata fallback, and group offsets with classic and
KIP-848 members. The mock has no DescribeGroups, ConsumerGroupDescribe, ShareGroupDescribe,
CreateTopics, DeleteRecords or DescribeCluster, answers offsets by timestamp with -1 (a FIXME
in librdkafka), and cannot list all of a group's offsets (it answers a null array)."""

from __future__ import annotations

from collections import Counter
from typing import Any

import anyio
import pytest
from _members import member, produce, unique

from krafka import AdminClient, NewTopic, OffsetSpec, TopicPartition
from krafka.errors import (
    KafkaTimeoutError,
    KrafkaError,
    NonEmptyGroupError,
    UnsupportedVersionError,
)
from krafka.protocol.error_codes import ErrorCode
from krafka.protocol.messages import ApiKey
from krafka.structs import OffsetAndMetadata

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(90)]

PARTS = [TopicPartition("t", p) for p in range(6)]


def requests_by_broker(cluster: Any, api: ApiKey) -> Counter[int]:
    return Counter(r.broker_id for r in cluster.requests() if r.api_key == api)


async def test_latest_offsets_one_request_per_leader(make_mock_cluster: Any) -> None:
    cluster = make_mock_cluster(3, topics={"t": 6})
    await anyio.to_thread.run_sync(
        produce, cluster.bootstrap_servers, "t", {p: p + 1 for p in range(6)}
    )
    async with AdminClient(cluster.bootstrap_servers) as admin:
        cluster.start_request_tracking()
        latest = await admin.list_offsets(PARTS)
        earliest = await admin.list_offsets(PARTS, "earliest")
        by_broker = requests_by_broker(cluster, ApiKey.LIST_OFFSETS)
    assert {tp: r.offset for tp, r in latest.raise_for_errors().items()} == {  # type: ignore[union-attr]
        tp: tp.partition + 1 for tp in PARTS
    }
    assert all(r.offset == 0 for r in earliest.raise_for_errors().values())  # type: ignore[union-attr]
    assert by_broker == {1: 2, 2: 2, 3: 2}  # leaders: partition p on broker p % 3 + 1


async def test_offsets_by_time_reach_the_broker_at_their_versions(make_mock_cluster: Any) -> None:
    cluster = make_mock_cluster(3, topics={"t": 6})
    async with AdminClient(cluster.bootstrap_servers) as admin:
        results = await admin.list_offsets(
            {PARTS[0]: 1_700_000_000_000, PARTS[1]: OffsetSpec.MAX_TIMESTAMP}
        )
    assert dict(results) == {PARTS[0]: None, PARTS[1]: None}  # the mock's by-time FIXME


async def test_injected_leader_errors_are_retried(make_mock_cluster: Any) -> None:
    cluster = make_mock_cluster(3, topics={"t": 6})
    await anyio.to_thread.run_sync(produce, cluster.bootstrap_servers, "t", {0: 4})
    cluster.push_request_errors(
        ApiKey.LIST_OFFSETS,
        ErrorCode.NOT_LEADER_OR_FOLLOWER,
        ErrorCode.LEADER_NOT_AVAILABLE,
        ErrorCode.OFFSET_NOT_AVAILABLE,
    )
    async with AdminClient(cluster.bootstrap_servers) as admin:
        cluster.start_request_tracking()
        result = await admin.list_offsets([PARTS[0]])
        lookups = sum(1 for r in cluster.requests() if r.api_key == ApiKey.METADATA)
    assert result[PARTS[0]].offset == 4  # type: ignore[union-attr]
    assert lookups >= 2  # the moved leaders were looked up again


async def test_a_broker_down_fails_only_its_partitions(make_mock_cluster: Any) -> None:
    cluster = make_mock_cluster(3, topics={"t": 6})
    async with AdminClient(cluster.bootstrap_servers, request_timeout=1.0) as admin:
        await admin.list_offsets(PARTS)  # connections and metadata in place
        cluster.broker_down(3)
        results = await admin.list_offsets(PARTS, timeout=2.5)
    on_broker_3 = {tp for tp in PARTS if tp.partition % 3 == 2}
    assert set(results.failed) == on_broker_3
    assert all(isinstance(e, KafkaTimeoutError) for e in results.failed.values())
    assert all(results[tp].offset == 0 for tp in set(PARTS) - on_broker_3)  # type: ignore[union-attr]


async def test_describe_cluster_falls_back_to_metadata(make_mock_cluster: Any) -> None:
    cluster = make_mock_cluster(3)
    cluster.set_controller_id(2)
    async with AdminClient(cluster.bootstrap_servers) as admin:
        description = await admin.describe_cluster()
        assert [n.node_id for n in description.nodes] == [1, 2, 3]
        assert description.controller is not None and description.controller.node_id == 2
        with pytest.raises(UnsupportedVersionError):
            await admin.create_topics([NewTopic("x")])
        with pytest.raises(UnsupportedVersionError):  # no describe API of any group kind
            await admin.describe_groups(["g"])


async def test_group_offsets_with_classic_and_kip848_members(make_mock_cluster: Any) -> None:
    cluster = make_mock_cluster(3, topics={"t": 6})
    bootstrap = cluster.bootstrap_servers
    await anyio.to_thread.run_sync(produce, bootstrap, "t", {0: 5, 1: 5})
    classic, kip848, simple = unique("classic"), unique("kip848"), unique("simple")
    cluster.set_coordinator("group", classic, 3)
    cluster.set_group_initial_rebalance_delay(0)
    t0, t1 = PARTS[0], PARTS[1]
    async with AdminClient(bootstrap) as admin:
        for group, config in ((classic, {}), (kip848, {"group.protocol": "consumer"})):
            with member(bootstrap, group, ["t"], **config) as m:
                await anyio.to_thread.run_sync(m.wait_assigned)
                await anyio.to_thread.run_sync(m.commit, "t", {0: 3})
                cluster.start_request_tracking()
                offsets = await admin.list_group_offsets(group, [t0, t1])
                assert offsets[t0] is not None and offsets[t0].offset == 3  # type: ignore[union-attr]
                assert offsets[t1] is None
                if group == classic:
                    assert set(requests_by_broker(cluster, ApiKey.OFFSET_FETCH)) == {3}
                cluster.stop_request_tracking()
                with pytest.raises(NonEmptyGroupError, match="active members"):
                    await admin.alter_group_offsets(group, {t0: 1})

        # a group no member ever joined takes an admin's offsets, and they read back
        altered = await admin.alter_group_offsets(
            simple, {t0: OffsetAndMetadata(2, "reset"), t1: 4}
        )
        assert dict(altered) == {t0: None, t1: None}
        offsets = (await admin.list_group_offsets(simple, [t0, t1])).raise_for_errors()
        assert offsets[t0] == OffsetAndMetadata(2, "reset", offsets[t0].leader_epoch)  # type: ignore[union-attr]
        assert offsets[t1] is not None and offsets[t1].offset == 4


async def test_injected_coordinator_errors_are_retried(make_mock_cluster: Any) -> None:
    cluster = make_mock_cluster(3, topics={"t": 6})
    group = unique("g")
    async with AdminClient(cluster.bootstrap_servers) as admin:
        await admin.alter_group_offsets(group, {PARTS[0]: 7})
        cluster.push_request_errors(
            ApiKey.OFFSET_FETCH, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, ErrorCode.NOT_COORDINATOR
        )
        cluster.start_request_tracking()
        offsets = await admin.list_group_offsets(group, [PARTS[0]])
        lookups = sum(1 for r in cluster.requests() if r.api_key == ApiKey.FIND_COORDINATOR)
    assert offsets[PARTS[0]].offset == 7  # type: ignore[union-attr]
    assert lookups == 2  # found, then found again after NOT_COORDINATOR


async def test_an_unknown_group_error_is_the_groups(make_mock_cluster: Any) -> None:
    cluster = make_mock_cluster(3, topics={"t": 6})
    cluster.push_request_errors(ApiKey.OFFSET_FETCH, ErrorCode.GROUP_AUTHORIZATION_FAILED)
    async with AdminClient(cluster.bootstrap_servers) as admin:
        with pytest.raises(KrafkaError, match="GROUP_AUTHORIZATION_FAILED"):
            await admin.list_group_offsets(unique("g"), [PARTS[0]])
