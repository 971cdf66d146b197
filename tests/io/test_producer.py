"""The Producer against the local Tansu broker, read back independently by librdkafka."""

from __future__ import annotations

import random
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _producer_support import consume, unique

from krafka import Producer, RecordMetadata
from krafka.errors import (
    ConfigError,
    InvalidStateError,
    InvalidTopicError,
    KafkaConnectionError,
    KafkaTimeoutError,
)
from krafka.io.producer_handle import ProducerRecord
from krafka.protocol.error_codes import ErrorCode
from krafka.sansio.producer.batch import BATCH_OVERHEAD

pytestmark = [pytest.mark.anyio, pytest.mark.broker, pytest.mark.timeout(60)]


async def test_send_and_wait_and_pending_handles(broker: Any) -> None:
    topic = unique("basic")
    async with Producer(bootstrap_servers=broker.bootstrap_servers, linger=0.001) as producer:
        meta = await producer.send_and_wait(topic, b"value", key=b"k", headers=[("h", b"v")])
        assert isinstance(meta, RecordMetadata)
        assert meta.topic == topic and meta.offset >= 0 and meta.timestamp > 1_600_000_000_000
        pending = await producer.send(topic, b"value2", key=b"k")
        meta2 = await pending
        assert (meta2.partition, meta2.offset) == (meta.partition, meta.offset + 1)
        handles = [await producer.send(topic, b"%d" % i, partition=1) for i in range(500)]
        await producer.flush()
        assert all(h.done for h in handles)
        assert [(await h).offset for h in handles] == list(range(500))
        snap = producer.metrics()
        assert snap.records_sent == 502 and snap.errors == 0 and snap.request_latency_avg > 0


@pytest.mark.parametrize("compression", ["none", "gzip", "snappy", "lz4", "zstd"])
async def test_every_codec_is_read_back_by_librdkafka(broker: Any, compression: str) -> None:
    topic = unique(f"codec-{compression}")
    sent = [
        (b"key-%d" % i if i % 3 else None, None if i % 7 == 0 else b"v%d" % i * (i % 50))
        for i in range(300)
    ]
    async with Producer(
        bootstrap_servers=broker.bootstrap_servers, compression=compression, batch_size=4096
    ) as producer:
        handles = [
            await producer.send(
                topic, v, key=k, partition=0, headers=[("i", b"%d" % n), ("n", None)]
            )
            for n, (k, v) in enumerate(sent)
        ]
        await producer.flush()
        offsets = [(await h).offset for h in handles]
    assert offsets == sorted(offsets)
    messages = await anyio.to_thread.run_sync(
        lambda: consume(broker.bootstrap_servers, topic, len(sent))
    )
    assert [(m.key(), m.value()) for m in messages] == sent
    assert messages[5].headers() == [("i", b"5"), ("n", None)]
    assert [m.offset() for m in messages] == offsets


async def test_murmur2_partitions_match_librdkafka_for_10000_random_keys(broker: Any) -> None:
    import confluent_kafka

    rng = random.Random(480)
    keys = [rng.randbytes(rng.randint(1, 40)) for _ in range(10_000)]
    theirs_topic, ours_topic = unique("murmur-rdkafka"), unique("murmur-krafka")

    def librdkafka_partitions() -> list[int]:
        producer = confluent_kafka.Producer(
            {"bootstrap.servers": broker.bootstrap_servers, "partitioner": "murmur2_random",
             "linger.ms": 5}
        )  # fmt: skip
        found: dict[bytes, int] = {}

        def delivered(err: Any, msg: Any) -> None:
            assert err is None
            found[msg.key()] = msg.partition()

        for key in keys:
            producer.produce(theirs_topic, b"", key=key, on_delivery=delivered)
            producer.poll(0)
        assert producer.flush(30) == 0
        return [found[k] for k in keys]

    theirs = await anyio.to_thread.run_sync(librdkafka_partitions)
    async with Producer(bootstrap_servers=broker.bootstrap_servers) as producer:
        assert len(await producer.partitions_for(ours_topic)) == 4
        handles = [await producer.send(ours_topic, b"", key=k) for k in keys]
        await producer.flush()
        ours = [(await h).partition for h in handles]
    assert len(set(theirs)) == 4
    assert ours == theirs


