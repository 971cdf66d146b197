"""krafka's assignors agree with Apache Kafka's own, run live: `tools/assignor_oracle` compiled
against the real kafka-clients 4.4 jar answers fresh random scenarios (a new seed each run, in
the report when it fails; `KRAFKA_ORACLE_SEED` replays one), played through several rebalances
as `golden.py` records them. Complements the stored golden file (`test_java_golden`)."""

from __future__ import annotations

import os
import random
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _java_answers import Verdict, compare

ORACLE_DIR = Path(__file__).resolve().parents[5] / "tools" / "assignor_oracle"
if str(ORACLE_DIR) not in sys.path:
    sys.path.insert(0, str(ORACLE_DIR))

import golden  # noqa: E402
from build import build, command  # noqa: E402

ROUNDS_PER_ASSIGNOR = 12


@pytest.fixture(scope="module")
def oracle() -> Iterator[Any]:
    process = golden.Oracle(command(build()))
    yield process
    process.close()


def test_fresh_scenarios_agree_with_kafka_clients(oracle: Any) -> None:
    seed = int(os.environ.get("KRAFKA_ORACLE_SEED") or random.SystemRandom().randrange(2**32))
    cases = golden.record(oracle, random.Random(seed), ROUNDS_PER_ASSIGNOR)
    assert {case["assignor"] for case in cases} == {
        "range", "roundrobin", "sticky", "cooperative-sticky",
    }  # fmt: skip
    failed = [case for case in cases if "error" in case]
    assert not failed, f"seed {seed}: Java failed on {failed[:1]}"
    differs = [case for case in cases if compare(case) is Verdict.DIFFERS]
    assert not differs, f"seed {seed}: krafka differs from Java on {differs[:1]}"
