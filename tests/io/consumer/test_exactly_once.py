"""Exactly once on Tansu: a consume -> transform -> produce worker (`eos_worker.py`, its own
process, on asyncio and trio by turns) killed with SIGKILL three times mid-stream; the output,
read read_committed, holds every input exactly once."""

from __future__ import annotations

import random
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import anyio
import pytest

from krafka import AdminClient, Consumer, NewTopic, Producer, TopicPartition

pytestmark = [pytest.mark.anyio, pytest.mark.broker]

WORKER = Path(__file__).with_name("eos_worker.py")
RECORDS = 3000


async def wait_for_progress(worker: subprocess.Popen[str], at_least: int) -> int:
    """Read the worker's `committed N` lines until N reaches `at_least`; the last N."""
    assert worker.stdout is not None
    done = 0
    with anyio.fail_after(60):
        while done < at_least:
            line = await anyio.to_thread.run_sync(worker.stdout.readline)
            assert line, f"worker exited early with {worker.poll()}"
            done = int(line.split()[1])
    return done


async def read_all(bootstrap: str, topic: str, partitions: int, isolation: str) -> list[bytes]:
    got: list[bytes] = []
    async with Consumer(
        bootstrap, isolation_level=isolation, auto_offset_reset="earliest"
    ) as consumer:
        await consumer.assign([TopicPartition(topic, p) for p in range(partitions)])
        with anyio.fail_after(60):
            while len(got) < RECORDS:
                got += [r.value for r in await consumer.poll(timeout=0.5)]
        got += [r.value for r in await consumer.poll(timeout=2.0)]  # nothing beyond
    return got


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
@pytest.mark.timeout(240)
async def test_killed_worker_three_times_output_holds_each_input_once(broker: Any) -> None:
    bootstrap = broker.bootstrap_servers
    stamp = time.time_ns()
    source, sink, group, txn_id = (f"eos-{x}-{stamp}" for x in ("in", "out", "group", "txn"))
    async with AdminClient(bootstrap) as admin:
        (await admin.create_topics([NewTopic(source, 3), NewTopic(sink, 3)])).raise_for_errors()
    async with Producer(bootstrap, linger=0.01) as producer:
        for i in range(RECORDS):
            await producer.send(source, b"%d" % i, key=b"%d" % (i % 31))
        await producer.flush()

    rng = random.Random(3)
    command = [sys.executable, str(WORKER), bootstrap, source, sink, group, txn_id]
    for backend in ("asyncio", "trio", "asyncio"):
        worker = subprocess.Popen([*command, backend], stdout=subprocess.PIPE, text=True)
        try:
            # let it get going, then kill it at a random moment, most likely mid-transaction
            await wait_for_progress(worker, 1)
            await anyio.sleep(rng.uniform(0.1, 0.8))
        finally:
            worker.kill()
            worker.wait()
    worker = subprocess.Popen([*command, "trio"], stdout=subprocess.PIPE, text=True)
    try:
        output = await read_all(bootstrap, sink, 3, "read_committed")
    finally:
        worker.kill()
        worker.wait()
    # the killed workers' open transactions left aborted records behind
    everything = await read_all(bootstrap, sink, 3, "read_uncommitted")
    counts = Counter(output)
    duplicated = {v: n for v, n in counts.items() if n > 1}
    print(
        f"\nexactly once: {len(output)} committed outputs for {RECORDS} inputs, "
        f"{len(everything) - len(output)} aborted records from the killed workers"
    )
    assert not duplicated, f"{len(duplicated)} inputs produced twice: {sorted(duplicated)[:5]}"
    assert set(counts) == {b"out-%d" % i for i in range(RECORDS)}
