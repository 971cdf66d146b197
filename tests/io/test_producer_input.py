"""Bad application input to the producer: refused at `send` with a clear error, and the producer
stays usable (nothing of it kept in the client's state); interceptors that misbehave never stop
a record."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _producer_support import consume, unique

from krafka import Producer
from krafka.errors import InvalidTopicError, MessageTooLargeError, RecordTooLargeError
from krafka.io.producer import ProducerRecord
from krafka.sync import Producer as SyncProducer

pytestmark = [pytest.mark.anyio, pytest.mark.broker, pytest.mark.timeout(60)]

MiB = 1024 * 1024
BAD_TOPICS: list[tuple[Any, type[Exception]]] = [
    (None, TypeError),
    (b"bytes", TypeError),
    (7, TypeError),
    ("", InvalidTopicError),
    (".", InvalidTopicError),
    ("..", InvalidTopicError),
    ("t" * 250, InvalidTopicError),
    ("has space", InvalidTopicError),
    ("ünïcode", InvalidTopicError),
]


async def test_a_bad_topic_is_refused_at_send_and_changes_nothing(broker: Any) -> None:
    known = unique("known")
    async with Producer(broker.bootstrap_servers, linger=0) as producer:
        await producer.send_and_wait(known, b"before")
        for topic, error in BAD_TOPICS:
            with pytest.raises(error, match="topic"), anyio.fail_after(5):
                await producer.send(topic, b"x")
        with anyio.fail_after(30):
            assert (await producer.send_and_wait(known, b"known")).topic == known
            fresh = unique("fresh")  # a topic never seen before still works
            assert (await producer.send_and_wait(fresh, b"new")).topic == fresh
            assert (await producer.send_and_wait("a" * 200 + "._-Z9", b"max-ish")).offset >= 0


async def test_a_partition_outside_the_topic_is_refused_at_send(broker: Any) -> None:
    """Issue 27: `partition=-1` was refused as "has 4 partitions, not 0"."""
    topic = unique("range")
    async with Producer(broker.bootstrap_servers, linger=0) as producer:
        count = len(await producer.partitions_for(topic))
        for partition in (-1, count):
            message = rf"partition {partition} of topic '{topic}' does not exist: it has {count} "
            with pytest.raises(ValueError, match=message), anyio.fail_after(5):
                await producer.send(topic, b"x", partition=partition)
        assert (await producer.send_and_wait(topic, b"ok", partition=count - 1)).offset == 0


async def test_headers_must_be_str_keys_with_bytes_values(broker: Any) -> None:
    topic = unique("headers")
    async with Producer(broker.bootstrap_servers, linger=0) as producer:
        for headers, match in [
            ([(b"bkey", b"v")], "header keys are str"),
            ([("k", "text")], "header values are bytes"),
            ({"k": b"v"}, "pair"),
        ]:
            with pytest.raises(TypeError, match=match):
                await producer.send(topic, b"x", headers=headers)  # type: ignore[arg-type]
        await producer.send_and_wait(topic, b"ok", headers=[("k", b"v"), ("n", None)], partition=0)
    (message,) = consume(broker.bootstrap_servers, topic, 1)
    assert message.headers() == [("k", b"v"), ("n", None)]


async def test_records_too_large_are_refused_at_send(broker: Any) -> None:
    topic = unique("large")
    async with Producer(broker.bootstrap_servers, linger=0, max_request_size=MiB) as producer:
        with pytest.raises(RecordTooLargeError, match=r"max_request_size=1048576"):
            await producer.send(topic, b"x" * (2 * MiB))
        with pytest.raises(MessageTooLargeError, match="max_request_size"):
            await producer.send(topic, b"x" * (MiB - 50), key=b"k")  # with the batch header
        assert (await producer.send_and_wait(topic, b"x" * (MiB // 2), partition=0)).offset == 0
    async with Producer(
        broker.bootstrap_servers, max_request_size=64 * MiB, buffer_memory=MiB
    ) as producer:
        with pytest.raises(RecordTooLargeError, match=r"buffer_memory=1048576"):
            await producer.send(topic, b"x" * (2 * MiB))
        assert (await producer.send_and_wait(topic, b"small", partition=0)).offset == 1


class Broken:
    """Returns nothing from on_send (or raises): Java logs it and sends the record unchanged."""

    def __init__(self, raises: bool) -> None:
        self.raises = raises

    def on_send(self, record: ProducerRecord) -> ProducerRecord | None:
        if self.raises:
            raise RuntimeError("interceptor bug")
        return None


class Tag:
    def on_send(self, record: ProducerRecord) -> ProducerRecord:
        return dataclasses.replace(record, value=(record.value or b"") + b"+tag")


async def test_an_interceptor_returning_nothing_or_raising_leaves_the_record(
    broker: Any,
) -> None:
    topic = unique("intercepted")
    interceptors = [Tag(), Broken(raises=False), Broken(raises=True)]
    async with Producer(broker.bootstrap_servers, linger=0, interceptors=interceptors) as p:
        meta = await p.send_and_wait(topic, b"v", partition=0)
    assert meta.topic == topic and meta.offset == 0
    (message,) = consume(broker.bootstrap_servers, topic, 1)
    assert message.value() == b"v+tag"


def test_the_sync_producer_refuses_bad_input_at_send(broker: Any) -> None:
    with SyncProducer(broker.bootstrap_servers, linger=0) as producer:
        with pytest.raises(TypeError, match="topic"):
            producer.send(None, b"x")  # type: ignore[arg-type]
        with pytest.raises(TypeError, match="header keys are str"):
            producer.send("t", b"x", headers=[(b"k", b"v")])  # type: ignore[list-item]
        topic = unique("sync")
        assert producer.send_and_wait(topic, b"ok").offset == 0
        count = len(producer.partitions_for(topic))
        with pytest.raises(ValueError, match=rf"partition -1 of topic '{topic}' .* {count} "):
            producer.send(topic, b"x", partition=-1).result(10)


def _names(name: str) -> str:
    return rf"send\({name}=...\): a record's {name} is bytes or None, not str.*{name}.encode\(\)"


BAD_RECORDS: list[tuple[dict[str, Any], type[Exception], str]] = [
    ({"value": "text"}, TypeError, _names("value")),
    ({"value": b"v", "key": "k"}, TypeError, _names("key")),
    ({"value": b"v", "timestamp": "x"}, TypeError, r"send\(timestamp=...\): epoch milli.*not str"),
    ({"value": b"v", "timestamp": 1.5}, TypeError, r"send\(timestamp=...\).*not float"),
    ({"value": b"v", "timestamp": -5}, ValueError, r"send\(timestamp=-5\): a timestamp is >= 0"),
]


async def test_a_bad_key_value_or_timestamp_is_refused_naming_it(broker: Any) -> None:
    """Before metadata (the checked path) and into an open batch (the fast path): an error
    naming the argument, not the codec's "string argument without an encoding"; the producer
    goes on (a refused first record left an empty batch that crashed the send loop, and a
    negative timestamp was written)."""
    topic = unique("bad-record")
    async with Producer(broker.bootstrap_servers, linger=0.05) as producer:
        for kwargs, error, match in BAD_RECORDS:
            with pytest.raises(error, match=match):
                await producer.send(topic, **kwargs)
        first = await producer.send(topic, b"first", partition=0)
        for kwargs, error, match in BAD_RECORDS:
            for partition in (0, None):
                with pytest.raises(error, match=match):
                    await producer.send(topic, **kwargs, partition=partition)
        with anyio.fail_after(30):
            assert (await first).offset == 0
            assert (await producer.send_and_wait(topic, b"after", partition=0)).offset == 1


def test_the_sync_producer_refuses_a_bad_key_value_or_timestamp_naming_it(broker: Any) -> None:
    topic = unique("sync-bad-record")
    with SyncProducer(broker.bootstrap_servers, linger=0.05) as producer:
        for kwargs, error, match in BAD_RECORDS:
            with pytest.raises(error, match=match):
                producer.send(topic, **kwargs)
        first = producer.send(topic, b"first", partition=0)
        first.result(30)
        producer.send(topic, b"open", partition=0)  # a batch open for the fast path
        for kwargs, error, match in BAD_RECORDS:
            for partition in (0, None):
                with pytest.raises(error, match=match):
                    producer.send(topic, **kwargs, partition=partition)
        assert producer.send_and_wait(topic, b"after", partition=0).offset == 2
