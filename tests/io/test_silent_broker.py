"""A port that accepts connections and never answers (a plain listening socket: the kernel
completes the TCP handshake, nothing reads): every client fails within the bound its user set,
naming the address, instead of waiting for the connect timeout (or for ever)."""

from __future__ import annotations

import re
import socket
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import anyio
import pytest

from krafka import AdminClient, Consumer, Producer, TopicPartition
from krafka.errors import KafkaTimeoutError

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]

BOUND = 1.0
#: Slack for a loaded machine: the connect timeout (10 s by default) must not be what ends it.
SLACK = 3.0


@pytest.fixture
def silent() -> Iterator[str]:
    with socket.create_server(("127.0.0.1", 0)) as listener:
        yield f"127.0.0.1:{listener.getsockname()[1]}"


async def _admin(address: str) -> None:
    async with AdminClient(address, default_api_timeout=BOUND) as admin:
        await admin.list_topics()


async def _consumer(address: str) -> None:
    async with Consumer(address, default_api_timeout=BOUND, group_id="g") as consumer:
        await consumer.committed([TopicPartition("t", 0)])


async def _producer(address: str) -> None:
    async with Producer(address, max_block=BOUND) as producer:
        await producer.send_and_wait("t", b"v")


async def _request_timeout(address: str) -> None:
    async with AdminClient(address, request_timeout=BOUND) as admin:
        await admin.list_topics()


CALLS: dict[str, Callable[[str], Awaitable[None]]] = {
    "admin-default_api_timeout": _admin,
    "consumer-default_api_timeout": _consumer,
    "producer-max_block": _producer,
    "admin-request_timeout": _request_timeout,
}


@pytest.mark.parametrize("call", list(CALLS), ids=list(CALLS))
async def test_a_silent_port_fails_within_the_users_bound_naming_it(silent: str, call: str) -> None:
    start = anyio.current_time()
    with pytest.raises(KafkaTimeoutError) as info:
        await CALLS[call](silent)
    elapsed = anyio.current_time() - start
    assert BOUND * 0.9 <= elapsed < BOUND + SLACK, f"took {elapsed:.1f}s with a {BOUND}s bound"
    message = str(info.value)
    assert f"{silent} accepted the connection but the ApiVersions handshake did not complete" in (
        message
    )
    # The bound, less what the client spent before sending (a bounded bootstrap gives the
    # server the time left): "within 1s", or "within 0.999s" a millisecond later.
    within = re.search(r"within ([0-9.]+)s", message)
    named = within is not None and BOUND * 0.9 <= float(within.group(1)) <= BOUND
    assert named or f"request_timeout={BOUND:g}s" in message, message


async def test_connect_timeout_alone_bounds_it_too(silent: str) -> None:
    options: dict[str, Any] = {"connect_timeout": BOUND}
    start = anyio.current_time()
    with pytest.raises(KafkaTimeoutError, match=f"{silent} accepted the connection"):
        async with AdminClient(silent, **options):
            pass
    assert anyio.current_time() - start < BOUND + SLACK


async def test_a_silent_bootstrap_server_leaves_time_for_the_next(
    silent: str, kafka_cluster: Any
) -> None:
    """Within the bound, each bootstrap server gets a share: the silent first one does not use
    it all up."""
    servers = f"{silent},{kafka_cluster.bootstrap_servers}"
    async with AdminClient(servers, default_api_timeout=4 * BOUND) as admin:
        assert await admin.describe_cluster()
