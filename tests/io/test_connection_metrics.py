"""Java's connection and node metrics in every client's `metrics()`, against each live cluster:
requests counted as sent, per node and per API, latencies positive and bounded, connections
and bytes counted (the quota throttle and KIP-368 re-authentication are asserted in
tests/io/test_throttle.py and tests/io/security/test_reauthentication.py)."""

from __future__ import annotations

import time
from typing import Any

import anyio
import pytest

from krafka import AdminClient, Consumer, Producer, ShareConsumer, TopicPartition
from krafka.io.client import KafkaClient
from krafka.protocol.messages import ApiVersionsRequest
from krafka.sync import Producer as SyncProducer

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(90)]

KEYS = ("connection-metrics", "node-metrics", "api-metrics", "node-api-metrics")


async def test_requests_of_one_api_are_counted_as_sent_per_node(broker: Any) -> None:
    async with KafkaClient(broker.bootstrap_servers) as client:
        node = next(iter(client.metadata.brokers))
        started = anyio.current_time()
        for _ in range(5):
            await client.send(ApiVersionsRequest(), node_id=node)
        elapsed = anyio.current_time() - started
        metrics = client.connection_metrics()
    api = metrics.apis["ApiVersions"]
    assert api["request-total"] == api["response-total"] == 5
    assert metrics.node_apis[node, "ApiVersions"]["request-total"] == 5
    assert 0 < api["request-latency-avg"] <= api["request-latency-max"] <= elapsed
    assert api["request-size-avg"] > 0
    client_wide = metrics.client
    assert client_wide["request-total"] == sum(v["request-total"] for v in metrics.apis.values())
    assert client_wide["request-total"] == sum(v["request-total"] for v in metrics.nodes.values())
    assert client_wide["connection-creation-total"] >= client_wide["connection-count"] >= 1
    assert metrics.nodes[node]["incoming-byte-total"] > 0
    assert client_wide["outgoing-byte-total"] >= 5 * api["request-size-avg"]


async def test_every_client_reports_its_connections(broker: Any) -> None:
    servers = broker.bootstrap_servers
    topic = f"conn-metrics-{time.time_ns()}"
    async with Producer(servers, linger=0) as producer:
        for i in range(3):
            await producer.send_and_wait(topic, b"%d" % i, partition=0)
        produced = producer.metrics()
        async with Consumer(servers, auto_offset_reset="earliest", fetch_max_wait=0.1) as consumer:
            await consumer.assign([TopicPartition(topic, 0)])
            with anyio.fail_after(30):
                while not await consumer.poll(timeout=0.2):
                    pass
            consumed = consumer.metrics()
        async with AdminClient(servers) as admin:
            await admin.list_topics()
            administered = admin.metrics()
    produce = produced["api-metrics"]["Produce"]
    assert produce["request-total"] == produced.requests_sent == 3
    assert produce["response-total"] == 3
    assert 0 < produce["request-latency-avg"] < 30
    assert produced["connection-metrics"]["connection-count"] >= 1
    assert consumed["api-metrics"]["Fetch"]["response-total"] >= 1
    assert consumed["connection-metrics"]["request-total"] > 0
    assert administered["api-metrics"]["Metadata"]["request-total"] >= 1
    for metrics in (consumed, administered):
        assert set(KEYS) <= set(metrics)


async def test_a_share_consumer_reports_its_connections(kafka: Any) -> None:
    async with ShareConsumer(kafka.bootstrap_servers, group_id=f"sg-{time.time_ns()}") as share:
        await share.subscribe([f"conn-share-{time.time_ns()}"])
        await share.poll(timeout=0.3)
        metrics = share.metrics()
    assert metrics["connection-metrics"]["request-total"] >= 1
    assert set(KEYS) <= set(metrics)


def test_the_sync_facade_reports_connections(kafka: Any) -> None:
    with SyncProducer(kafka.bootstrap_servers) as producer:
        producer.send(f"conn-sync-{time.time_ns()}", b"x").result(30)
        metrics = producer.metrics()
    assert metrics["api-metrics"]["Produce"]["request-total"] == 1
