"""The idempotent producer through a fault-injecting proxy: responses cut after the broker
wrote the batch force retries, and sequence numbers must make them harmless."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _producer_support import consume, fetch_batches, unique

from krafka import Producer
from krafka.io.client import KafkaClient
from krafka.sansio.backoff import BackoffPolicy
from krafka.testing.proxy import Fault, FaultProxy

pytestmark = [pytest.mark.anyio, pytest.mark.broker, pytest.mark.timeout(90)]

N = 1500


@pytest.fixture
def proxy(proxied_broker: Any) -> Iterator[FaultProxy]:
    with FaultProxy(proxied_broker.target, port=proxied_broker.proxy_port) as p:
        yield p


async def produce_through_faults(
    proxy: FaultProxy, topic: str, fault: Fault = Fault.DROP_MID_FRAME, **options: Any
) -> list[int]:
    async with Producer(
        bootstrap_servers=proxy.bootstrap_servers,
        batch_size=2000,
        linger=0.002,
        retry_backoff=0.02,
        request_timeout=5.0,
        reconnect_backoff=BackoffPolicy(initial=0.01, maximum=0.1, max_retries=None),
        **options,
    ) as producer:
        await producer.partitions_for(topic)
        # Every new connection: ApiVersions, then 3 requests, then the 4th's answer is cut
        # after the broker has seen (and written) it.
        proxy.arm(fault, after_requests=4)
        handles = []
        for i in range(N):
            handles.append(await producer.send(topic, b"%06d" % i, partition=0))
        await producer.flush()
        proxy.disarm()
        return [(await h).offset for h in handles]


@pytest.mark.parametrize("fault", [Fault.DROP_MID_FRAME, Fault.RESET, Fault.GARBAGE])
async def test_idempotent_retries_leave_no_duplicates_and_no_gaps(
    proxy: FaultProxy, fault: Fault
) -> None:
    topic = unique("idem-faults")
    offsets = await produce_through_faults(proxy, topic, fault)
    assert proxy.faults_fired >= 3
    messages = await anyio.to_thread.run_sync(
        lambda: consume(proxy.bootstrap_servers, topic, N, timeout=30)
    )
    assert [m.value() for m in messages] == [b"%06d" % i for i in range(N)]
    # A retry the broker recognised as a duplicate is acknowledged without an offset (-1, as
    # in the Java client: DUPLICATE_SEQUENCE_NUMBER carries none); every other offset is the
    # record's real place in the log.
    assert offsets.count(-1) < N
    assert all(o in (-1, m.offset()) for o, m in zip(offsets, messages, strict=True))


async def test_without_idempotence_the_same_faults_duplicate(proxy: FaultProxy) -> None:
    topic = unique("plain-faults")
    await produce_through_faults(
        proxy, topic, enable_idempotence=False, max_in_flight_requests_per_connection=1
    )
    assert proxy.faults_fired >= 3
    messages = await anyio.to_thread.run_sync(
        lambda: consume(proxy.bootstrap_servers, topic, N + 1, timeout=10)
    )
    values = [m.value() for m in messages]
    assert set(values) == {b"%06d" % i for i in range(N)}
    assert len(values) > N  # the control experiment: what idempotence prevents


async def test_a_sequence_gap_is_healed_by_a_new_epoch(broker: Any) -> None:
    """OUT_OF_ORDER_SEQUENCE_NUMBER with no earlier batch to blame: the idempotent producer
    bumps its epoch and retries the refused batch from sequence 0 (as Java's does)."""
    topic = unique("gap")
    async with Producer(bootstrap_servers=broker.bootstrap_servers, linger=0.001) as producer:
        await producer.send_and_wait(topic, b"a", partition=0)
        # No broker loses a sequence on request: skip 100 sequence numbers to make the gap.
        producer.engine.sender.idempotence._next[(topic, 0)] = 100  # type: ignore[union-attr]
        gap = await producer.send_and_wait(topic, b"refused", partition=0)
        meta = await producer.send_and_wait(topic, b"c", partition=0)
        assert (gap.offset, meta.offset) == (1, 2)
    messages = await anyio.to_thread.run_sync(lambda: consume(broker.bootstrap_servers, topic, 3))
    assert [m.value() for m in messages] == [b"a", b"refused", b"c"]
    async with KafkaClient(broker.bootstrap_servers) as client:
        first, second, third = await fetch_batches(client, topic)
    assert (first.producer_id, first.producer_epoch) != (second.producer_id, second.producer_epoch)
    assert (second.base_sequence, third.base_sequence) == (0, 1)