async def test_null_keys_are_sticky_per_batch(broker: Any) -> None:
    topic = unique("sticky")
    async with Producer(
        bootstrap_servers=broker.bootstrap_servers, batch_size=2000, linger=1.0
    ) as producer:
        handles = [await producer.send(topic, b"x" * 100) for _ in range(200)]
        await producer.flush()
        parts = [(await h).partition for h in handles]
    runs = [p for i, p in enumerate(parts) if i == 0 or parts[i - 1] != p]
    assert len(set(parts)) > 1  # moved on as batches filled
    assert len(runs) <= 200 * 121 // 2000 + 2  # but only at batch boundaries


async def test_from_config_uses_java_property_names(broker: Any) -> None:
    producer = Producer.from_config(
        {
            "bootstrap.servers": broker.bootstrap_servers,
            "linger.ms": "5",
            "compression.type": "lz4",
            "acks": "1",
            "batch.size": 16384,
            "delivery.timeout.ms": 30000,
            "enable.idempotence": "false",
        }
    )
    assert producer.config.linger == 0.005 and producer.config.compression == "lz4"
    assert producer.config.batch_size == 16384 and producer.config.delivery_timeout == 30.0
    assert not producer.config.idempotent and int(producer.config.acks) == 1
    async with producer:
        assert (await producer.send_and_wait(unique("cfg"), b"v")).offset == 0
    with pytest.raises(ConfigError, match=r"no\.such\.thing"):
        Producer.from_config({"bootstrap.servers": "x:1", "no.such.thing": 1})


def test_from_config_takes_every_client_and_producer_option() -> None:
    from krafka.config.options import OptionTable
    from krafka.config.producer import PRODUCER

    samples = {"bootstrap.servers": "h:1", "metadata.broker.list": "h:1", "acks": "all",
               "request.required.acks": "all", "compression.type": "gzip",
               "compression.codec": "gzip", "partitioner": "round_robin",
               "partitioner.class": "org.apache.kafka.clients.producer.RoundRobinPartitioner",
               "metadata.recovery.strategy": "rebootstrap", "interceptor.classes": [],
               "enable.idempotence": "true", "allow.auto.create.topics": "true",
               "enable.metrics.push": "true",
               "client.id": "c", "transactional.id": "tx",
               "socks5.proxy": "socks5://h:1080"}  # fmt: skip
    table: OptionTable = PRODUCER
    for prop in table.known():
        option = table.option(prop)
        if option is None or prop.startswith(("ssl.", "sasl.", "security.", "enable.s", "oauth")):
            continue  # ignored ones; security has its own tests
        value = samples.get(prop, "1000" if prop.endswith(".ms") else "5")
        producer = Producer.from_config({"bootstrap.servers": "h:1", prop: value})
        assert isinstance(producer, Producer), prop
    producer = Producer.from_config(
        {"bootstrap.servers": "h:1", "linger.ms": 5}, linger=0.5, client_id="override"
    )
    assert producer.config.linger == 0.5


def test_idempotence_defaults() -> None:
    assert Producer().config.idempotent
    assert not Producer(acks=1).config.idempotent  # default off when acks is not all
    with pytest.raises(ValueError, match="acks='all'"):
        Producer(acks=1, enable_idempotence=True)


