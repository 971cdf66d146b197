"""krafka.testing's Apache Kafka: starting, every listener, node faults, logs, the command line."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import anyio
import pytest

from krafka import Consumer, Producer, TopicPartition
from krafka.errors import AuthenticationError, KrafkaError
from krafka.testing.kafka import KafkaCluster
from krafka.testing.runtime import KafkaUnavailable, kafka_classpath, require_tool

pytestmark = [pytest.mark.timeout(180)]


def _roundtrip(config: dict[str, object], topic: str) -> list[bytes | None]:
    async def run() -> list[bytes | None]:
        async with Producer.from_config(config) as producer:
            meta = await producer.send_and_wait(topic, b"v", key=b"k")
        consumer_config = {**config, "auto.offset.reset": "earliest"}
        async with Consumer.from_config(consumer_config) as consumer:
            await consumer.assign([TopicPartition(topic, meta.partition)])
            return [r.value for r in await consumer.poll(timeout=10)]

    return anyio.run(run)


def _sasl(cluster: KafkaCluster, mechanism: str, user: str = "alice") -> dict[str, object]:
    return {
        "bootstrap.servers": cluster.bootstrap_for("SASL_PLAINTEXT"),
        "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanism": mechanism,
        "sasl.username": user,
        "sasl.password": cluster.users[user],
    }


def test_the_runtime_is_cached_and_names_its_jars() -> None:
    jars = kafka_classpath()
    names = {p.name for p in jars.glob("*.jar")}
    assert {"kafka_2.13-4.4.0.jar", "kafka-clients-4.4.0.jar", "kafka-tools-4.4.0.jar"} <= names
    assert kafka_classpath() == jars  # second call: the cache, no Maven


def test_a_missing_tool_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.delenv("JAVA_HOME", raising=False)
    with pytest.raises(KafkaUnavailable, match="'mvn' is not installed"):
        require_tool("mvn", "download jars")


@pytest.mark.parametrize("mechanism", ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_every_sasl_mechanism_of_the_sasl_listener(
    kafka_cluster: KafkaCluster, mechanism: str
) -> None:
    config = _sasl(kafka_cluster, mechanism)
    if mechanism == "PLAIN":
        config["security.protocol"] = "SASL_SSL"
        config["bootstrap.servers"] = kafka_cluster.bootstrap_for("SASL_SSL")
        config["ssl.ca.location"] = str(kafka_cluster.tls.ca)  # type: ignore[union-attr]
    assert _roundtrip(config, f"kt-{mechanism.lower()}") == [b"v"]


def test_oauthbearer_unsecured_jwt(kafka_cluster: KafkaCluster) -> None:
    config: dict[str, object] = {
        "bootstrap.servers": kafka_cluster.bootstrap_for("SASL_PLAINTEXT"),
        "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanism": "OAUTHBEARER",
        "enable.sasl.oauthbearer.unsecure.jwt": True,
        "sasl.oauthbearer.config": "principal=alice",
    }
    assert _roundtrip(config, "kt-oauth") == [b"v"]


def test_a_wrong_password_is_refused(kafka_cluster: KafkaCluster) -> None:
    config = {**_sasl(kafka_cluster, "SCRAM-SHA-512"), "sasl.password": "wrong"}
    with pytest.raises(AuthenticationError):
        _roundtrip(config, "kt-wrong-password")


def test_mutual_tls_listener(kafka_cluster: KafkaCluster) -> None:
    tls = kafka_cluster.tls
    assert tls is not None
    config: dict[str, object] = {
        "bootstrap.servers": kafka_cluster.bootstrap_for("SSL"),
        "security.protocol": "SSL",
        "ssl.ca.location": str(tls.ca),
        "ssl.certificate.location": str(tls.client_cert),
        "ssl.key.location": str(tls.client_key),
    }
    assert _roundtrip(config, "kt-mtls") == [b"v"]
    del config["ssl.certificate.location"], config["ssl.key.location"]
    with pytest.raises(KrafkaError):
        _roundtrip(config, "kt-mtls-nocert")


def test_three_nodes_survive_a_killed_node_and_take_it_back(
    kafka_cluster_factory: Callable[..., KafkaCluster],
) -> None:
    cluster = kafka_cluster_factory(3, fresh_cluster=True, racks=True)
    assert [n.rack for n in cluster.nodes] == ["rack-1", "rack-2", "rack-3"]
    config = {"bootstrap.servers": cluster.bootstrap_servers}
    assert _roundtrip(config, "kt-three") == [b"v"]
    cluster.kill(3)
    assert not cluster.node(3).running
    assert _roundtrip(config, "kt-three-degraded") == [b"v"]
    cluster.start_node(3)
    assert cluster.node(3).running
    cluster.pause(2)
    cluster.resume(2)
    cluster.wait_ready()


def test_a_node_log_is_kept_and_tools_run(kafka_cluster: KafkaCluster) -> None:
    assert _roundtrip({"bootstrap.servers": kafka_cluster.bootstrap_servers}, "kt-dump") == [b"v"]
    assert kafka_cluster.node(1).log_file.parent.is_dir()
    partition = kafka_cluster.partition_directory(1, "kt-dump", 0)
    deadline = time.monotonic() + 30
    while not any(partition.glob("*.log")) and time.monotonic() < deadline:
        time.sleep(0.1)
    (segment,) = sorted(partition.glob("*.log"))
    dump = kafka_cluster.java("org.apache.kafka.tools.DumpLogSegments", "--files", str(segment))
    assert "baseOffset: 0" in dump


def test_python_m_krafka_testing_runs_until_sigterm_and_leaves_nothing(tmp_path: Path) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "krafka.testing", "kafka"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    bootstrap = None
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            if line.startswith("bootstrap_servers="):
                bootstrap = line.strip().split("=", 1)[1]
                break
        assert bootstrap, "no bootstrap line printed"
        assert _roundtrip({"bootstrap.servers": bootstrap}, "kt-main") == [b"v"]
        children = _children(proc.pid)
        assert children, "the broker runs as a child process"
        os.kill(proc.pid, signal.SIGTERM)
        assert proc.wait(60) == 0
        assert not [pid for pid in children if _alive(pid)]
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def _children(pid: int) -> list[int]:
    out = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout
    return [int(p) for p in out.split()]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return stat.is_file() and stat.read_text().split()[2] != "Z"


def test_tansu_from_the_command_line_stops_on_sigterm() -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "krafka.testing", "tansu"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            if line.startswith("bootstrap_servers="):
                break
        children = _children(proc.pid)
        assert children
        os.kill(proc.pid, signal.SIGTERM)
        assert proc.wait(30) == 0
        assert not [pid for pid in children if _alive(pid)]
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
