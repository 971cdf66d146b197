"""The Fetcher machine, scripted: one Fetch per broker, preferred replicas and their expiry,
offset-out-of-range resets with backoff, node backoff without busy deadlines."""

from __future__ import annotations

from typing import Any

import pytest

from krafka.codec import Record, encode_batch
from krafka.errors import (
    KafkaConnectionError,
    OffsetOutOfRangeError,
    TopicAuthorizationFailedError,
)
from krafka.protocol.error_codes import ErrorCode
from krafka.protocol.messages import FetchRequest, FetchResponse, MetadataResponse
from krafka.protocol.messages.fetch_response import FetchableTopicResponse, PartitionData
from krafka.protocol.messages.metadata_response import (
    MetadataResponseBroker,
    MetadataResponsePartition,
    MetadataResponseTopic,
)
from krafka.sansio.actions import SendRequest
from krafka.sansio.consumer.fetcher import (
    FetchCompleted,
    FetchConfig,
    Fetcher,
    ResetNeeded,
)
from krafka.sansio.consumer.subscription import RESET_BACKOFF, ResetStrategy, SubscriptionState
from krafka.sansio.metadata import ClusterMetadata
from krafka.structs import TopicPartition

T0, T1, T2 = (TopicPartition("t", p) for p in range(3))


def cluster() -> ClusterMetadata:
    meta = ClusterMetadata([("b1", 9092)])
    response = MetadataResponse(
        brokers=[
            MetadataResponseBroker(node_id=n, host=f"b{n}", port=9092, rack=f"r{n}")
            for n in (1, 2, 3)
        ],
        topics=[
            MetadataResponseTopic(
                name="t",
                partitions=[
                    MetadataResponsePartition(
                        partition_index=p, leader_id=1 + p % 2, replica_nodes=[1, 2, 3]
                    )
                    for p in range(3)
                ],
            )
        ],
    )
    meta.update(response, 0.0)
    return meta


def fetcher(**config: Any) -> tuple[Fetcher, SubscriptionState]:
    subscription = SubscriptionState(ResetStrategy.EARLIEST)
    subscription.assign_from_user([T0, T1, T2])
    for tp in (T0, T1, T2):
        subscription.seek(tp, 0)
    return Fetcher(FetchConfig(**config), subscription, cluster(), rand=lambda: 0.5), subscription


def fetches(actions: list[Any]) -> dict[int, FetchRequest]:
    return {a.target.node_id: a.request.build(12) for a in actions if isinstance(a, SendRequest)}


def answer(part: int, code: int = 0, records: bytes = b"", replica: int = -1) -> FetchResponse:
    data = PartitionData(
        partition_index=part,
        error_code=code,
        high_watermark=10,
        last_stable_offset=10,
        log_start_offset=0,
        preferred_read_replica=replica,
        records=records,
    )
    return FetchResponse(responses=[FetchableTopicResponse(topic="t", partitions=[data])])


def test_one_fetch_per_broker_and_none_while_in_flight() -> None:
    f, _ = fetcher()
    sent = fetches(f.next_actions(0.0))
    assert set(sent) == {1, 2}
    assert sorted(p.partition for t in sent[1].topics for p in t.partitions) == [0, 2]
    assert fetches(f.next_actions(0.1)) == {}


def test_preferred_replica_until_it_expires() -> None:
    f, _ = fetcher(client_rack="r3", preferred_replica_ttl=5.0)
    actions = [a for a in f.next_actions(0.0) if isinstance(a, SendRequest)]
    to_broker_2 = next(a for a in actions if a.target.node_id == 2)
    f.on_response(to_broker_2, answer(1, replica=3), 0.1)
    round_two = [a for a in f.next_actions(0.2) if isinstance(a, SendRequest)]
    later = fetches(round_two)
    assert 3 in later and [p.partition for t in later[3].topics for p in t.partitions] == [1]
    to_replica = next(a for a in round_two if a.target.node_id == 3)
    f.on_failure(to_replica, KafkaConnectionError("x"), 0.3)
    assert f.next_deadline() is None or f.next_deadline() > 0.3
    expired = fetches(f.next_actions(6.0))
    assert 2 in expired and 1 in [p.partition for t in expired[2].topics for p in t.partitions]


def test_out_of_range_requests_a_reset_and_backs_off() -> None:
    f, subscription = fetcher()
    actions = [a for a in f.next_actions(0.0) if isinstance(a, SendRequest)]
    to_1 = next(a for a in actions if a.target.node_id == 1)
    f.on_response(to_1, answer(0, code=ErrorCode.OFFSET_OUT_OF_RANGE), 0.1)
    assert any(isinstance(a, ResetNeeded) for a in f.next_actions(0.1))
    assert subscription.resets_due(0.1) == {T0: ResetStrategy.EARLIEST}
    subscription.reset_failed(T0, 0.2)
    first = subscription.next_reset_at()
    subscription.reset_failed(T0, 0.2)
    second = subscription.next_reset_at()
    assert first is not None and second is not None
    assert abs((first - 0.2) - RESET_BACKOFF.delay(1, lambda: 0.5)) < 0.05
    assert second - 0.2 > first - 0.2
    assert subscription.resets_due(0.2) == {}


