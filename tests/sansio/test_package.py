"""`krafka.sansio` is the embedder's API: every public name imports, and no module of it
brings I/O, threads or a clock of its own."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

import krafka.sansio
from krafka.errors import KafkaTimeoutError

SANSIO = Path(krafka.sansio.__file__).parent
#: What a sans-IO module must never import (the embedder owns I/O, threads and the clock).
FORBIDDEN = {"anyio", "asyncio", "trio", "socket", "ssl", "selectors", "threading", "time"}


def test_every_public_name_imports_and_is_listed_by_dir() -> None:
    for name in krafka.sansio.__all__:
        assert getattr(krafka.sansio, name) is not None, name
    assert set(krafka.sansio.__all__) <= set(dir(krafka.sansio))


def test_the_guide_names_the_core_and_the_engines() -> None:
    guide = krafka.sansio.__doc__ or ""
    for name in ("ClientCore", "ConsumerEngine", "next_deadline", "connections_wanted"):
        assert name in guide


def imported_roots(source: str) -> set[str]:
    roots = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            roots |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            roots.add(node.module.split(".")[0])
    return roots


def test_no_sansio_module_imports_io_threads_or_a_clock() -> None:
    offenders = {}
    for path in SANSIO.rglob("*.py"):
        bad = imported_roots(path.read_text()) & FORBIDDEN
        if bad:
            offenders[str(path.relative_to(SANSIO))] = bad
    pyx_import = re.compile(r"^\s*(?:c?import|from)\s+(\w+)", re.MULTILINE)
    for path in SANSIO.rglob("*.pyx"):
        bad = set(pyx_import.findall(path.read_text())) & FORBIDDEN
        if bad:
            offenders[str(path.relative_to(SANSIO))] = bad
    assert offenders == {}


def test_importing_all_of_sansio_loads_no_event_loop_library() -> None:
    script = (
        "import importlib, pkgutil, sys\n"
        "import krafka.sansio as s\n"
        "for m in pkgutil.walk_packages(s.__path__, 'krafka.sansio.'):\n"
        "    importlib.import_module(m.name)\n"
        "for name in s.__all__:\n"
        "    getattr(s, name)\n"
        "print(sorted(n for n in ('anyio', 'asyncio', 'trio') if n in sys.modules))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"


def test_an_outcome_gives_its_value_or_raises_its_error_with_one_call() -> None:
    assert krafka.sansio.Completed(1, "value").result() == "value"
    with pytest.raises(KafkaTimeoutError):
        krafka.sansio.Failed(2, KafkaTimeoutError("late")).result()


def test_create_topics_is_an_admin_operation_for_the_core() -> None:
    operation = krafka.sansio.create_topics([krafka.sansio.NewTopic("t", 2)], timeout=5.0)
    assert isinstance(operation, krafka.sansio.AdminOperation)
    with pytest.raises(ValueError, match="listed twice"):
        krafka.sansio.create_topics(
            [krafka.sansio.NewTopic("t"), krafka.sansio.NewTopic("t")], timeout=5.0
        )


def test_the_guide_points_to_the_selectors_example() -> None:
    assert "examples/sansio_selectors.py" in (krafka.sansio.__doc__ or "")