async def test_interceptors_see_sends_and_acknowledgements(broker: Any) -> None:
    seen: list[Any] = []

    class Stamp:
        def on_send(self, record: ProducerRecord) -> ProducerRecord:
            value = b"[" + (record.value or b"") + b"]"
            headers = [*record.headers, ("stamped", b"1")]
            return ProducerRecord(record.topic, value, record.key, headers, record.partition)

        def on_acknowledgement(self, metadata: RecordMetadata | None, error: Any) -> None:
            seen.append((metadata, error))

    topic = unique("intercept")
    async with Producer(
        bootstrap_servers=broker.bootstrap_servers, interceptors=[Stamp()]
    ) as producer:
        meta = await producer.send_and_wait(topic, b"a", partition=2)
    assert seen == [(meta, None)]
    (message,) = await anyio.to_thread.run_sync(
        lambda: consume(broker.bootstrap_servers, topic, 1, partitions=(2,))
    )
    assert message.value() == b"[a]" and message.headers() == [("stamped", b"1")]


async def test_small_buffer_applies_back_pressure_and_delivers_everything(broker: Any) -> None:
    topic = unique("pressure")
    async with Producer(
        bootstrap_servers=broker.bootstrap_servers, buffer_memory=20_000, batch_size=4000
    ) as producer:
        handles = [await producer.send(topic, b"%06d" % i * 20, partition=0) for i in range(2000)]
        await producer.flush()
        assert [(await h).offset for h in handles] == list(range(2000))
        assert producer.engine.accumulator.buffered == 0


async def test_misuse_is_reported(broker: Any) -> None:
    producer = Producer(bootstrap_servers=broker.bootstrap_servers)
    # aiokafka's positional order is (topic, value, key, partition, timestamp, headers): only
    # topic, value and key may be positional here, so a ported call fails instead of misfiling.
    with pytest.raises(TypeError, match="positional"):
        await producer.send("t", b"v", b"k", 3)  # type: ignore[misc]
    with pytest.raises(TypeError, match="positional"):
        await producer.send_and_wait("t", b"v", b"k", 3)  # type: ignore[misc]
    with pytest.raises(InvalidStateError, match="not started"):
        await producer.send("t", b"v")
    async with producer:
        with pytest.raises(ValueError, match="4 partitions"):
            await producer.send(unique("range"), b"v", partition=4)
        with pytest.raises(InvalidStateError, match="transactional"):
            producer.begin_transaction()
    with pytest.raises(InvalidStateError, match="closed"):
        await producer.send("t", b"v")


async def test_unreachable_bootstrap_fails_start_clearly() -> None:
    producer = Producer(bootstrap_servers="127.0.0.1:1", request_timeout=1.0)
    with pytest.raises(KafkaConnectionError, match="no broker reachable"), anyio.fail_after(10):
        await producer.start()
    await producer.close(timeout=0.1)


async def test_an_invalid_topic_fails_at_once(broker: Any) -> None:
    async with Producer(bootstrap_servers=broker.bootstrap_servers, max_block=30) as producer:
        with anyio.fail_after(5), pytest.raises(InvalidTopicError):
            await producer.send("", b"v")  # Kafka's rules, checked before any request


async def test_unreachable_topic_metadata_times_out(broker: Any) -> None:
    async with Producer(
        bootstrap_servers=broker.bootstrap_servers, max_block=0.5, allow_auto_topic_creation=False
    ) as producer:
        with pytest.raises(KafkaTimeoutError, match=r"max_block=0\.5"):
            await producer.send(unique("absent"), b"v")  # never created: never any metadata


async def test_close_with_a_timeout_returns_in_time_from_another_task_when_the_broker_froze(
    proxied_broker: Any,
) -> None:
    from krafka.testing.proxy import Fault, FaultProxy

    with FaultProxy(proxied_broker.target, port=proxied_broker.proxy_port) as proxy:
        producer = Producer(bootstrap_servers=proxy.bootstrap_servers, request_timeout=30.0)
        await producer.start()
        topic = unique("close")
        await producer.partitions_for(topic)
        proxy.arm(Fault.FREEZE)  # the broker stops reading: socket buffers fill, sends block
        value = b"x" * 100_000
        handles = [await producer.send(topic, value, partition=0) for _ in range(100)]
        closed_in = 0.0

        async def close() -> None:
            nonlocal closed_in
            started = anyio.current_time()
            await producer.close(timeout=1.0)
            closed_in = anyio.current_time() - started

        with anyio.fail_after(10):
            async with anyio.create_task_group() as tg:
                tg.start_soon(close)
        assert 1.0 <= closed_in < 1.5
        with pytest.raises(KafkaTimeoutError, match="closed before delivery"):
            await handles[-1]