def test_out_of_range_without_reset_policy_is_raised_once_and_not_refetched_meanwhile() -> None:
    """auto_offset_reset=none: the error waits for the application's poll and the partition is
    not fetched again until then (no error piling up per background fetch); a seek meanwhile
    makes it stale (never raised); after it was raised, the partition is fetched again."""
    f, subscription = fetcher()
    subscription.default_reset = ResetStrategy.NONE
    sent = [a for a in f.next_actions(0.0) if isinstance(a, SendRequest)]
    to_1 = next(a for a in sent if a.target.node_id == 1)
    f.on_response(to_1, answer(0, code=ErrorCode.OFFSET_OUT_OF_RANGE), 0.1)
    (later,) = [a for a in f.next_actions(0.2) if isinstance(a, SendRequest)]
    assert [p.partition for t in later.request.build(12).topics for p in t.partitions] == [2]
    f.on_response(later, answer(2), 0.25)
    assert f.has_data()
    with pytest.raises(OffsetOutOfRangeError, match="t-0"):
        f.fetched_records(10)
    assert f.fetched_records(10) == []
    (again,) = [a for a in f.next_actions(0.3) if isinstance(a, SendRequest)]
    assert 0 in [p.partition for t in again.request.build(12).topics for p in t.partitions]
    f.on_response(again, answer(0, code=ErrorCode.OFFSET_OUT_OF_RANGE), 0.4)
    subscription.seek(T0, 7)
    assert not f.has_data() and f.fetched_records(10) == []


def test_data_is_buffered_and_handed_out() -> None:
    f, subscription = fetcher()
    actions = [a for a in f.next_actions(0.0) if isinstance(a, SendRequest)]
    to_2 = next(a for a in actions if a.target.node_id == 2)
    batch = encode_batch([Record(i, 5, None, b"%d" % i, []) for i in range(4)], "none", 0)
    f.on_response(to_2, answer(1, records=batch), 0.1)
    assert any(isinstance(a, FetchCompleted) for a in f.next_actions(0.1))
    records = f.fetched_records(3)
    assert [r.offset for r in records] == [0, 1, 2]
    assert subscription.position(T1) == 3
    assert [r.offset for r in f.fetched_records(10)] == [3]
    assert subscription.state_of(T1).high_watermark == 10
    assert f.metrics.fetches == 1 and f.metrics.bytes_consumed == len(batch)


def test_a_partition_assigned_again_is_fetched_from_its_new_position() -> None:
    """Fetched-ahead offsets belong to one assignment: a partition unassigned and assigned
    again (a pooled Spark consumer, a rebalance that gives it back) fetches from where it is
    told to, not from where the earlier assignment's prefetching had got to."""
    f, subscription = fetcher()
    to_2 = next(
        a for a in f.next_actions(0.0) if isinstance(a, SendRequest) and a.target.node_id == 2
    )
    batch = encode_batch([Record(i, 5, None, b"%d" % i, []) for i in range(4)], "none", 0)
    f.on_response(to_2, answer(1, records=batch), 0.1)
    ahead = next(
        a for a in f.next_actions(0.1) if isinstance(a, SendRequest) and a.target.node_id == 2
    )
    assert [p.fetch_offset for t in fetches([ahead])[2].topics for p in t.partitions] == [4]
    f.on_response(ahead, answer(1), 0.15)
    subscription.assign_from_user([T0, T2])
    subscription.assign_from_user([T0, T1, T2])
    subscription.seek(T1, 0)
    assert f.fetched_records(10) == []  # the earlier assignment's data is dropped
    again = fetches(f.next_actions(0.2))
    assert [(p.partition, p.fetch_offset) for t in again[2].topics for p in t.partitions] == [
        (1, 0)
    ]


def test_a_refused_partition_wakes_the_poll_and_waits_for_it() -> None:
    """TOPIC_AUTHORIZATION_FAILED (any error retrying will not fix) is handed to a waiting poll
    at once, and the partition is not fetched again until the poll has raised it: one fetch
    per poll, as in Java, not a fetch loop piling up errors."""
    f, _ = fetcher()
    to_2 = next(
        a for a in f.next_actions(0.0) if isinstance(a, SendRequest) and a.target.node_id == 2
    )
    f.on_response(to_2, answer(1, code=ErrorCode.TOPIC_AUTHORIZATION_FAILED), 0.1)
    actions = f.next_actions(0.1)
    assert any(isinstance(a, FetchCompleted) for a in actions)
    assert 2 not in fetches(actions) and 2 not in fetches(f.next_actions(0.2))
    with pytest.raises(TopicAuthorizationFailedError, match="t-1"):
        f.fetched_records(10)
    assert f.fetched_records(10) == []
    assert 2 in fetches(f.next_actions(0.3))
