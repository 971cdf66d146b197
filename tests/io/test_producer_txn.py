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


async def test_init_producer_id_needs_v3_and_says_so() -> None:
    from krafka.errors import UnsupportedVersionError
    from krafka.io.producer_txn import TxnCoordinator
    from krafka.sansio.producer import ProducerConfig

    class OldBroker:
        async def api_version(self, api_key: int, node_id: int | None = None) -> int:
            return 2

    coordinator = TxnCoordinator(OldBroker(), ProducerConfig())  # type: ignore[arg-type]
    with pytest.raises(UnsupportedVersionError, match=r"InitProducerId v3\+.*offers v2"):
        await coordinator.init_producer_id(None)


def test_group_metadata_and_offsets_accept_consumer_shapes() -> None:
    from types import SimpleNamespace

    from krafka.io.producer_txn import GroupMetadata, normalize_offsets

    member = SimpleNamespace(
        group_id="g", generation_id=3, member_id="m-1", group_instance_id="static-1"
    )
    assert GroupMetadata.of(member) == GroupMetadata("g", 3, "m-1", "static-1")
    assert GroupMetadata.of("g") == GroupMetadata("g")
    from collections import namedtuple

    tp = namedtuple("TopicPartition", "topic partition")("t", 2)
    committed = SimpleNamespace(offset=10, metadata="meta")
    assert normalize_offsets({tp: committed, ("u", 0): 5}) == {
        ("t", 2): (10, "meta"),
        ("u", 0): (5, ""),
    }


async def test_after_an_abortable_error_abort_bumps_the_epoch_and_work_goes_on(
    broker: Any,
) -> None:
    from krafka.errors import KrafkaError
    from krafka.sansio.producer import TxnEvent

    topic = unique("txn-recover")
    async with Producer(
        bootstrap_servers=broker.bootstrap_servers, transactional_id=unique("tx")
    ) as producer:
        producer.begin_transaction()
        await producer.send_and_wait(topic, b"doomed", partition=0)
        before = producer._idempotence.identity  # type: ignore[union-attr]
        producer._txn.handle(TxnEvent.ABORTABLE_ERROR, KrafkaError("a batch failed"))  # type: ignore[union-attr]
        with pytest.raises(InvalidStateError, match="a batch failed"):
            await producer.commit_transaction()
        await producer.abort_transaction()
        after = producer._idempotence.identity  # type: ignore[union-attr]
        assert after is not None and before is not None
        assert (after.producer_id, after.producer_epoch) != (
            before.producer_id,
            before.producer_epoch,
        )
        producer.begin_transaction()
        await producer.send(topic, b"kept", partition=0)
        await producer.commit_transaction()
    async with KafkaClient(broker.bootstrap_servers) as client:
        log = markers(await fetch_batches(client, topic))
    assert log == [
        ("data", [b"doomed"]),
        ("control", ControlType.ABORT),
        ("data", [b"kept"]),
        ("control", ControlType.COMMIT),
    ]