async def test_start_and_close_in_different_tasks_and_cancel_scopes(broker: Any) -> None:
    producer = Producer(bootstrap_servers=broker.bootstrap_servers, linger=0.001)
    async with anyio.create_task_group() as tg:
        tg.start_soon(producer.start)  # this task ends right after start
    assert (await producer.send_and_wait(unique("tasks"), b"v")).offset == 0
    with anyio.CancelScope():  # opened after start: closing here used to break anyio's nesting
        async with anyio.create_task_group() as tg:
            tg.start_soon(producer.close)
    with pytest.raises(InvalidStateError, match="closed"):
        await producer.send("t", b"v")
    await producer.close()  # again: a no-op
    with pytest.raises(InvalidStateError, match="closed"):
        await producer.start()


async def test_acks_zero_delivers_without_offsets(broker: Any) -> None:
    topic = unique("acks0")
    async with Producer(bootstrap_servers=broker.bootstrap_servers) as ready:
        # acks=0 gets no answer, so nothing would tell it a new partition is not served yet
        await ready.send_and_wait(topic, b"ready", partition=0)
    async with Producer(bootstrap_servers=broker.bootstrap_servers, acks=0) as producer:
        assert not producer.config.idempotent
        handles = [await producer.send(topic, b"%d" % i, partition=0) for i in range(100)]
        await producer.flush()
        assert {(await h).offset for h in handles} == {-1}
    messages = await anyio.to_thread.run_sync(lambda: consume(broker.bootstrap_servers, topic, 101))
    assert [m.value() for m in messages] == [b"ready"] + [b"%d" % i for i in range(100)]


async def test_many_tasks_blocked_on_a_full_buffer_all_proceed(broker: Any) -> None:
    topic = unique("pressure-tasks")
    async with Producer(
        bootstrap_servers=broker.bootstrap_servers, buffer_memory=6_000, batch_size=2_000
    ) as producer:
        results: list[int] = []

        async def writer(n: int) -> None:
            handles = [await producer.send(topic, b"%03d" % n * 30, partition=0) for _ in range(50)]
            results.extend([(await h).offset for h in handles])

        with anyio.fail_after(30):
            async with anyio.create_task_group() as tg:
                for n in range(8):
                    tg.start_soon(writer, n)
        assert sorted(results) == list(range(400))


async def test_flush_waits_for_earlier_records_not_for_a_busy_sender(broker: Any) -> None:
    topic = unique("flush-busy")
    async with Producer(bootstrap_servers=broker.bootstrap_servers, linger=0.05) as producer:
        before = [await producer.send(topic, b"before", partition=0) for _ in range(10)]
        stop = anyio.Event()

        async def keep_sending() -> None:
            while not stop.is_set():
                await producer.send(topic, b"during", partition=0)
                await anyio.sleep(0.001)

        async with anyio.create_task_group() as tg:
            tg.start_soon(keep_sending)
            with anyio.fail_after(10):
                await producer.flush()
            assert all(h.done for h in before)
            stop.set()


async def _create_topic(client: Any, topic: str, partitions: int) -> int:
    from krafka.protocol.messages import CreateTopicsRequest

    entry = CreateTopicsRequest.CreatableTopic(
        name=topic, num_partitions=partitions, replication_factor=1
    )
    response = await client.send(CreateTopicsRequest(topics=[entry], timeout_ms=5000))
    (result,) = response.topics
    return int(result.error_code)


