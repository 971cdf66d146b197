"""Every ```python and ```console block of README.md and docs/**/*.md runs, in a subprocess with
a timeout (a hanging example fails), against a real broker, and `mkdocs build --strict` passes.

The examples say `127.0.0.1:9092` (and, for Apache Kafka's secured listeners, `127.0.0.1:9093`
for SASL_PLAINTEXT and `127.0.0.1:9094` for SSL with `ca.crt`, `client.crt` and `client.key` in
the working directory); the test puts the live broker's addresses and files there. A Markdown
comment on the line before a block says how it runs:

- none: on Tansu (the default suite), and on Apache Kafka in the slow run;
- `<!-- kafka: why -->`: on Apache Kafka only (share groups, KIP-848, SASL, TLS, admin APIs
  Tansu lacks), in the default suite;
- `<!-- slow: why -->`: on Apache Kafka in the slow run only (a Spark session, a cluster of its
  own);
- `<!-- norun: why -->`: never run (it needs AWS, a proxy or a cluster we do not have); the
  reason is listed in the test's id and a Python block must still compile.

The README's blocks that run on Tansu or Apache Kafka (a new user's first steps: producer,
consumer, groups, CLI) also run on librdkafka's mock cluster, each on a fresh
`python -m krafka.testing mock` (the mock keeps a group once it existed and then refuses
other clients' commits to it, so examples sharing a group name would depend on their order),
four at a time, in the default suite. A `<!-- nomock: why -->` line (alone, or beside one of
the markers above) keeps a block off the mock: a feature it lacks (admin APIs, ListGroups,
DescribeGroups), with the reason in the test's id.

The Tansu examples run four at a time (different topics and groups each). A console block's
`$ ` lines (with their `\\` continuations) run in bash with `set -e`; the
lines between them are sample output and are not compared.
"""

from __future__ import annotations

