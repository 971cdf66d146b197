"""Interactive paths in a real terminal (tmux): `lag --watch` redraws as the group moves and
stops cleanly on Ctrl-C; `produce --file` shows its progress bar."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _cli import run_cli
from _members import produce, unique
from _tmux import Terminal, krafka_command

pytestmark = [pytest.mark.broker, pytest.mark.timeout(120)]


@pytest.fixture
def terminals() -> Iterator[list[Terminal]]:
    made: list[Terminal] = []
    yield made
    for terminal in made:
        terminal.close()


def _commit(bootstrap: str, group: str, topic: str, offset: int) -> None:
    import confluent_kafka

    consumer = confluent_kafka.Consumer({"bootstrap.servers": bootstrap, "group.id": group})
    consumer.commit(offsets=[confluent_kafka.TopicPartition(topic, 0, offset)],
                    asynchronous=False)  # fmt: skip
    consumer.close()


def _row(screen: str, topic: str) -> list[str] | None:
    rows = [line.split() for line in screen.splitlines() if line.startswith(topic)]
    return rows[0] if rows else None


def test_lag_watch_redraws_and_stops_on_ctrl_c(broker: Any, terminals: list[Terminal]) -> None:
    b, topic, group = broker.bootstrap_servers, unique("cli-watch"), unique("cli-watch-g")
    run_cli("-b", b, "topics", "create", topic, "--partitions", "1")
    for _ in range(5):  # one record per batch: Tansu's latest offset is right for those
        produce(b, topic, {0: 1})
    _commit(b, group, topic, 2)
    terminal = Terminal(krafka_command("-b", b, "lag", group, "--watch", "--interval", "0.3"))
    terminals.append(terminal)
    screen = terminal.wait_for(lambda s: _row(s, topic) == [topic, "0", "2", "5", "3"])
    assert "CURRENT-OFFSET" in screen and f"Group {group}" in screen
    _commit(b, group, topic, 4)
    terminal.wait_for(lambda s: _row(s, topic) == [topic, "0", "4", "5", "1"])
    terminal.keys("C-c")
    screen = terminal.wait_for(lambda s: "EXIT=" in s)
    assert "EXIT=0" in screen and "Traceback" not in screen
    assert screen.count("LOG-END-OFFSET") == 1  # redrawn in place, not appended


def test_produce_file_shows_progress(
    broker: Any, terminals: list[Terminal], tmp_path: Path
) -> None:
    topic = unique("cli-progress")
    path = tmp_path / "lines.txt"
    path.write_bytes(b"".join(b"record %d\n" % i for i in range(100_000)))
    terminal = Terminal(krafka_command("-b", broker.bootstrap_servers, "produce", topic,
                                       "--file", str(path)))  # fmt: skip
    terminals.append(terminal)
    screen = terminal.wait_for(lambda s: "EXIT=" in s, timeout=60)
    assert "EXIT=0" in screen, screen
    assert "100,000 records" in screen and "records/s" in screen and "100%" in screen
    assert f"Produced 100000 records to {topic}" in screen
