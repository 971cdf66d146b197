"""Transactions against Tansu: commit and abort markers, offsets in a transaction, fencing.

Tansu writes the COMMIT/ABORT control batches but does not filter aborted records for
read_committed consumers, so outcomes are checked on the raw log: data batches flagged
transactional, followed by one control batch of the right type.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _producer_support import fetch_batches, unique

from krafka import Producer
from krafka.codec import ControlType, parse_control
from krafka.errors import InvalidStateError, ProducerFencedError
from krafka.io.client import KafkaClient

pytestmark = [pytest.mark.anyio, pytest.mark.broker, pytest.mark.timeout(60)]


def markers(batches: list[Any]) -> list[tuple[str, Any]]:
    """The log as ("data", values) and ("control", ControlType) entries."""
    out: list[tuple[str, Any]] = []
    for batch in batches:
        if batch.is_control:
            out.append(("control", parse_control(batch.records[0]).type))
        else:
            assert batch.is_transactional
            out.append(("data", [r.value for r in batch.records]))
    return out


async def test_commit_and_abort_write_their_markers(broker: Any) -> None:
    topic = unique("txn")
    async with Producer(
        bootstrap_servers=broker.bootstrap_servers, transactional_id=unique("tx")
    ) as producer:
        await producer.begin_transaction()
        for i in range(3):
            await producer.send(topic, b"c%d" % i, partition=0)
        await producer.commit_transaction()
        producer.begin_transaction()
        pending = await producer.send(topic, b"a0", partition=0)
        await producer.flush()
        assert (await pending).offset == 4  # after 3 records and the commit marker
        await producer.abort_transaction()
        producer.begin_transaction()
        await producer.send(topic, b"c3", partition=0)
        await producer.commit_transaction()
    async with KafkaClient(broker.bootstrap_servers) as client:
        log = markers(await fetch_batches(client, topic))
    assert log == [
        ("data", [b"c0", b"c1", b"c2"]),
        ("control", ControlType.COMMIT),
        ("data", [b"a0"]),
        ("control", ControlType.ABORT),
        ("data", [b"c3"]),
        ("control", ControlType.COMMIT),
    ]


async def test_send_outside_a_transaction_is_refused(broker: Any) -> None:
    async with Producer(
        bootstrap_servers=broker.bootstrap_servers, transactional_id=unique("tx")
    ) as producer:
        with pytest.raises(InvalidStateError, match="cannot send in state ready"):
            await producer.send(unique("t"), b"v")
        with pytest.raises(InvalidStateError, match="cannot commit in state ready"):
            await producer.commit_transaction()
        producer.begin_transaction()
        with pytest.raises(InvalidStateError, match="cannot begin"):
            producer.begin_transaction()
        await producer.abort_transaction()  # an empty transaction ends locally


async def test_offsets_sent_to_a_transaction_are_committed_for_the_group(broker: Any) -> None:
    import confluent_kafka

    topic, group = unique("txn-offsets"), unique("group")
    async with Producer(
        bootstrap_servers=broker.bootstrap_servers, transactional_id=unique("tx")
    ) as producer:
        producer.begin_transaction()
        await producer.send(topic, b"out", partition=0)
        await producer.send_offsets_to_transaction(
            {confluent_kafka.TopicPartition(topic, 1): 42, (topic, 2): 7}, group
        )
        await producer.commit_transaction()

    def committed() -> dict[int, int]:
        consumer = confluent_kafka.Consumer(
            {"bootstrap.servers": broker.bootstrap_servers, "group.id": group}
        )
        try:
            tps = [confluent_kafka.TopicPartition(topic, p) for p in (1, 2)]
            return {tp.partition: tp.offset for tp in consumer.committed(tps, timeout=10)}
        finally:
            consumer.close()

    assert await anyio.to_thread.run_sync(committed) == {1: 42, 2: 7}


async def test_a_second_producer_with_the_same_id_fences_the_first(broker: Any) -> None:
    txn_id, topic = unique("tx"), unique("fence")
    async with Producer(bootstrap_servers=broker.bootstrap_servers, transactional_id=txn_id) as old:
        old.begin_transaction()
        await old.send(topic, b"zombie", partition=0)
        await old.flush()
        async with Producer(
            bootstrap_servers=broker.bootstrap_servers, transactional_id=txn_id
        ) as new:
            # The zombie's next partition needs AddPartitionsToTxn: the coordinator fences it.
            # (Tansu drops the connection on a fenced EndTxn instead of answering, so the test
            # provokes the fencing through the data path, as a zombie would hit it.)
            zombie = await old.send(topic, b"zombie-2", partition=1)
            with pytest.raises(ProducerFencedError):
                await zombie
            with pytest.raises(ProducerFencedError):
                await old.commit_transaction()
            with pytest.raises(ProducerFencedError):
                old.begin_transaction()
            new.begin_transaction()
            await new.send(topic, b"alive", partition=0)
            await new.commit_transaction()
    async with KafkaClient(broker.bootstrap_servers) as client:
        log = markers(await fetch_batches(client, topic))
    assert ("data", [b"alive"]) in log
    assert log[-1] == ("control", ControlType.COMMIT)
    assert ("control", ControlType.COMMIT) not in log[: log.index(("data", [b"alive"]))]


async def test_a_request_below_its_minimum_version_is_refused_before_sending(
    broker: Any,
) -> None:
    """The transaction machine asks InitProducerId v3+ (epoch bumps); the client refuses a
    broker offering less without sending anything, naming the versions."""
    from krafka.errors import UnsupportedVersionError
    from krafka.protocol.messages import InitProducerIdRequest

    async with KafkaClient(broker.bootstrap_servers) as client:
        with pytest.raises(
            UnsupportedVersionError, match=r"INIT_PRODUCER_ID needs v99\+.*offers v"
        ):
            await client.send(InitProducerIdRequest(), min_version=99)


def test_send_offsets_accepts_what_consumers_give() -> None:
    from krafka.io.producer_txn import group_metadata_of, normalize_offsets
    from krafka.structs import ConsumerGroupMetadata, OffsetAndMetadata, TopicPartition

    member = ConsumerGroupMetadata("g", 3, "m-1", "static-1")
    assert group_metadata_of(member) is member
    assert group_metadata_of("g") == ConsumerGroupMetadata("g")
    with pytest.raises(TypeError, match="group_metadata"):
        group_metadata_of(3)  # type: ignore[arg-type]
    assert normalize_offsets(
        {TopicPartition("t", 2): OffsetAndMetadata(10, "meta"), ("u", 0): 5}
    ) == {
        TopicPartition("t", 2): OffsetAndMetadata(10, "meta"),
        TopicPartition("u", 0): OffsetAndMetadata(5),
    }


async def test_after_an_abortable_error_abort_bumps_the_epoch_and_work_goes_on(
    broker: Any,
) -> None:
    """A record that expires in the accumulator (delivery_timeout) makes the transaction
    abortable-only; abort ends it and bumps the epoch (Tansu: a fresh producer id), and the
    next transaction commits under the new identity."""
    from krafka.errors import KafkaTimeoutError

    topic = unique("txn-recover")
    async with Producer(
        bootstrap_servers=broker.bootstrap_servers,
        transactional_id=unique("tx"),
        linger=1.0,
        delivery_timeout=0.3,
    ) as producer:
        producer.begin_transaction()
        await producer.send(topic, b"sent", partition=0)
        await producer.flush()
        doomed = await producer.send(topic, b"doomed", partition=1)
        with pytest.raises(KafkaTimeoutError, match="expired"):
            await doomed
        with pytest.raises(InvalidStateError, match="must be aborted"):
            await producer.commit_transaction()
        await producer.abort_transaction()
        producer.begin_transaction()
        await producer.send(topic, b"kept", partition=0)
        await producer.commit_transaction()
    async with KafkaClient(broker.bootstrap_servers) as client:
        batches = await fetch_batches(client, topic)
    assert markers(batches) == [
        ("data", [b"sent"]),
        ("control", ControlType.ABORT),
        ("data", [b"kept"]),
        ("control", ControlType.COMMIT),
    ]
    first, kept = batches[0], batches[2]
    assert (first.producer_id, first.producer_epoch) != (kept.producer_id, kept.producer_epoch)


async def test_records_sent_during_a_commit_are_in_it_or_refused(broker: Any) -> None:
    """One task sends in a loop while another commits: every record is either in the
    committed transaction or its send raised; none lands after the commit marker."""
    topic = unique("txn-race")
    accepted: list[bytes] = []
    refused = 0
    async with Producer(
        bootstrap_servers=broker.bootstrap_servers, transactional_id=unique("tx"), linger=0.01
    ) as producer:
        producer.begin_transaction()
        committed = anyio.Event()

        async def sender() -> None:
            nonlocal refused
            i = 0
            while not committed.is_set():
                value = b"r%d" % i
                i += 1
                try:
                    await producer.send(topic, value, partition=0)
                except InvalidStateError:
                    refused += 1
                else:
                    accepted.append(value)
                await anyio.sleep(0)

        async with anyio.create_task_group() as tg:
            tg.start_soon(sender)
            await anyio.sleep(0.2)
            await producer.commit_transaction()
            committed.set()
    async with KafkaClient(broker.bootstrap_servers) as client:
        log = markers(await fetch_batches(client, topic))
    assert log[-1] == ("control", ControlType.COMMIT)
    assert all(kind == "data" for kind, _ in log[:-1])
    in_log = [v for _, values in log[:-1] for v in values]
    assert in_log == accepted and refused >= 1 and len(accepted) > 10
