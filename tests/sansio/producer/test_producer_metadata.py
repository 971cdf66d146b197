"""The producer and the metadata cache over simulated time: a topic written to all the time
stays in the refresh interest, so partitions added to it are seen at the next age refresh."""

from __future__ import annotations

from types import SimpleNamespace as NS

from krafka.sansio.metadata import ClusterMetadata, MetadataConfig, parse_bootstrap
from krafka.sansio.producer import PartitionResult, ProducerConfig, ProducerCore


def _response(partitions: int) -> NS:
    parts = [
        NS(
            partition_index=i,
            leader_id=1,
            leader_epoch=0,
            replica_nodes=[1],
            isr_nodes=[1],
            offline_replicas=[],
            error_code=0,
        )
        for i in range(partitions)
    ]
    topic = NS(name="t", error_code=0, topic_id=None, is_internal=False, partitions=parts)
    broker = NS(node_id=1, host="127.0.0.1", port=9092, rack=None)
    return NS(brokers=[broker], cluster_id="c", controller_id=1, topics=[topic], error_code=0)


def test_a_topic_in_constant_use_stays_refreshed_and_its_new_partitions_show() -> None:
    meta = ClusterMetadata(
        parse_bootstrap("127.0.0.1:9092"), MetadataConfig(max_age=300.0, topic_idle_ttl=300.0)
    )
    meta.add_topics(["t"], 0.0)
    meta.refresh_started(0.0)
    meta.update(_response(2), 0.0, meta.topics_to_refresh(0.0))
    core = ProducerCore.build(ProducerConfig(linger=0.0, enable_idempotence=False, acks=1))
    partitions = 2
    for second in range(1, 1000):  # one batch a second, three times the idle TTL
        now = float(second)
        core.accumulator.append(
            "t", second % partitions, 1_700_000_000_000, None, b"v", None, 22, now, 1
        )
        drained = core.sender.drain(now, meta)
        for plan in drained.plans:
            results = {tp: PartitionResult(base_offset=0) for tp in plan.batches}
            core.sender.on_response(plan, results, now)
        if meta.refresh_due(now):  # the client's age refresh
            meta.refresh_started(now)
            asked = meta.topics_to_refresh(now)
            assert asked == ["t"], f"t dropped from the refresh at {now}s"
            meta.update(_response(2 if now < 500 else 6), now, asked)
        partitions = meta.partition_counts["t"]
    assert partitions == 6
