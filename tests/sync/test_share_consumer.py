"""The blocking ShareConsumer on librdkafka's mock cluster: in a plain thread with explicit
acknowledgements and iteration, from Java properties, and inside a running event loop; and on
Apache Kafka's share coordinator."""

from __future__ import annotations

import asyncio
import threading
import time
import uuid
from typing import Any

import pytest

from krafka import AcknowledgeType, ConfigResource, NewTopic, TopicPartition
from krafka.errors import IllegalStateError, WakeupError
from krafka.sync import AdminClient, Producer, ShareConsumer

pytestmark = [pytest.mark.timeout(60)]
TOPIC = "jobs"


def share_cluster(make_mock_cluster: Any, records: int) -> Any:
    cluster = make_mock_cluster(3, topics={TOPIC: 2})
    cluster.sharegroup_set_auto_offset_reset("earliest")
    with Producer(bootstrap_servers=cluster.bootstrap_servers) as producer:
        for i in range(records):
            producer.send(TOPIC, b"%d" % i, partition=i % 2)
        producer.flush()
    return cluster


def test_in_a_plain_thread(make_mock_cluster: Any) -> None:
    cluster = share_cluster(make_mock_cluster, 40)
    out: dict[str, Any] = {}

    def worker() -> None:
        with ShareConsumer(
            bootstrap_servers=cluster.bootstrap_servers, group_id="sync",
            acknowledgement_mode="explicit", fetch_max_wait=0.1,
        ) as consumer:  # fmt: skip
            consumer.subscribe([TOPIC])
            first: list[Any] = []
            while not first:
                first = consumer.poll(1.0)
            with pytest.raises(IllegalStateError):
                consumer.poll(0.1)  # explicit mode: the last poll is not settled
            consumer.acknowledge(first[0], AcknowledgeType.RELEASE)
            for record in first[1:]:
                consumer.acknowledge(record.topic, record.partition, record.offset, "accept")
            got = list(first)
            for record in consumer:
                consumer.acknowledge(record, AcknowledgeType.ACCEPT)
                got.append(record)
                if len(got) == 41:
                    break
            out["released"] = first[0]
            out["results"] = consumer.commit_sync(10)
            out["assignment"] = consumer.assignment()
            out["got"] = got

    thread = threading.Thread(target=worker)
    thread.start()
    thread.join(50)
    assert sorted({r.value for r in out["got"]}) == sorted(b"%d" % i for i in range(40))
    released = out["released"]
    assert [r.delivery_count for r in out["got"] if r.value == released.value] == [1, 2]
    assert set(out["results"].values()) == {None}
    assert out["assignment"] == {TopicPartition(TOPIC, 0), TopicPartition(TOPIC, 1)}


def test_from_config_inside_a_running_event_loop(make_mock_cluster: Any) -> None:
    cluster = share_cluster(make_mock_cluster, 10)

    async def notebook_cell() -> list[bytes]:
        with ShareConsumer.from_config(
            {"bootstrap.servers": cluster.bootstrap_servers, "group.id": "nb",
             "share.acknowledgement.mode": "implicit", "fetch.max.wait.ms": "100"}
        ) as consumer:  # fmt: skip
            consumer.subscribe([TOPIC])
            out: list[bytes] = []
            while len(out) < 10:
                out += [r.value for r in consumer.poll(1.0)]
            consumer.commit_sync()
            return out

    assert sorted(asyncio.run(notebook_cell())) == sorted(b"%d" % i for i in range(10))


def _config(admin: AdminClient, resource: ConfigResource, name: str) -> str | None:
    return admin.describe_configs([resource]).raise_for_errors()[resource][name].value


