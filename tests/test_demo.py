"""The README demo's steps, against the session broker, under asyncio and trio."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from krafka.demo import consume_back, fetch, latest_per_key, produce_with_producer
from krafka.io.client import KafkaClient

pytestmark = pytest.mark.anyio


async def test_producer_demo_reads_back_every_record(broker: Any, anyio_backend: str) -> None:
    topic = f"demo-test-{anyio_backend}"
    acked = await produce_with_producer(broker.bootstrap_servers, topic, 2_000)
    assert sum(acked.values()) == 2_000
    async with KafkaClient(broker.bootstrap_servers) as client:
        await client.refresh_metadata([topic])
        for partition, count in acked.items():
            records = await fetch(client, topic, partition, 0, count)
            assert len(records) == count
            assert len({r.offset for r in records}) == count
    assert await consume_back(broker.bootstrap_servers, topic, acked) == 2_000
    latest = await latest_per_key(broker.bootstrap_servers, topic)
    assert len(latest) == 11 and latest[b"k"] == b"hello"


@pytest.mark.timeout(200)
def test_demo_command_runs_end_to_end() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "krafka.demo"],
        cwd=Path(__file__).resolve().parents[1],
        capture_output=True,
        text=True,
        timeout=190,
        check=True,
    ).stdout
    assert out.strip().endswith("ok")
    assert out.count("fetched every acknowledged record back, exactly once") == 2
    assert out.count("consumer group of two (cooperative-sticky)") == 2
