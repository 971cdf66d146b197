"""The atheris harnesses of `fuzz/` through their runner (`python -m fuzz`).

Needs atheris (`pip install -e '.[fuzz]'`). The default suite checks that the runner counts
executions and reports a finding; `-m slow` runs every harness for 10^5 executions.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from fuzz.runner import harnesses, run, run_script  # noqa: E402

pytest.importorskip("atheris", reason="atheris is in the fuzz extra: pip install -e '.[fuzz]'")

SLOW_EXECUTIONS = 100_000
FAILING_HARNESS = """
import sys

import atheris


def test_one_input(data: bytes) -> None:
    if len(data) > 3:
        raise ValueError("found it")


atheris.Setup(sys.argv, test_one_input)
atheris.Fuzz()
"""


def test_every_decoder_has_a_harness() -> None:
    assert set(harnesses()) >= {"arrow", "batches", "connection", "legacy", "protocol", "varint"}


def test_runner_counts_executions_and_reports_a_finding(tmp_path: Path) -> None:
    script = tmp_path / "fuzz_failing.py"
    script.write_text(FAILING_HARNESS)
    result = run_script(script, "failing", 100_000, tmp_path / "artifacts")
    assert not result.clean and result.returncode != 0
    (finding,) = result.findings
    assert finding.kind == "crash" and finding.summary == "ValueError: found it"
    assert len(finding.artifact.read_bytes()) > 3
    assert 0 < result.executions < 100_000
    assert "1 finding(s)" in result.describe()


def test_a_clean_run_executes_exactly_what_was_asked(tmp_path: Path) -> None:
    result = run("varint", 500, tmp_path)
    assert result.clean, result.describe()
    assert result.executions == 500


@pytest.mark.slow
@pytest.mark.timeout(3600)
@pytest.mark.parametrize("name", sorted(harnesses()))
def test_harness_long_run(name: str, tmp_path: Path) -> None:
    result = run(name, SLOW_EXECUTIONS, tmp_path)
    print(result.describe())
    assert result.clean, result.describe()
    assert result.executions == SLOW_EXECUTIONS
