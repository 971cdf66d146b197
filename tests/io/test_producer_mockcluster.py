"""The producer on librdkafka's mock cluster: per-partition order across leader moves.

The old leader answers slowly, so several Produce requests are out there when the leaders move;
the mock handles a request when its delay is over, so those are refused NOT_LEADER_OR_FOLLOWER
and retried. The new leader must get a partition's batches in send order without relying on
the broker refusing out-of-order sequences: the mock enforces sequences for an idempotent
producer only, so the producer without idempotence shows what the producer itself keeps.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _producer_support import consume

from krafka import Producer
from krafka.errors import InvalidTopicError
from krafka.protocol.error_codes import ErrorCode
from krafka.protocol.messages import ApiKey

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]

TOPIC = "ordered"
N = 240
MOVE_AT = 80


@pytest.mark.one_backend
@pytest.mark.parametrize("idempotent", [True, False], ids=["idempotent", "plain"])
async def test_records_keep_their_send_order_per_partition_across_a_leader_move(
    make_mock_cluster: Any, idempotent: bool
) -> None:
    cluster = make_mock_cluster(3, topics={TOPIC: 2})
    cluster.set_partition_leader(TOPIC, 0, 1)
    cluster.set_partition_leader(TOPIC, 1, 2)
    async with Producer(
        cluster.bootstrap_servers,
        linger=0.0,
        batch_size=100,  # a batch per record or two: many batches in flight
        enable_idempotence=idempotent,
        retry_backoff=0.05,
    ) as producer:
        await producer.partitions_for(TOPIC)
        cluster.set_broker_rtt(1, 300)
        cluster.start_request_tracking()
        handles = []
        for i in range(N):
            handles.append(await producer.send(TOPIC, b"%05d" % i, partition=i % 2))
            if i == MOVE_AT:
                cluster.set_partition_leader(TOPIC, 0, 3)
                cluster.set_partition_leader(TOPIC, 1, 3)
            await anyio.sleep(0.002)
        await producer.flush()
        produced_at = {r.broker_id for r in cluster.requests() if r.api_key == ApiKey.PRODUCE}
        offsets = [(await handle).offset for handle in handles]
        assert producer.metrics().retries > 0  # batches were refused by the old leader
    assert produced_at == {1, 2, 3}
    for partition in (0, 1):
        acked = offsets[partition::2]
        assert acked == sorted(acked) and len(set(acked)) == len(acked), partition
    for partition in (0, 1):
        log = await anyio.to_thread.run_sync(
            lambda p=partition: consume(cluster.bootstrap_servers, TOPIC, N // 2, (p,))
        )
        assert [m.value() for m in log] == [b"%05d" % i for i in range(partition, N, 2)]
        assert [m.offset() for m in log] == sorted(offsets[partition::2])


async def test_a_topic_the_broker_calls_invalid_fails_the_send_at_once(
    make_mock_cluster: Any,
) -> None:
    """Issue 27: a topic the broker answers with INVALID_TOPIC_EXCEPTION blocked `send` for
    `max_block` and then said "no metadata"; Java fails the send with InvalidTopicException."""
    cluster = make_mock_cluster(1, topics={"good": 1})
    cluster.set_topic_error("refused", ErrorCode.INVALID_TOPIC_EXCEPTION)
    async with Producer(cluster.bootstrap_servers, linger=0.0, max_block=30) as producer:
        with pytest.raises(InvalidTopicError, match="refused"), anyio.fail_after(10):
            await producer.send("refused", b"x")
        assert (await producer.send_and_wait("good", b"still")).offset == 0
