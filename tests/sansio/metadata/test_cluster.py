from __future__ import annotations

import uuid
from types import SimpleNamespace as NS

import pytest

from krafka.protocol.error_codes import ErrorCode
from krafka.sansio.metadata import ClusterMetadata, MetadataConfig, parse_bootstrap

TID = uuid.uuid4()


def _partition(index: int, leader: int = 1, epoch: int = 0, error: int = 0) -> NS:
    return NS(
        partition_index=index,
        leader_id=leader,
        leader_epoch=epoch,
        replica_nodes=[leader],
        isr_nodes=[leader],
        offline_replicas=[],
        error_code=error,
    )


def _response(topics: list[NS], brokers: int = 2, error_code: int = 0) -> NS:
    return NS(
        brokers=[
            NS(node_id=i, host="127.0.0.1", port=9000 + i, rack=f"r{i}")
            for i in range(1, brokers + 1)
        ],
        cluster_id="c1",
        controller_id=1,
        topics=topics,
        error_code=error_code,
    )


def _topic(name: str, n: int = 4, error: int = 0, epoch: int = 0, leader: int = 1) -> NS:
    parts = [_partition(i, leader=leader, epoch=epoch) for i in range(n)]
    return NS(name=name, error_code=error, topic_id=TID, is_internal=False, partitions=parts)


def _meta(**config: float) -> ClusterMetadata:
    return ClusterMetadata(parse_bootstrap("localhost:9092"), MetadataConfig(**config))  # type: ignore[arg-type]


def test_bootstrap_parsing() -> None:
    assert parse_bootstrap("a:1, b:2") == [("a", 1), ("b", 2)]
    assert parse_bootstrap(["[::1]:9092"]) == [("::1", 9092)]
    with pytest.raises(ValueError):
        parse_bootstrap("nohost")


def test_update_populates_brokers_topics_leaders() -> None:
    meta = _meta()
    assert meta.refresh_due(0.0)
    assert meta.addresses() == [(None, "localhost", 9092)]
    meta.add_topics(["t"], 0.0)
    meta.refresh_started(0.0)
    meta.update(_response([_topic("t")]), 0.0, ["t"])
    assert meta.partitions_for("t") == [0, 1, 2, 3]
    leader = meta.leader_for("t", 2)
    assert leader is not None and leader.address == ("127.0.0.1", 9001) and leader.rack == "r1"
    assert meta.topic_id("t") == TID and meta.topic_name(TID) == "t"
    assert meta.cluster_id == "c1"
    assert {n for n, _, _ in meta.addresses()} == {1, 2}


def test_age_refresh_and_error_refresh_with_backoff() -> None:
    meta = _meta(max_age=60.0, refresh_backoff=0.5)
    meta.refresh_started(0.0)
    meta.update(_response([]), 0.0)
    assert meta.next_refresh_at() == 60.0
    meta.on_error(ErrorCode.NOT_LEADER_OR_FOLLOWER, "t")
    assert meta.next_refresh_at() == 0.5
    meta.refresh_started(1.0)
    meta.refresh_failed(1.0)
    assert meta.next_refresh_at() == 1.5


def test_partial_refresh_and_idle_topics_expire() -> None:
    meta = _meta(topic_idle_ttl=10.0)
    meta.add_topics(["a", "b"], 0.0)
    meta.update(_response([_topic("a"), _topic("b")]), 0.0, ["a", "b"])
    meta.touch("a", 8.0)
    assert meta.topics_to_refresh(15.0) == ["a"]
    assert "b" not in meta.topics
    meta.request_refresh(all_topics=True)
    assert meta.topics_to_refresh(15.0) is None


def test_older_leader_epoch_is_ignored() -> None:
    meta = _meta()
    meta.add_topics(["t"], 0.0)
    meta.update(_response([_topic("t", epoch=5, leader=2)]), 0.0, ["t"])
    meta.update(_response([_topic("t", epoch=3, leader=1)]), 1.0, ["t"])
    part = meta.partition("t", 0)
    assert part is not None and part.leader == 2 and part.leader_epoch == 5


def test_unknown_topic_is_dropped_and_refresh_wanted() -> None:
    meta = _meta()
    meta.add_topics(["t"], 0.0)
    meta.update(_response([_topic("t")]), 0.0, ["t"])
    gone = NS(
        name="t", error_code=ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, topic_id=None, partitions=[]
    )
    meta.update(_response([gone]), 1.0, ["t"])
    assert "t" not in meta.topics
    assert meta.refresh_due(1.2)


