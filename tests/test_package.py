"""The package itself: `dir(krafka)`, `python -m krafka`, `krafka --version`."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import krafka
import krafka.sync
from krafka.cli import main

ROOT = Path(__file__).resolve().parents[1]


def test_dir_lists_the_lazily_imported_public_names() -> None:
    names = dir(krafka)
    assert set(krafka.__all__) <= set(names)
    assert {"Producer", "Consumer", "ShareConsumer", "AdminClient", "__version__"} <= set(names)
    assert set(krafka.sync.__all__) <= set(dir(krafka.sync))


def test_python_m_krafka_prints_the_version_the_readme_commands_and_the_cli_help() -> None:
    """With arguments it is the `krafka` command (`python -m krafka --version`)."""
    done = subprocess.run([sys.executable, "-m", "krafka"], capture_output=True, text=True,
                          cwd=ROOT, check=True)  # fmt: skip
    assert done.stdout.startswith(f"krafka {krafka.__version__}: ")
    assert "python -m krafka.demo" in done.stdout and "python -m pytest" in done.stdout
    assert "usage: krafka" in done.stdout and "segment" in done.stdout


def test_cli_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out.strip() == f"krafka {krafka.__version__}"
