"""Each bench's command line runs end to end on Tansu with tiny record counts (not timed: the
figures are not looked at, only that the clients' paths work and a table is printed). The
default run covers one krafka client per bench; the slow run every Python client."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

BENCHES = Path(__file__).resolve().parents[2] / "benches"
COMMANDS = {
    "e2e": [
        "--records", "300", "--rounds", "2", "--linger-ms", "1",
        "--clients", "krafka-confirm,krafka-sync-many",
    ],
    "consume": [
        "--records", "300", "--rounds", "1", "--partitions", "2", "--compression", "lz4",
        "--clients", "krafka-arrow,krafka",
    ],
    "latency": [
        "--rates", "1000", "--lingers", "0", "--seconds", "0.2", "--rounds", "1",
        "--clients", "krafka", "--commit", "--commits", "5",
    ],
    "footprint": ["--records", "300", "--rounds", "1", "--clients", "krafka"],
    "matrix": [
        "--rounds", "1", "--partitions", "1", "--value-sizes", "100", "--compressions", "lz4",
        "--scale", "0.0002", "--consume-clients", "krafka,confluent-kafka",
        "--produce-clients", "krafka,confluent-kafka",
    ],
}  # fmt: skip
PEERS = {
    "e2e": "krafka,krafka-sync,krafka-many,confluent-kafka,confluent-aio,aiokafka,kafka-python",
    "consume": "krafka,krafka-iter,krafka-sync,confluent-kafka,confluent-aio,aiokafka,"
    "aiokafka-iter,kafka-python",
    "latency": "krafka,confluent-kafka",
    "footprint": "krafka-sync,confluent-kafka,aiokafka,kafka-python",
}


def run_bench(bench: str, arguments: list[str]) -> str:
    done = subprocess.run(
        [sys.executable, str(BENCHES / f"{bench}.py"), "--cluster", "tansu", *arguments],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(BENCHES.parent)},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


@pytest.mark.parametrize("bench", sorted(COMMANDS))
def test_bench_command_runs(bench: str) -> None:
    out = run_bench(bench, COMMANDS[bench])
    assert "medians" in out or "latency" in out
    if bench in ("e2e", "consume"):  # a krafka ratio, beside its same-round median
        assert "x throughput (same-round median" in out
    if bench == "e2e":
        assert "linger 1 ms" in out
    if bench == "matrix":  # each kind's table, with the cell's ratio judged against its target
        for kind in ("consume", "produce"):
            assert f"## {kind}: ratio of medians" in out
        assert re.search(r"^\s*1p 100B lz4\s+\d+\.\d\d \(\d+\.\d\d\) (ok|MISS)", out, re.M), out


@pytest.mark.slow
@pytest.mark.parametrize("bench", sorted(COMMANDS))
def test_bench_command_runs_every_python_peer(bench: str) -> None:
    arguments = [*COMMANDS[bench]]
    arguments[arguments.index("--clients") + 1] = PEERS[bench]
    out = run_bench(bench, arguments)
    for client in PEERS[bench].split(","):
        assert client in out