def test_a_topic_without_leaders_yet_is_pending_until_described() -> None:
    """Apache Kafka answers LEADER_NOT_AVAILABLE (no partitions) for a topic it is creating on
    the Metadata request's behalf: pending (ask again), unlike an unknown topic (absent)."""
    meta = _meta()
    meta.add_topics(["new", "nobody"], 0.0)
    creating = NS(
        name="new", error_code=ErrorCode.LEADER_NOT_AVAILABLE, topic_id=None, partitions=[]
    )
    unknown = NS(
        name="nobody", error_code=ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, topic_id=None, partitions=[]
    )
    meta.update(_response([creating, unknown]), 0.0, ["new", "nobody"])
    assert meta.topic_pending("new") and meta.partitions_for("new") == []
    assert not meta.topic_pending("nobody")
    assert meta.refresh_due(0.2)
    meta.update(_response([_topic("new")]), 0.3, ["new", "nobody"])
    assert not meta.topic_pending("new") and meta.partitions_for("new") == [0, 1, 2, 3]


def test_rebootstrap_after_unreachable_for_trigger() -> None:
    meta = _meta(rebootstrap_trigger=30.0)
    meta.update(_response([]), 0.0)
    meta.connection_failed(10.0)
    meta.connection_failed(20.0)
    assert not meta.rebootstrap_due(39.0)
    assert meta.rebootstrap_due(40.0)
    meta.rebootstrap(40.0)
    assert meta.addresses() == [(None, "localhost", 9092)]
    assert meta.refresh_due(40.0)


def test_rebootstrap_required_error_code() -> None:
    meta = _meta()
    meta.update(_response([]), 0.0)
    meta.update(_response([], brokers=1, error_code=ErrorCode.REBOOTSTRAP_REQUIRED), 1.0)
    assert meta.rebootstrap_due(1.0)
    assert len(meta.brokers) == 2  # the response carrying the error is not applied


def test_leader_lookups_for_sending_keep_a_topic_and_partition_counts_follow_the_cache() -> None:
    meta = _meta(topic_idle_ttl=10.0)
    counts = meta.partition_counts
    meta.add_topics(["t", "idle"], 0.0)
    meta.update(_response([_topic("t", 2), _topic("idle", 3)]), 0.0, ["idle", "t"])
    assert counts == {"t": 2, "idle": 3}
    assert meta.leader_id("t", 1, 8.0) == 1 and meta.leader_id("t", 7, 8.0) is None
    assert meta.topics_to_refresh(15.0) == ["t"]  # "idle" expired, "t" was used at 8 s
    assert counts == {"t": 2}
    meta.update(
        _response([_topic("t", 0, error=ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)]), 15.0, ["t"]
    )
    assert counts == {}
    assert meta.leader_id("new", 0, 16.0) is None and "new" in meta.interest
    assert meta.refresh_due(16.0)  # a topic first used asks for a refresh
    meta.update(_response([_topic("t", 4)]), 16.0, ["t"])
    meta.rebootstrap(17.0)
    assert counts == {} and meta.partition_counts is counts


def test_refreshes_finding_no_leader_back_off_exponentially_and_new_topics_skip_it() -> None:
    meta = _meta(refresh_backoff=0.1, refresh_backoff_max=1.0)
    meta.add_topics(["t"], 0.0)
    now, gaps = 0.0, []
    for _ in range(7):
        meta.refresh_started(now, ["t"])
        meta.update(_response([_topic("t", leader=-1)]), now, ["t"])
        wait = meta.refresh_wait(now, ["t"])
        assert meta.next_refresh_at() == pytest.approx(now + wait)
        gaps.append(round(wait, 3))
        now += wait
    assert gaps == [0.1, 0.2, 0.4, 0.8, 1.0, 1.0, 1.0]
    assert meta.refresh_wait(now, ["t", "new"]) == 0.0  # a topic never asked for: at once
    meta.refresh_started(now, ["t"])
    meta.update(_response([_topic("t")]), now, ["t"])  # a leader again: back to the base
    assert meta.refresh_wait(now, ["t"]) == pytest.approx(0.1)


@pytest.mark.parametrize(
    "error", [ErrorCode.INVALID_TOPIC_EXCEPTION, ErrorCode.TOPIC_AUTHORIZATION_FAILED]
)
def test_a_final_topic_error_hides_the_partitions_that_come_with_it(error: ErrorCode) -> None:
    """Java uses a topic's partitions only when its error is NONE: a broker answering
    INVALID_TOPIC_EXCEPTION with partitions (librdkafka's mock) made the topic look usable."""
    meta = _meta()
    meta.add_topics(["t"], 0.0)
    meta.update(_response([_topic("t", error=error)]), 0.0, ["t"])
    assert "t" not in meta.topics and "t" not in meta.partition_counts
    assert meta.topic_errors["t"] == error
    meta.update(_response([_topic("t")]), 1.0, ["t"])
    assert meta.partitions_for("t") == [0, 1, 2, 3] and "t" not in meta.topic_errors