async def test_partitions_added_to_a_topic_in_use_are_seen_by_the_age_refresh(broker: Any) -> None:
    from krafka.io.client import KafkaClient
    from krafka.protocol.messages import DeleteTopicsRequest

    topic = unique("grow")
    async with KafkaClient(broker.bootstrap_servers) as admin:
        assert await _create_topic(admin, topic, 2) == 0
        async with Producer(
            bootstrap_servers=broker.bootstrap_servers,
            linger=0.01,
            metadata_max_age=0.2,
            metadata_topic_idle_ttl=0.6,
        ) as producer:
            with anyio.fail_after(10):
                for _ in range(100):  # 1 s of constant use, longer than the idle TTL
                    await producer.send(topic, b"v")
                    await anyio.sleep(0.01)
                await producer.flush()
            # Tansu cannot add partitions: the topic is made again, bigger (by us, or with 4
            # partitions by the producer's refresh auto-creating it first).
            gone = DeleteTopicsRequest.DeleteTopicState(name=topic)
            await admin.send(
                DeleteTopicsRequest(topics=[gone], topic_names=[topic], timeout_ms=5000)
            )
            assert await _create_topic(admin, topic, 5) in (0, ErrorCode.TOPIC_ALREADY_EXISTS)
            await anyio.sleep(0.4)  # two age refreshes, less than the idle TTL
            meta = await producer.send_and_wait(topic, b"in a new partition", partition=3)
            assert meta.partition == 3


async def test_a_send_waiting_for_buffer_room_fails_when_the_producer_closes(
    proxied_broker: Any,
) -> None:
    from krafka.testing.proxy import Fault, FaultProxy

    with FaultProxy(proxied_broker.target, port=proxied_broker.proxy_port) as proxy:
        producer = Producer(
            bootstrap_servers=proxy.bootstrap_servers, buffer_memory=5_000, batch_size=2_000
        )
        await producer.start()
        topic = unique("closing")
        await producer.partitions_for(topic)
        proxy.arm(Fault.STALL)  # nothing is acknowledged: the buffer stays full
        handles: list[Any] = []
        outcome: list[BaseException] = []

        async def fill() -> None:
            try:
                while True:
                    handles.append(await producer.send(topic, b"x" * 500, partition=0))
            except Exception as exc:
                outcome.append(exc)

        with anyio.fail_after(10):
            async with anyio.create_task_group() as tg:
                tg.start_soon(fill)
                await anyio.sleep(0.3)  # `fill` now waits for room
                await producer.close(timeout=0.2)
        assert isinstance(outcome[0], KafkaTimeoutError)  # the waiting send itself failed
        assert handles and all(h.done for h in handles)  # nothing slipped in after closing


async def test_a_record_that_does_not_fit_opens_its_batch_once_the_full_one_went(
    broker: Any,
) -> None:
    """Issue 22: the record that did not fit opened the next batch before `send` yielded to let
    the full one reach the wire, so that batch's linger ran while the caller was held, and a
    slow turn sent it with one record. It opens once the full batch was drained now."""
    topic = unique("seal")
    async with Producer(
        bootstrap_servers=broker.bootstrap_servers, linger=10.0, batch_size=BATCH_OVERHEAD + 250
    ) as producer:
        await producer.send(topic, b"warm-up", partition=0)
        await producer.flush()  # the topic known, nothing queued (a flush ignores linger)
        metrics = producer.engine.metrics
        drained, queued = metrics.queued_batches, metrics.queue_time_sum
        handles = [await producer.send(topic, b"x" * 100, partition=0)]
        while (handle := await producer.send(topic, b"x" * 100, partition=0)).batch is (
            handles[0].batch
        ):
            handles.append(handle)
        assert metrics.queued_batches == drained + 1  # the full batch, and only it
        drained_at = handles[0].batch.created + (metrics.queue_time_sum - queued)
        assert handle.batch.created >= drained_at - 1e-9
        await producer.flush()