import enum
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCES = (ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md")))
PLAINTEXT = "127.0.0.1:9092"
SASL_PLAINTEXT = "127.0.0.1:9093"
SSL = "127.0.0.1:9094"
TIMEOUT = 90.0

_FENCE = re.compile(r"^(?P<indent>\s*)```(?P<lang>[\w-]*)")
_MARKER = re.compile(r"^\s*<!--\s*(?P<mode>norun|kafka|slow)\s*:\s*(?P<why>.*?)\s*-->\s*$")
_NOMOCK = re.compile(r"^\s*<!--\s*nomock\s*:\s*(?P<why>.*?)\s*-->\s*$")
#: The page whose runnable blocks also run on librdkafka's mock cluster.
MOCK_SOURCE = "README.md"


class Mode(enum.Enum):
    TANSU = "tansu"
    KAFKA = "kafka"
    SLOW = "slow"
    NORUN = "norun"


@dataclass(frozen=True, slots=True)
class Example:
    """One fenced block of the documentation and how it runs."""

    source: str
    line: int
    language: str
    code: str
    mode: Mode
    why: str
    #: Why the block does not run on librdkafka's mock cluster ("": it does, if in MOCK_SOURCE).
    nomock: str = ""

    @property
    def name(self) -> str:
        return f"{self.source}:{self.line}"

    @property
    def runs_on_mock(self) -> bool:
        return (
            self.source == MOCK_SOURCE and self.mode in (Mode.TANSU, Mode.KAFKA) and not self.nomock
        )


def _blocks(path: Path) -> Iterator[Example]:
    lines = path.read_text().splitlines()
    source = str(path.relative_to(ROOT))
    mode, why, nomock, index = Mode.TANSU, "", "", 0
    while index < len(lines):
        line = lines[index]
        marker = _MARKER.match(line)
        no_mock = _NOMOCK.match(line)
        fence = _FENCE.match(line)
        if marker:
            mode, why = Mode(marker["mode"]), marker["why"]
        elif no_mock:
            nomock = no_mock["why"]
        elif fence:
            indent, lang = fence["indent"], fence["lang"]
            end = index + 1
            while not lines[end].strip().startswith("```"):
                end += 1
            body = "\n".join(text.removeprefix(indent) for text in lines[index + 1 : end])
            if lang in ("python", "console"):
                yield Example(source, index + 1, lang, body + "\n", mode, why, nomock)
            elif mode is not Mode.TANSU or nomock:
                raise ValueError(f"{source}:{index + 1}: a marker before a ```{lang} block")
            mode, why, nomock, index = Mode.TANSU, "", "", end
        elif line.strip() and (mode is not Mode.TANSU or nomock):
            raise ValueError(f"{source}:{index + 1}: a marker not followed by a block")
        index += 1


EXAMPLES = [example for path in SOURCES for example in _blocks(path)]


def _params(*modes: Mode, slow: bool = False) -> list[Any]:
    marks = [pytest.mark.slow] if slow else []
    return [
        pytest.param(example, id=_id(example), marks=marks)
        for example in EXAMPLES
        if example.mode in modes
    ]


def _id(example: Example) -> str:
    return f"{example.name} ({example.why})" if example.mode is Mode.NORUN else example.name


def _console_script(code: str) -> str:
    """The `$ ` commands of a console block, continuations joined, as a bash script."""
    commands: list[str] = []
    continued = False
    for line in code.splitlines():
        if continued:
            commands[-1] += "\n" + line
        elif line.startswith("$ "):
            commands.append(line[2:])
        else:
            continue
        continued = line.rstrip().endswith("\\")
    prelude = [
        "set -euo pipefail",
        f'krafka() {{ "{sys.executable}" -m krafka "$@"; }}',
        f'python() {{ "{sys.executable}" "$@"; }}',
    ]
    return "\n".join([*prelude, *commands]) + "\n"


def _run(example: Example, cwd: Path, addresses: dict[str, str], timeout: float = TIMEOUT) -> None:
    """Run `example` in `cwd` with the addresses put in; fails when it exits non-zero or
    has not finished within `timeout` (then everything it started is killed)."""
    code = example.code
    for placeholder, address in addresses.items():
        code = code.replace(placeholder, address)
    if example.language == "python":
        (cwd / "example.py").write_text(code)
        argv = [sys.executable, "example.py"]
    else:
        (cwd / "example.sh").write_text(_console_script(code))
        argv = ["bash", "example.sh"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), _pythonpath()]))}
    env.pop("KRAFKA_BOOTSTRAP_SERVERS", None)
    with subprocess.Popen(
        argv,
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group: a hang is killed whole
    ) as process:
        try:
            stdout, stderr = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            stdout, stderr = process.communicate()
            pytest.fail(
                f"{example.name} did not finish within {timeout} s:\n--- stdout\n"
                f"{stdout[-3000:]}\n--- stderr\n{stderr[-3000:]}"
            )
    if process.returncode != 0:
        pytest.fail(
            f"{example.name} exited {process.returncode}:\n--- code\n{code}\n--- stdout\n"
            f"{stdout[-3000:]}\n--- stderr\n{stderr[-3000:]}"
        )


def _pythonpath() -> str:
    return os.environ.get("PYTHONPATH", "")


def _kafka_addresses(kafka: Any, cwd: Path) -> dict[str, str]:
    """Apache Kafka's listeners for the placeholders, its TLS files in the working directory."""
    tls = kafka.tls
    shutil.copy(tls.ca, cwd / "ca.crt")
    shutil.copy(tls.client_cert, cwd / "client.crt")
    shutil.copy(tls.client_key, cwd / "client.key")
    return {
        PLAINTEXT: kafka.bootstrap_servers,
        SASL_PLAINTEXT: kafka.bootstrap_for("SASL_PLAINTEXT"),
        SSL: kafka.bootstrap_for("SSL"),
    }


@pytest.fixture(scope="module")
def tansu_outcomes(
    request: pytest.FixtureRequest, tansu: Any, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, str | None]:
    """The selected Tansu examples, four at a time (most of their time is spent waiting on
    the broker: group joins, polls): each one's failure, or None."""
    chosen = [
        item.callspec.params["example"]
        for item in request.session.items
        if item.name.startswith("test_example_runs_on_tansu[")
    ]
    places = {example.name: tmp_path_factory.mktemp("example") for example in chosen}

    def outcome(example: Example) -> str | None:
        try:
            _run(example, places[example.name], {PLAINTEXT: tansu.bootstrap_servers})
        except pytest.fail.Exception as exc:
            return str(exc)
        return None

    with ThreadPoolExecutor(4) as pool:
        return dict(zip(places, pool.map(outcome, chosen), strict=True))


@pytest.mark.parametrize("example", _params(Mode.TANSU))
def test_example_runs_on_tansu(example: Example, tansu_outcomes: dict[str, str | None]) -> None:
    failure = tansu_outcomes[example.name]
    if failure is not None:
        pytest.fail(failure, pytrace=False)


