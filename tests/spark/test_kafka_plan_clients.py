"""The planner of `format("krafka")` on a live broker: one admin client and one end-offsets
consumer serve every lookup of a streaming query (Spark asks at every trigger), and end
offsets stay fresh across calls."""

from __future__ import annotations

import pickle
import time
from typing import Any

import pytest

from krafka import NewTopic
from krafka.spark.kafka_options import SourceOptions
from krafka.spark.kafka_plan import Planner
from krafka.structs import TopicPartition
from krafka.sync import AdminClient, Producer

pytestmark = [pytest.mark.broker, pytest.mark.timeout(120)]


def unique(prefix: str) -> str:
    return f"{prefix}-{time.time_ns()}"


def produce(bootstrap: str, topic: str, counts: dict[int, int]) -> None:
    with Producer(bootstrap) as producer:
        for partition, count in counts.items():
            for _ in range(count):
                producer.send(topic, b"v", partition=partition)
        producer.flush()


def test_one_set_of_clients_serves_every_lookup_with_fresh_end_offsets(broker: Any) -> None:
    bootstrap, topic = broker.bootstrap_servers, unique("plan-clients")
    with AdminClient(bootstrap) as admin:
        admin.create_topics([NewTopic(topic, 2)]).raise_for_errors()
    produce(bootstrap, topic, {0: 3, 1: 1})
    planner = Planner(SourceOptions.parse(
        {"kafka.bootstrap.servers": bootstrap, "subscribe": topic}, streaming=True))  # fmt: skip
    tps = [TopicPartition(topic, 0), TopicPartition(topic, 1)]
    try:
        assert planner.partitions() == tps
        assert planner.latest(tps) == {tps[0]: 3, tps[1]: 1}
        admin, ends = planner.admin(), planner._ends_consumer()
        produce(bootstrap, topic, {0: 2, 1: 4})
        assert planner.latest(tps) == {tps[0]: 5, tps[1]: 5}
        assert planner.latest(tps[1:]) == {tps[1]: 5}
        assert planner.earliest(tps) == {tps[0]: 0, tps[1]: 0}
        assert planner.partitions() == tps
        assert planner.admin() is admin and planner._ends_consumer() is ends
        assert ends.assignment() == set()  # nothing fetched between lookups
        copy = pickle.loads(pickle.dumps(planner))  # Spark ships readers to its workers
        assert copy.latest(tps) == {tps[0]: 5, tps[1]: 5}
        copy.close()
    finally:
        planner.close()
    assert planner.latest(tps) == {tps[0]: 5, tps[1]: 5}  # closed: a lookup opens new clients
    planner.close()
