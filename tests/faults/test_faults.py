"""Faults on a real 3-node Apache Kafka cluster: nothing acknowledged is lost, nothing written
twice, per-partition order kept, no aborted record read_committed, the pipeline's output holds
each input exactly once, and the group never commits past what it processed.

Every workload runs at once (idempotent and transactional writers, a churning consumer group,
a consume-transform-produce pipeline) while one fault strikes, from a seeded schedule; the seed
is printed for replay with `tests/faults/run.py`. The default suite runs a short load per fault
on one shared cluster, under asyncio and trio by turns; `-m slow` runs each under the other
backend too, and the long soak (every fault for minutes, over a million records) that also
watches resident memory and open file descriptors.

Network partitions use network namespaces where the machine allows it (root, `ip`), a proxy
per broker otherwise; each run says which.
"""

from __future__ import annotations

import gc
import os
import random
from collections.abc import Iterator

import pytest
from faultkit.nemesis import FaultKind, NetworkMode
from faultkit.scenario import RunResult, Shape, fault_cluster, open_fds, resident_kib, run_scenario

from krafka.testing.kafka import KafkaCluster
from krafka.testing.proxy import FaultProxy

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(900)]

FAULTS = [kind for kind in FaultKind if kind is not FaultKind.NONE]
SHORT = Shape(seconds=5.0, rate=250.0, pause=3.0)
LONG = Shape(seconds=60.0, rate=1000.0, pause=10.0, drain_timeout=300.0, records=90_000)

Lab = tuple[KafkaCluster, NetworkMode, dict[int, FaultProxy]]


def _seed() -> int:
    value = os.environ.get("KRAFKA_FAULT_SEED")
    return int(value) if value else random.randrange(1 << 20)


@pytest.fixture(scope="module")
def fault_lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    with fault_cluster(tmp_path_factory.mktemp("faults")) as lab:
        yield lab


def _judge(result: RunResult) -> None:
    print(f"\n{result.format()}")
    assert result.report.ok, result.format()
    assert result.drained, f"the group or the pipeline did not catch up\n{result.format()}"


@pytest.mark.one_backend
@pytest.mark.parametrize("fault", FAULTS, ids=[k.value for k in FAULTS])
async def test_nothing_acknowledged_is_lost(
    fault: FaultKind, fault_lab: Lab, anyio_backend: str
) -> None:
    result = await run_scenario(*fault_lab, fault, _seed(), anyio_backend, SHORT)
    _judge(result)
    if fault is FaultKind.PARTITION:
        print(f"network partition through {result.mode.value}")


@pytest.mark.slow
@pytest.mark.timeout(3600)
async def test_soak_every_fault_over_a_million_records_in_bounded_memory(
    fault_lab: Lab, anyio_backend: str
) -> None:
    """Each backend's soak writes over half a million records (the pair: over a million, in
    about half an hour here); the resident memory and the open descriptors after each fault's
    run stay where they were after the first (every run's history is dropped once checked)."""
    seed = _seed()
    sent = 0
    peak_fds = 0
    after: list[tuple[int, int]] = []
    for fault in FAULTS:
        result = await run_scenario(*fault_lab, fault, seed, anyio_backend, LONG)
        _judge(result)
        sent += result.report.totals["sent"]
        peak_fds = max([peak_fds, *(fds for _, fds in result.samples)])
        del result
        after.append((resident_kib(), open_fds(), krafka_objects()))
    print(f"\nsoak on {anyio_backend}: {sent} records; (RSS KiB, fds, live krafka objects) "
          f"after each fault: {after}; peak fds during the runs: {peak_fds}")  # fmt: skip
    assert sent >= 500_000
    first_rss, first_fds, first_objects = after[0]
    assert all(rss < first_rss * 1.5 + 100_000 for rss, _, _ in after), after
    assert all(fds <= first_fds + 20 for _, fds, _ in after), after
    assert all(objects <= first_objects * 1.2 + 500 for _, _, objects in after), after
    assert peak_fds < 1000


def krafka_objects() -> int:
    """Objects of krafka's own types still alive (every client of a finished run is closed)."""
    gc.collect()
    return sum(1 for o in gc.get_objects() if type(o).__module__.startswith("krafka"))