@pytest.mark.parametrize("example", _params(Mode.KAFKA) + _params(Mode.TANSU, Mode.SLOW, slow=True))
def test_example_runs_on_kafka(example: Example, kafka: Any, tmp_path: Path) -> None:
    _run(example, tmp_path, _kafka_addresses(kafka, tmp_path))


@contextmanager
def _foreground_mock() -> Iterator[str]:
    """`python -m krafka.testing mock`, as a new user starts it: its bootstrap servers."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), _pythonpath()]))}
    with subprocess.Popen(
        [sys.executable, "-m", "krafka.testing", "mock"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    ) as process:
        try:
            assert process.stdout is not None
            bootstrap = next(
                (line for line in process.stdout if line.startswith("bootstrap_servers=")), ""
            )
            assert bootstrap, "python -m krafka.testing mock printed no bootstrap_servers= line"
            yield bootstrap.strip().split("=", 1)[1]
        finally:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
            process.wait(30)


@pytest.fixture(scope="module")
def mock_outcomes(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, str | None]:
    """The selected mock-cluster examples, four at a time, each on a mock of its own: each
    one's failure, or None."""
    chosen = [
        item.callspec.params["example"]
        for item in request.session.items
        if item.name.startswith("test_example_runs_on_the_mock_cluster[")
    ]
    places = {example.name: tmp_path_factory.mktemp("example") for example in chosen}

    def outcome(example: Example) -> str | None:
        try:
            with _foreground_mock() as bootstrap:
                _run(example, places[example.name], {PLAINTEXT: bootstrap})
        except pytest.fail.Exception as exc:
            return str(exc)
        return None

    with ThreadPoolExecutor(4) as pool:
        return dict(zip(places, pool.map(outcome, chosen), strict=True))


@pytest.mark.parametrize(
    "example",
    [pytest.param(example, id=example.name) for example in EXAMPLES if example.runs_on_mock],
)
def test_example_runs_on_the_mock_cluster(
    example: Example, mock_outcomes: dict[str, str | None]
) -> None:
    failure = mock_outcomes[example.name]
    if failure is not None:
        pytest.fail(failure, pytrace=False)


@pytest.mark.parametrize(
    "example",
    [
        pytest.param(example, id=f"{example.name} ({example.nomock})")
        for example in EXAMPLES
        if example.nomock
    ],
)
def test_a_block_kept_off_the_mock_cluster_is_a_readme_one_and_says_why(example: Example) -> None:
    assert example.source == MOCK_SOURCE, "only the README's blocks run on the mock cluster"
    assert example.mode in (Mode.TANSU, Mode.KAFKA), "the block would not run on the mock anyway"


def test_the_getting_started_path_runs_on_the_mock_cluster() -> None:
    """The README's producer, consumer, group and CLI examples are among the mock's."""
    on_mock = [example for example in EXAMPLES if example.runs_on_mock]
    codes = [example.code for example in on_mock]
    assert any("Producer(" in code and "send_and_wait" in code for code in codes)
    assert any("subscribe(" in code and "group_id=" in code for code in codes)
    assert any(
        example.language == "console" and "krafka consume" in example.code for example in on_mock
    )


@pytest.mark.parametrize("example", _params(Mode.NORUN))
def test_unrunnable_example_says_why_and_compiles(example: Example) -> None:
    assert example.why, f"{example.name}: a norun block must say why"
    if example.language == "python":
        compile(example.code, example.name, "exec")


def test_every_page_has_examples_found() -> None:
    sources = {example.source for example in EXAMPLES}
    assert "README.md" in sources
    assert len(EXAMPLES) >= 10


@pytest.mark.timeout(120)
def test_docs_site_builds_strict(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=110,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert done.returncode == 0, done.stderr[-5000:]


def test_a_hanging_example_fails_and_is_killed_whole(tmp_path: Path) -> None:
    marker = tmp_path / "still-running"
    example = Example(
        "test", 1, "console", f"$ (sleep 1; touch {marker}) &\n$ sleep 30\n", Mode.TANSU, ""
    )
    with pytest.raises(pytest.fail.Exception, match=r"did not finish within 0\.5 s"):
        _run(example, tmp_path, {}, timeout=0.5)
    time.sleep(1.5)
    assert not marker.exists(), "a process the example started outlived it"
