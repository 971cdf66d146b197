"""Benches run krafka as an installed package is: with its bytecode compiled.

pip compiles a wheel's modules to bytecode when it installs them, and the peers are installed
packages. A checkout run with `PYTHONDONTWRITEBYTECODE=1` (as on these machines) would instead
compile every krafka module from source in every fresh process it starts: each bench round,
and in Spark every planner and worker process. `compile_krafka()` writes the bytecode once
(`compileall`, skipping what is up to date), so a bench measures what users run.
"""

from __future__ import annotations

import compileall
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def compile_krafka(root: Path = ROOT) -> None:
    """Bytecode for every module of the krafka package under `root` (a checkout or a
    `--baseline` tree)."""
    compileall.compile_dir(str(root / "krafka"), quiet=1)