def test_on_kafka_release_reject_and_accept(kafka: Any) -> None:
    """On Apache Kafka's share coordinator: a released record comes again (delivery count
    2), a rejected one never does, and the group's start is set as a GROUP config."""
    topic, group = f"sync-share-{uuid.uuid4().hex[:8]}", f"sync-share-{uuid.uuid4().hex[:8]}"
    with AdminClient(kafka.bootstrap_servers) as admin:
        admin.create_topics([NewTopic(topic, 2)]).raise_for_errors()
        resource = ConfigResource.group(group)
        admin.alter_configs({resource: {"share.auto.offset.reset": "earliest"}}).raise_for_errors()
        deadline = time.monotonic() + 15  # the broker applies it a moment after answering
        while _config(admin, resource, "share.auto.offset.reset") != "earliest":
            assert time.monotonic() < deadline
            time.sleep(0.1)
    with Producer(bootstrap_servers=kafka.bootstrap_servers) as producer:
        for i in range(20):
            producer.send(topic, b"%d" % i, partition=i % 2)
        producer.flush()
    deliveries: list[Any] = []
    with ShareConsumer(
        bootstrap_servers=kafka.bootstrap_servers, group_id=group,
        acknowledgement_mode="explicit", fetch_max_wait=0.1,
    ) as consumer:  # fmt: skip
        consumer.subscribe([topic])
        deadline = time.monotonic() + 45
        while len({r.value for r in deliveries}) < 20 or len(deliveries) < 21:
            assert time.monotonic() < deadline, sorted(r.value for r in deliveries)
            for record in consumer.poll(1.0):
                deliveries.append(record)
                kind = AcknowledgeType.ACCEPT
                if record.value == b"3" and record.delivery_count == 1:
                    kind = AcknowledgeType.RELEASE
                elif record.value == b"4":
                    kind = AcknowledgeType.REJECT
                consumer.acknowledge(record, kind)
        results = consumer.commit_sync(10)
    assert set(results.values()) == {None}
    assert [r.delivery_count for r in deliveries if r.value == b"3"] == [1, 2]
    assert [r.delivery_count for r in deliveries if r.value == b"4"] == [1]
    assert sorted(r.value for r in deliveries) == sorted([b"%d" % i for i in range(20)] + [b"3"])


def test_on_kafka_no_subscription_callback_and_metrics(kafka: Any) -> None:
    """The blocking twin: polling unsubscribed is illegal, the callback set on the running
    consumer gets the answers in the next call and its exception propagates there, and
    metrics() counts the settlements by type."""
    topic, group = f"sync-share-{uuid.uuid4().hex[:8]}", f"sync-share-{uuid.uuid4().hex[:8]}"
    with AdminClient(kafka.bootstrap_servers) as admin:
        admin.create_topics([NewTopic(topic, 1)]).raise_for_errors()
        resource = ConfigResource.group(group)
        admin.alter_configs({resource: {"share.auto.offset.reset": "earliest"}}).raise_for_errors()
    with Producer(bootstrap_servers=kafka.bootstrap_servers) as producer:
        for i in range(3):
            producer.send(topic, b"%d" % i)
        producer.flush()
    reports: list[Any] = []
    armed: list[bool] = []

    def callback(offsets: Any, error: Any) -> None:
        reports.append((dict(offsets), error))
        if armed:
            raise LookupError("from the callback")

    with ShareConsumer(
        bootstrap_servers=kafka.bootstrap_servers, group_id=group,
        acknowledgement_mode="explicit", fetch_max_wait=0.1,
    ) as consumer:  # fmt: skip
        with pytest.raises(IllegalStateError, match="not subscribed to any topics"):
            consumer.poll(0.1)
        consumer.set_acknowledgement_commit_callback(callback)
        consumer.subscribe([topic])
        got: list[Any] = []
        deadline = time.monotonic() + 20
        while len(got) < 3:  # the group's config reaches the brokers a moment after
            assert time.monotonic() < deadline, got
            for record in consumer.poll(0.5):
                consumer.acknowledge(record, "reject" if record.value == b"0" else "accept")
                got.append(record)
            consumer.commit_sync(10)
        metrics = consumer.metrics()
        armed.append(True)  # the last commit_sync's answers are reported by the next call
        with pytest.raises(LookupError, match="from the callback"):
            consumer.commit_async()
    assert {o for offsets, _ in reports for s in offsets.values() for o in s} == {0, 1, 2}
    assert metrics["records_consumed"] == 3 and metrics["bytes_consumed"] > 0
    assert metrics["acknowledgements_sent_by_type"]["reject"] == 1
    assert metrics["acknowledgements_sent_by_type"]["accept"] == 2


def test_wakeup_from_another_thread(make_mock_cluster: Any) -> None:
    cluster = share_cluster(make_mock_cluster, 0)
    with ShareConsumer(
        bootstrap_servers=cluster.bootstrap_servers, group_id="sync-wakeup", fetch_max_wait=0.1
    ) as consumer:
        consumer.subscribe([TOPIC])
        threading.Timer(0.5, consumer.wakeup).start()
        with pytest.raises(WakeupError):
            consumer.poll(30.0)
        consumer.wakeup()
        with pytest.raises(WakeupError):
            consumer.commit_sync(10)
        assert consumer.poll(0.1) == []
