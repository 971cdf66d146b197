"""`krafka topics ...` and `krafka cluster describe` as subprocesses against Apache Kafka and
Tansu; the global options (command-config files, the environment, errors as one red line)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from _cli import assert_one_error_line, run_cli
from _members import is_kafka, unique

pytestmark = [pytest.mark.broker, pytest.mark.timeout(120)]


def test_create_list_describe_alter_delete(broker: Any) -> None:
    b = broker.bootstrap_servers
    topic = unique("cli-topic")
    created = run_cli("-b", b, "topics", "create", topic, "--partitions", "3",
                      "--config", "retention.ms=60000")  # fmt: skip
    assert created.returncode == 0, created
    assert created.stderr.strip() == f"Created topic {topic}."

    listed = run_cli("--bootstrap-server", b, "topics", "list", "--json")
    assert {"topic": topic, "partitions": 3, "replication_factor": 1} in listed.json()
    table = run_cli("topics", "list", "--bootstrap-server", b)  # options after the command too
    assert table.lines[0].split() == ["TOPIC", "PARTITIONS", "REPLICATION-FACTOR"]
    assert [topic, "3", "1"] in [line.split() for line in table.lines]

    described = run_cli("-b", b, "topics", "describe", topic, "--json").json()
    assert described["topic"] == topic and described["topic_id"]
    assert [p["partition"] for p in described["partitions"]] == [0, 1, 2]
    assert all(p["leader"] is not None and p["isr"] for p in described["partitions"])
    text = run_cli("-b", b, "topics", "describe", topic).lines
    assert text[0] == f"Topic: {topic}" and "PartitionCount: 3" in text
    assert text[5].split() == ["PARTITION", "LEADER", "REPLICAS", "ISR", "OFFLINE"]
    assert len(text) == 9

    altered = run_cli("-b", b, "topics", "alter-config", topic, "--set", "retention.ms=1234",
                      "--set", "max.message.bytes=2048")  # fmt: skip
    assert altered.returncode == 0, altered
    configs = run_cli("-b", b, "topics", "describe", topic, "--all-configs", "--json").json()
    assert configs["configs"]["retention.ms"] == "1234"  # Tansu labels its values "default":
    assert configs["configs"]["max.message.bytes"] == "2048"  # --all-configs shows them
    run_cli("-b", b, "topics", "alter-config", topic, "--delete", "max.message.bytes")
    configs = run_cli("-b", b, "topics", "describe", topic, "--all-configs", "--json").json()
    own = run_cli("-b", b, "topics", "describe", topic, "--json").json()["configs"]
    if is_kafka(broker):  # every config, the deleted one back to the broker's default
        assert configs["configs"]["max.message.bytes"] == "1048588"
        assert own == {"retention.ms": "1234"}
    else:  # Tansu lists only the configs set on the topic, all labelled default
        assert "max.message.bytes" not in configs["configs"] and own == {}

    again = run_cli("-b", b, "topics", "create", topic, "--partitions", "1")
    assert_one_error_line(again, "TOPIC_ALREADY_EXISTS")
    assert run_cli("-b", b, "topics", "create", topic, "--if-not-exists").returncode == 0

    deleted = run_cli("-b", b, "topics", "delete", topic)
    assert deleted.returncode == 0 and deleted.stderr.strip() == f"Deleted topic {topic}."
    assert topic not in [t["topic"] for t in run_cli("-b", b, "topics", "list", "--json").json()]
    assert_one_error_line(run_cli("-b", b, "topics", "delete", topic), "UNKNOWN_TOPIC")
    assert_one_error_line(run_cli("-b", b, "topics", "alter-config", topic), "nothing to change")


def test_cluster_describe(broker: Any) -> None:
    described = run_cli("-b", broker.bootstrap_servers, "cluster", "describe", "--json").json()
    (node,) = described["brokers"]
    assert node["port"] == broker.port and node["host"] == "127.0.0.1"
    assert described["controller"] == node["id"]
    text = run_cli("-b", broker.bootstrap_servers, "cluster", "describe").lines
    assert text[0].startswith("Cluster: ")
    assert text[2].split() == ["ID", "HOST", "PORT", "RACK", "ROLE"]
    assert text[3].split() == [str(node["id"]), "127.0.0.1", str(broker.port), "-", "controller"]


def test_command_config_file(broker: Any, tmp_path: Path) -> None:
    props = tmp_path / "client.properties"
    props.write_text(
        f"# a Java client.properties\nbootstrap.servers={broker.bootstrap_servers}\n"
        "client.id=ops-tool\nsecurity.protocol=PLAINTEXT\nlinger.ms=5\n"  # a producer's: ignored
    )
    listed = run_cli("--command-config", str(props), "topics", "list", "--json")
    assert listed.returncode == 0, listed
    props.write_text(f"bootstrap.servers={broker.bootstrap_servers}\nsasl.mechanizm=PLAIN\n")
    assert_one_error_line(
        run_cli("--command-config", str(props), "topics", "list"), "sasl.mechanizm"
    )
    assert_one_error_line(
        run_cli("--command-config", str(tmp_path / "nope"), "topics", "list"), "cannot read"
    )


def test_errors_are_one_red_line_and_debug_shows_the_traceback() -> None:
    unreachable = run_cli("-b", "127.0.0.1:1", "--timeout", "5", "topics", "list")
    assert_one_error_line(unreachable, "no broker reachable")
    debug = run_cli("-b", "127.0.0.1:1", "--timeout", "5", "--debug", "topics", "list")
    assert debug.returncode == 1 and "Traceback" in debug.stderr
    assert_one_error_line(run_cli("topics", "list"), "--bootstrap-server")
    usage = run_cli("topics", "create")
    assert usage.returncode == 2 and "NAME" in usage.stderr
