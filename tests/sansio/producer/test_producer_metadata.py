"""The producer engine and the metadata cache over simulated time: a topic written to all the
time stays in the refresh interest (the engine reports it, `TopicsInUse`, and its driver notes
the use), so partitions added to it are seen at the next age refresh. The engine only reads the
metadata: it never writes its clock into it."""

from __future__ import annotations

from types import SimpleNamespace as NS

from _producer_scripted import produce_response

from krafka.protocol.messages import ProduceRequest
from krafka.sansio.actions import SendRequest
from krafka.sansio.metadata import ClusterMetadata, MetadataConfig, parse_bootstrap
from krafka.sansio.producer import ProducerConfig, ProducerEngine, TopicsInUse


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
    engine = ProducerEngine(ProducerConfig(linger=0.0, enable_idempotence=False, acks=1), meta)
    partitions = 2
    for second in range(1, 1000):  # one batch a second, three times the idle TTL
        now = float(second)
        engine.append("t", second % partitions, 1_700_000_000_000, None, b"v", None, now, 1)
        for action in engine.next_actions(now):
            if isinstance(action, TopicsInUse):  # the driver's part
                for topic in action.topics:
                    meta.touch(topic, now)
            elif isinstance(action, SendRequest):
                assert isinstance(action.request, ProduceRequest)
                parts = action.request.topic_data[0].partition_data
                response = produce_response({("t", p.index): (0, 0) for p in parts})
                engine.on_response(action, response, now)
        if meta.refresh_due(now):  # the client's age refresh
            meta.refresh_started(now)
            asked = meta.topics_to_refresh(now)
            assert asked == ["t"], f"t dropped from the refresh at {now}s"
            meta.update(_response(2 if now < 500 else 6), now, asked)
        partitions = meta.partition_counts["t"]
    assert partitions == 6
