"""A transaction whose end outlived the application's wait (`max_block`): its outcome is
unknown, so the same call again waits for it and the opposite call is refused (Java's
semantics). On the mock cluster EndTxn is answered late; on Apache Kafka the coordinator is
paused while the EndTxn is on its way, and a read_committed consumer (librdkafka) shows what it
decided.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _producer_support import consume, unique

from krafka import Producer
from krafka.errors import InvalidStateError, KafkaTimeoutError
from krafka.protocol.error_codes import ErrorCode
from krafka.protocol.messages import ApiKey

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]

TOPIC = "txn-outcome"
UNKNOWN = "outcome is unknown"
REFUSED = r"the previous commit_transaction\(\) timed out"


async def refused_until_the_commit_is_known(producer: Producer) -> None:
    with pytest.raises(InvalidStateError, match=REFUSED):
        await producer.abort_transaction()
    with pytest.raises(InvalidStateError, match=REFUSED):
        producer.begin_transaction()


async def then_abort_one_and_commit_one(producer: Producer, topic: str) -> None:
    producer.begin_transaction()
    await producer.send(topic, b"aborted", partition=0)
    await producer.abort_transaction()
    producer.begin_transaction()
    await producer.send(topic, b"last", partition=0)
    await producer.commit_transaction()


async def stopped(kafka: Any, node_id: int) -> None:
    """Until every thread of the paused node is stopped (SIGSTOP is delivered asynchronously:
    a thread still running could answer the EndTxn)."""
    tasks = Path(f"/proc/{kafka.node(node_id).process.pid}/task")
    with anyio.fail_after(10):
        while not all(_stopped(task / "stat") for task in tasks.iterdir()):
            await anyio.sleep(0.01)


def _stopped(stat: Path) -> bool:
    try:
        return stat.read_text().rpartition(")")[2].split()[0] in ("T", "t")
    except FileNotFoundError:  # the thread ended
        return True


async def read_committed(bootstrap: str, topic: str) -> list[bytes]:
    messages = await anyio.to_thread.run_sync(
        lambda: consume(bootstrap, topic, 2, **{"isolation.level": "read_committed"})
    )
    return [m.value() for m in messages]


async def test_a_commit_answered_after_max_block_is_resumed_not_aborted(
    make_mock_cluster: Any,
) -> None:
    cluster = make_mock_cluster(3, topics={TOPIC: 1})
    cluster.set_coordinator("transaction", "tx", 1)
    async with Producer(
        cluster.bootstrap_servers, transactional_id="tx", request_timeout=1.0, max_block=1.5
    ) as producer:
        producer.begin_transaction()
        await (await producer.send(TOPIC, b"committed", partition=0))
        # The coordinator commits at once but answers 2 s later: past request_timeout (the
        # EndTxn is sent again, answered late again) and past max_block.
        cluster.push_broker_request_error_rtts(1, ApiKey.END_TXN, [(ErrorCode.NONE, 2000)] * 2)
        with pytest.raises(KafkaTimeoutError, match=UNKNOWN):
            await producer.commit_transaction()
        await refused_until_the_commit_is_known(producer)
        await producer.commit_transaction()
        await then_abort_one_and_commit_one(producer, TOPIC)
    assert await read_committed(cluster.bootstrap_servers, TOPIC) == [b"committed", b"last"]


@pytest.mark.broker
@pytest.mark.one_backend
async def test_kafka_a_commit_the_coordinator_makes_after_max_block_is_reported_by_the_retry(
    kafka: Any,
) -> None:
    topic, transactional_id = unique("txn-outcome"), unique("tx")
    async with Producer(kafka.bootstrap_servers, transactional_id=transactional_id):
        pass  # the coordinator's first InitProducerId may take longer than the short max_block
    async with Producer(
        kafka.bootstrap_servers, transactional_id=transactional_id, max_block=2.0
    ) as producer:
        producer.begin_transaction()
        await (await producer.send(topic, b"committed", partition=0))
        kafka.pause(1)
        try:
            await stopped(kafka, 1)
            with pytest.raises(KafkaTimeoutError, match=UNKNOWN):
                await producer.commit_transaction()  # the EndTxn waits in the broker's socket
            await refused_until_the_commit_is_known(producer)
        finally:
            kafka.resume(1)
        await producer.commit_transaction()
        await then_abort_one_and_commit_one(producer, topic)
    assert await read_committed(kafka.bootstrap_servers, topic) == [b"committed", b"last"]


async def test_start_without_a_producer_id_within_max_block_fails_for_good(
    make_mock_cluster: Any,
) -> None:
    """`start` closes the producer when it fails: its error must not suggest calling
    init_transactions() again."""
    cluster = make_mock_cluster(3)
    cluster.set_coordinator("transaction", "slow", 1)
    cluster.push_broker_request_error_rtts(1, ApiKey.INIT_PRODUCER_ID, [(ErrorCode.NONE, 1500)])
    producer = Producer(cluster.bootstrap_servers, transactional_id="slow", max_block=0.5)
    with pytest.raises(KafkaTimeoutError, match=r"no producer id.*did not start"):
        await producer.start()
    with pytest.raises(InvalidStateError, match="closed"):
        await producer.init_transactions()
