"""`examples/sansio_selectors.py`, the embedding example: against each broker it produces,
consumes and commits 1,000 records, sleeping on the core's deadline (a bounded number of loop
turns), in at most 100 lines of code, importing nothing but the standard library and krafka's
sans-IO packages."""

from __future__ import annotations

import ast
import io
import json
import subprocess
import sys
import time
import tokenize
from pathlib import Path
from typing import Any

import pytest

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "sansio_selectors.py"
#: The krafka packages an embedder needs; everything else of krafka brings I/O or a runtime.
ALLOWED_KRAFKA = {"sansio", "protocol", "codec", "errors", "structs"}
#: Loaded by none of them (the loop is the embedder's: no event-loop library, no krafka.io).
FORBIDDEN_MODULES = ("anyio", "trio", "asyncio", "krafka.io", "krafka.sync", "krafka.testing")
FORBIDDEN = set(FORBIDDEN_MODULES)
PACKAGES = tuple(f"{name}." for name in FORBIDDEN_MODULES)
#: Runs the example, then reports every module it loaded on stderr's last line.
RUNNER = (
    "import json, runpy, sys\n"
    "sys.argv = sys.argv[1:]\n"
    "runpy.run_path(sys.argv[0], run_name='__main__')\n"
    "print(json.dumps(sorted(sys.modules)), file=sys.stderr)\n"
)


def code_lines(source: str) -> int:
    """Lines holding code: not the module docstring, comments or blank lines."""
    docstring = ast.parse(source).body[0]
    skipped = set(range(docstring.lineno, (docstring.end_lineno or docstring.lineno) + 1))
    layout = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT}
    lines: set[int] = set()
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type not in layout and token.type != tokenize.ENDMARKER:
            lines |= set(range(token.start[0], token.end[0] + 1)) - skipped
    return len(lines)


def imported(source: str) -> set[str]:
    """Every module the source imports, dotted (`from krafka import sansio`: krafka.sansio)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            base = node.module
            names |= {f"{base}.{alias.name}" if base == "krafka" else base for alias in node.names}
    return names


def test_the_example_has_at_most_100_lines_of_code() -> None:
    assert code_lines(EXAMPLE.read_text()) <= 100


def test_the_line_count_skips_the_docstring_comments_and_blank_lines() -> None:
    source = (
        '"""Doc.\n\nMore."""\n\n# a comment\nx = 1  # trailing\n\n'
        'def f() -> None:\n    """Counted."""\n'
    )
    assert code_lines(source) == 3


def test_the_example_imports_the_standard_library_and_krafka_sansio_only() -> None:
    outside = set()
    for name in imported(EXAMPLE.read_text()):
        root, _, rest = name.partition(".")
        if root == "krafka":
            if rest.split(".")[0] not in ALLOWED_KRAFKA:
                outside.add(name)
        elif root not in sys.stdlib_module_names:
            outside.add(name)
    assert outside == set()


@pytest.mark.broker
@pytest.mark.timeout(120)
def test_the_example_produces_consumes_and_commits_without_spinning(broker: Any) -> None:
    started = time.monotonic()
    run = subprocess.run(
        [sys.executable, "-c", RUNNER, str(EXAMPLE), broker.bootstrap_servers],
        capture_output=True,
        text=True,
        timeout=90,
    )
    elapsed = time.monotonic() - started
    assert run.returncode == 0, run.stderr[-3000:]
    *_, turns_line, last = run.stdout.splitlines()
    assert last == "produced 1000 consumed 1000 committed 1000"
    turns = int(turns_line.removeprefix("turns "))
    assert turns <= 60 + 10 * elapsed, f"{turns} loop turns in {elapsed:.1f}s: the loop spins"
    loaded = json.loads(run.stderr.splitlines()[-1])
    assert [m for m in loaded if m in FORBIDDEN or m.startswith(PACKAGES)] == []
