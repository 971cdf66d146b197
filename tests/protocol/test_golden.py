"""Golden bytes from real clients: librdkafka and kafka-python talk to Tansu through a recording
proxy; every request and response they exchanged must decode with krafka and re-encode to the
identical bytes.

The broker is a dedicated `LocalBroker` advertising the proxy's port, so clients reconnect
through the proxy after Metadata and nothing on the wire needs rewriting.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterator

import pytest

from krafka.protocol import REQUESTS, RESPONSES, ApiKey, RequestHeader, ResponseHeader
from krafka.protocol import header_versions as hdr_versions
from krafka.testing.broker import LocalBroker, free_port

from .recording_proxy import Exchange, RecordingProxy

pytestmark = [pytest.mark.broker, pytest.mark.timeout(120)]

TOPIC = "golden"
N = 20


def _librdkafka(bootstrap: str) -> None:
    ck = pytest.importorskip("confluent_kafka")
    from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]

    admin = AdminClient({"bootstrap.servers": bootstrap})
    for fut in admin.create_topics([NewTopic(TOPIC, num_partitions=2)]).values():
        fut.result(15)
    base = {"bootstrap.servers": bootstrap, "linger.ms": 5}
    tx = ck.Producer({**base, "transactional.id": "golden-tx"})
    tx.init_transactions(15)
    tx.begin_transaction()
    for i in range(N // 2):
        tx.produce(TOPIC, key=b"k%d" % i, value=b"tx-%d" % i, headers=[("h", b"v")])
    tx.commit_transaction(15)
    idem = ck.Producer({**base, "enable.idempotence": True, "compression.type": "lz4"})
    for i in range(N // 2):
        idem.produce(TOPIC, key=b"k%d" % i, value=b"idem-%d" % i)
    idem.flush(15)
    consumer = ck.Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": "golden-rd",
            "session.timeout.ms": 6000,
            "heartbeat.interval.ms": 500,
            "fetch.wait.max.ms": 100,
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
        }
    )
    consumer.subscribe([TOPIC])
    got, deadline = 0, time.monotonic() + 25
    while got < N and time.monotonic() < deadline:
        msg = consumer.poll(0.2)
        if msg is not None and msg.error() is None:
            got += 1
    consumer.commit(asynchronous=False)
    consumer.committed([ck.TopicPartition(TOPIC, 0)], timeout=10)
    consumer.get_watermark_offsets(ck.TopicPartition(TOPIC, 0), timeout=10)
    consumer.close()
    assert got >= N, f"librdkafka consumed {got} of {N} records"


def _kafka_python(bootstrap: str) -> None:
    kafka = pytest.importorskip("kafka")
    producer = kafka.KafkaProducer(bootstrap_servers=bootstrap, linger_ms=5)
    for i in range(5):
        producer.send(TOPIC, key=b"kp%d" % i, value=b"kafka-python-%d" % i)
    producer.flush(15)
    producer.close(5)
    consumer = kafka.KafkaConsumer(
        TOPIC,
        bootstrap_servers=bootstrap,
        group_id="golden-kp",
        auto_offset_reset="earliest",
        enable_auto_commit=False,
        session_timeout_ms=6000,
        heartbeat_interval_ms=500,
        fetch_max_wait_ms=100,
    )
    got, deadline = 0, time.monotonic() + 25
    while got < 5 and time.monotonic() < deadline:
        got += sum(len(v) for v in consumer.poll(200).values())
    consumer.commit()
    consumer.close()
    assert got >= 5


@pytest.fixture(scope="module")
def recorded() -> Iterator[list[Exchange]]:
    broker_port = free_port()
    with RecordingProxy(("127.0.0.1", broker_port)) as proxy:
        with LocalBroker(port=broker_port, advertised_port=proxy.port):
            _librdkafka(proxy.bootstrap_servers)
            _kafka_python(proxy.bootstrap_servers)
        yield list(proxy.exchanges)


def test_clients_used_the_core_apis(recorded: list[Exchange]) -> None:
    seen = {ex.api_key for ex in recorded}
    wanted = {
        ApiKey.API_VERSIONS,
        ApiKey.METADATA,
        ApiKey.PRODUCE,
        ApiKey.FETCH,
        ApiKey.LIST_OFFSETS,
        ApiKey.FIND_COORDINATOR,
        ApiKey.JOIN_GROUP,
        ApiKey.SYNC_GROUP,
        ApiKey.OFFSET_COMMIT,
        ApiKey.OFFSET_FETCH,
        ApiKey.INIT_PRODUCER_ID,
        ApiKey.CREATE_TOPICS,
        ApiKey.ADD_PARTITIONS_TO_TXN,
        ApiKey.END_TXN,
    }
    missing = {ApiKey(k).name for k in wanted - seen}
    assert not missing, f"not recorded: {missing}"


def _versions(recorded: list[Exchange]) -> str:
    c = Counter((ApiKey(ex.api_key).name, ex.api_version) for ex in recorded)
    return ", ".join(f"{k}v{v}x{n}" for (k, v), n in sorted(c.items()))


def test_requests_round_trip_byte_exact(recorded: list[Exchange]) -> None:
    checked = 0
    for ex in recorded:
        req_v, _ = hdr_versions(ex.api_key, ex.api_version)
        hdr, off = RequestHeader.decode_prefix(ex.request, req_v)
        assert (hdr.request_api_key, hdr.request_api_version) == (ex.api_key, ex.api_version)
        cls = REQUESTS[ApiKey(ex.api_key)]
        body = cls.decode(memoryview(ex.request)[off:], ex.api_version)
        assert hdr.encode(req_v) + body.encode(ex.api_version) == ex.request, cls.__name__
        checked += 1
    assert checked >= 30, _versions(recorded)


def test_responses_round_trip_byte_exact(recorded: list[Exchange]) -> None:
    checked = 0
    for ex in recorded:
        if ex.response is None:
            continue
        _, resp_v = hdr_versions(ex.api_key, ex.api_version)
        hdr, off = ResponseHeader.decode_prefix(ex.response, resp_v)
        cls = RESPONSES[ApiKey(ex.api_key)]
        body = cls.decode(memoryview(ex.response)[off:], ex.api_version)
        assert hdr.encode(resp_v) + body.encode(ex.api_version) == ex.response, cls.__name__
        checked += 1
    assert checked >= 30, _versions(recorded)


def test_fetch_records_are_zero_copy_views(recorded: list[Exchange]) -> None:
    fetches = [ex for ex in recorded if ex.api_key == ApiKey.FETCH and ex.response]
    assert fetches
    found = 0
    for ex in fetches:
        assert ex.response is not None
        _, resp_v = hdr_versions(ex.api_key, ex.api_version)
        _, off = ResponseHeader.decode_prefix(ex.response, resp_v)
        resp = RESPONSES[ApiKey.FETCH].decode(memoryview(ex.response)[off:], ex.api_version)
        for topic in resp.responses:  # type: ignore[attr-defined]
            for part in topic.partitions:
                if part.records:
                    assert isinstance(part.records, memoryview)
                    found += 1
    assert found
