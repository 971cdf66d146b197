"""Run the atheris harnesses of this folder for a fixed number of executions each.

Each harness runs in its own subprocess (libFuzzer owns the process and exits it), one after
another, with `-runs=N`; the runner reads libFuzzer's final statistics for the number of
executions and its "Test unit written to" lines for findings (crash, timeout, out-of-memory
inputs, kept under `--artifacts`). libFuzzer stops a harness at its first finding.

    python -m fuzz --execs 1000000                 # every harness
    python -m fuzz --execs 100000 batches varint   # some of them
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
ARTIFACTS = HERE / ".artifacts"
TIMEOUT_PER_INPUT = 60  # seconds; a slower input is a finding (a decoder must never hang)
RSS_LIMIT_MB = 2048

_EXECUTED = re.compile(rb"^stat::number_of_executed_units:\s*(\d+)", re.M)
_ARTIFACT = re.compile(rb"Test unit written to (\S+)")
_EXCEPTION = re.compile(rb"=== Uncaught Python exception: ===\n([^\n]*)")
_ERROR = re.compile(rb"==\d+== ERROR: libFuzzer: ([^\n]*)")


def harnesses() -> dict[str, Path]:
    """Every harness here, by short name (`fuzz_batches.py` -> `batches`)."""
    return {p.stem.removeprefix("fuzz_"): p for p in sorted(HERE.glob("fuzz_*.py"))}


@dataclass(frozen=True, slots=True)
class Finding:
    """An input libFuzzer kept because the harness failed on it."""

    artifact: Path
    kind: str  # "crash", "timeout", "oom", ...
    summary: str


@dataclass(frozen=True, slots=True)
class Result:
    """One harness's run: how many inputs it executed and what it found."""

    name: str
    executions: int
    seconds: float
    returncode: int
    findings: tuple[Finding, ...]
    log: Path

    @property
    def clean(self) -> bool:
        return self.returncode == 0 and not self.findings

    def describe(self) -> str:
        rate = self.executions / self.seconds if self.seconds > 0 else 0.0
        head = f"{self.name}: {self.executions} executions in {self.seconds:.0f} s ({rate:.0f}/s)"
        if self.clean:
            return f"{head}, no finding"
        if not self.findings:
            return f"{head}, harness failed (exit {self.returncode}, log {self.log})"
        lines = [f"{head}, {len(self.findings)} finding(s):"]
        lines += [f"  {f.kind}: {f.summary} -> {f.artifact}" for f in self.findings]
        return "\n".join(lines)


def run(name: str, executions: int, artifacts: Path = ARTIFACTS) -> Result:
    """Run harness `name` for `executions` inputs in a subprocess; its output goes to a log."""
    return run_script(harnesses()[name], name, executions, artifacts)


def run_script(script: Path, name: str, executions: int, artifacts: Path) -> Result:
    """Run the atheris harness `script` (reported as `name`) for `executions` inputs."""
    artifacts.mkdir(parents=True, exist_ok=True)
    log = artifacts / f"{name}.log"
    command = [
        sys.executable,
        str(script),
        f"-runs={executions}",
        f"-timeout={TIMEOUT_PER_INPUT}",
        f"-rss_limit_mb={RSS_LIMIT_MB}",
        f"-artifact_prefix={artifacts}/{name}-",
        "-print_final_stats=1",
    ]
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    }
    started = time.monotonic()
    with log.open("wb") as out:
        proc = subprocess.run(command, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
    seconds = time.monotonic() - started
    return _result(name, log.read_bytes(), proc.returncode, seconds, log)


def _result(name: str, output: bytes, returncode: int, seconds: float, log: Path) -> Result:
    executed = _EXECUTED.findall(output)
    cause = _EXCEPTION.search(output) or _ERROR.search(output)
    summary = cause.group(1).decode(errors="replace") if cause is not None else ""
    findings = tuple(
        Finding(Path(p.decode()), _kind(Path(p.decode()).name, name), summary)
        for p in _ARTIFACT.findall(output)
    )
    return Result(name, int(executed[-1]) if executed else 0, seconds, returncode, findings, log)


def _kind(artifact: str, name: str) -> str:
    return artifact.removeprefix(f"{name}-").split("-", 1)[0]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m fuzz", description=__doc__.splitlines()[0])
    parser.add_argument("--execs", type=int, required=True, help="executions per harness")
    parser.add_argument("--artifacts", type=Path, default=ARTIFACTS, help="findings and logs")
    parser.add_argument(
        "names", nargs="*", metavar="harness", help=f"default: all of {', '.join(harnesses())}"
    )
    args = parser.parse_args(argv)
    unknown = sorted(set(args.names) - set(harnesses()))
    if unknown:
        parser.error(f"unknown harness {', '.join(unknown)}; known: {', '.join(harnesses())}")
    results = []
    for name in args.names or list(harnesses()):
        result = run(name, args.execs, args.artifacts.resolve())
        print(result.describe(), flush=True)
        results.append(result)
    total = sum(r.executions for r in results)
    bad = [r.name for r in results if not r.clean]
    where = ", ".join(bad) or "none"
    print(f"fuzz: {total} executions over {len(results)} harnesses; findings in: {where}")
    return 1 if bad else 0
