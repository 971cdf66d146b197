"""`krafka.metrics.PrometheusCollector` scraped through a real `prometheus_client` HTTP endpoint
while a producer, a consumer in a group, a share consumer and an admin client of Apache Kafka
are alive (the scrape runs on the server's thread, off the event loop); the example alert
rules and Grafana dashboard only name metrics such a scrape shows."""

from __future__ import annotations

import gc
import json
import re
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
import yaml
from prometheus_client import CollectorRegistry, start_http_server
from prometheus_client.parser import text_string_to_metric_families

from krafka import AdminClient, Consumer, NewTopic, Producer, ShareConsumer, TopicPartition
from krafka.metrics import PrometheusCollector
from krafka.sansio.admin.configs import ConfigResource

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(90)]

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


@pytest.fixture
def endpoint() -> Iterator[int]:
    registry = CollectorRegistry()
    registry.register(PrometheusCollector())
    server, thread = start_http_server(0, addr="127.0.0.1", registry=registry)
    yield server.server_port
    server.shutdown()
    thread.join(5)


def scrape(port: int) -> Samples:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as response:
        text = response.read().decode()
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def matching(samples: Samples, name: str, **labels: str) -> list[float]:
    wanted = set(labels.items())
    return [v for (n, ls), v in samples.items() if n == name and wanted <= ls]


def value(samples: Samples, name: str, **labels: str) -> float:
    found = matching(samples, name, **labels)
    assert len(found) == 1, (name, labels, found)
    return found[0]


async def poll_until(consumer: Any, count: int) -> int:
    got = 0
    with anyio.fail_after(30):
        while got < count:
            got += len(await consumer.poll(timeout=0.2))
    return got


async def live_scrape(kafka: Any, port: int) -> tuple[Samples, dict[str, Any]]:
    """A scrape while one client of each kind is alive, and what they did."""
    stamp = time.time_ns()
    topic, group, share_group = f"prom-{stamp}", f"prom-g-{stamp}", f"prom-sg-{stamp}"
    servers = kafka.bootstrap_servers
    async with AdminClient(servers, client_id="prom-admin") as admin:
        (await admin.create_topics([NewTopic(topic, 2)])).raise_for_errors()
        configs = {"share.auto.offset.reset": "earliest"}
        resource = ConfigResource.group(share_group)
        (await admin.alter_configs({resource: configs})).raise_for_errors()
        async with Producer(servers, client_id="prom-producer", compression="gzip") as producer:
            for i in range(20):
                await producer.send(topic, b"value-%d" % i, partition=i % 2)
            await producer.flush()
            async with Consumer(
                servers, group_id=group, client_id="prom-consumer", auto_offset_reset="earliest",
                fetch_max_wait=0.1, max_poll_records=3,
            ) as consumer:  # fmt: skip
                await consumer.subscribe([topic])
                consumed = await poll_until(consumer, 8)
                await consumer.commit()
                async with ShareConsumer(
                    servers, group_id=share_group, client_id="prom-share", fetch_max_wait=0.1
                ) as share:
                    await share.subscribe([topic])
                    shared = await poll_until(share, 1)
                    await share.poll(timeout=0.2)  # acknowledges the first records
                    samples = await anyio.to_thread.run_sync(scrape, port)
                    lags = consumer.lag()
    return samples, {"topic": topic, "group": group, "consumed": consumed, "lags": lags,
                     "shared": shared, "share_group": share_group}  # fmt: skip


async def test_a_scrape_shows_every_live_client(kafka: Any, endpoint: int) -> None:
    samples, did = await live_scrape(kafka, endpoint)
    producer = {"client_id": "prom-producer"}
    assert value(samples, "krafka_producer_records_sent_total", **producer) == 20
    assert value(samples, "krafka_producer_record_errors_total", **producer) == 0
    assert 0 < value(samples, "krafka_producer_compression_ratio", **producer) < 1
    assert value(samples, "krafka_producer_buffer_total_bytes", **producer) == 32 * 1024 * 1024
    assert value(samples, "krafka_producer_request_latency_avg_seconds", **producer) > 0
    assert value(samples, "krafka_connection_count", **producer) >= 1
    produce = {**producer, "api": "Produce"}
    requests = matching(samples, "krafka_connection_requests_total", **produce)
    assert sum(requests) == value(samples, "krafka_producer_requests_total", **producer) > 0
    latencies = matching(samples, "krafka_connection_request_latency_max_seconds", **produce)
    assert latencies and all(0 < latency < 30 for latency in latencies)
    assert value(samples, "krafka_connection_creations_total", **producer) >= 1

    consumer = {"client_id": "prom-consumer", "group": did["group"]}
    consumed = value(samples, "krafka_consumer_records_consumed_total", **consumer)
    assert consumed == did["consumed"]
    assert value(samples, "krafka_consumer_assigned_partitions", **consumer) == 2
    assert value(samples, "krafka_consumer_rebalances_total", **consumer) >= 1
    assert value(samples, "krafka_consumer_commits_total", **consumer) >= 1
    assert value(samples, "krafka_consumer_commit_latency_avg_seconds", **consumer) > 0
    for partition in (0, 1):
        lag = value(
            samples, "krafka_consumer_records_lag", topic=did["topic"], partition=str(partition),
            **consumer,
        )  # fmt: skip
        assert lag == did["lags"][TopicPartition(did["topic"], partition)]
    lag_max = value(samples, "krafka_consumer_records_lag_max", **consumer)
    assert lag_max == max(did["lags"].values())

    share = {"client_id": "prom-share", "group": did["share_group"]}
    assert value(samples, "krafka_share_consumer_records_consumed_total", **share) >= 1
    assert value(samples, "krafka_share_consumer_acknowledgements_total", type="accept", **share)
    assert value(samples, "krafka_share_consumer_redeliveries_total", **share) == 0

    admin = {"client_id": "prom-admin"}
    assert value(samples, "krafka_admin_calls_total", **admin) >= 2
    assert value(samples, "krafka_admin_call_errors_total", **admin) == 0
    examples_name_live_metrics({name for name, _ in samples})


def examples_name_live_metrics(scraped: set[str]) -> None:
    alerts = yaml.safe_load((EXAMPLES / "prometheus" / "alerts.yml").read_text())
    exprs = [rule["expr"] for group in alerts["groups"] for rule in group["rules"]]
    dashboard = json.loads((EXAMPLES / "grafana" / "krafka.json").read_text())
    exprs += [t["expr"] for panel in dashboard["panels"] for t in panel["targets"]]
    named = {name for expr in exprs for name in re.findall(r"\bkrafka_[a-z_]+", expr)}
    assert len(named) > 15
    assert named <= scraped, named - scraped


async def test_dropped_and_closed_clients_leave_the_scrape(kafka: Any, endpoint: int) -> None:
    name = f"prom-dropped-{time.time_ns()}"
    producer = Producer(kafka.bootstrap_servers, client_id=name)
    samples = await anyio.to_thread.run_sync(scrape, endpoint)
    assert value(samples, "krafka_producer_records_sent_total", client_id=name) == 0
    del producer
    gc.collect()
    closed = Consumer(kafka.bootstrap_servers, client_id=f"{name}-closed")
    await closed.start()
    assert value(await anyio.to_thread.run_sync(scrape, endpoint),
                 "krafka_consumer_fetches_total", client_id=f"{name}-closed") == 0  # fmt: skip
    await closed.close()
    samples = await anyio.to_thread.run_sync(scrape, endpoint)
    assert not [key for key in samples if ("client_id", name) in key[1]]
    assert not [key for key in samples if ("client_id", f"{name}-closed") in key[1]]
