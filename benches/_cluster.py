"""The broker a bench runs against (`--cluster tansu|kafka`), its CPU, topics, and the Java
client's command line.

`kafka` is one Apache Kafka node (`krafka.testing.KafkaCluster`, full JIT: `quick_start=False`);
`tansu` the embedded Tansu broker (`krafka.testing.LocalBroker`). The broker shares the machine's
cores with the clients, so every figure carries the broker's CPU seconds during the run
(`/proc/PID/stat`, all its threads).
"""

from __future__ import annotations

import contextlib
import os
import resource
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

CLUSTERS = ("tansu", "kafka")
JAVA_DIR = Path(__file__).resolve().parent / "java"


@dataclass(frozen=True, slots=True)
class Broker:
    """A running broker: where clients connect, which process to charge its CPU to."""

    kind: str
    bootstrap: str
    pid: int

    def cpu(self) -> float:
        """CPU seconds the broker process has used so far (user + system, every thread)."""
        return process_cpu(self.pid)


def process_cpu(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    utime, stime = int(fields[11]), int(fields[12])
    return (utime + stime) / os.sysconf("SC_CLK_TCK")


def children_cpu() -> float:
    """CPU seconds of every waited-for child process tree so far (a JVM's included)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


@contextlib.contextmanager
def broker(kind: str) -> Iterator[Broker]:
    if kind == "kafka":
        from krafka.testing import KafkaCluster

        with KafkaCluster(quick_start=False, heap="1g") as cluster:
            pid = cluster.nodes[0].pid
            assert pid is not None
            yield Broker(kind, cluster.bootstrap_servers, pid)
    elif kind == "tansu":
        from krafka.testing import LocalBroker

        with LocalBroker() as tansu:
            assert tansu.pid is not None
            yield Broker(kind, tansu.bootstrap_servers, tansu.pid)
    else:
        raise SystemExit(f"--cluster is one of {', '.join(CLUSTERS)}")


def create_topic(bootstrap: str, name: str, partitions: int) -> None:
    """Create `name` and wait until every partition has a leader."""
    import anyio

    from krafka import AdminClient, NewTopic

    async def run() -> None:
        async with AdminClient(bootstrap_servers=bootstrap) as admin:
            await admin.create_topics([NewTopic(name, num_partitions=partitions)])
            for _ in range(100):
                described = (await admin.describe_topics([name])).succeeded.get(name)
                if described is not None and all(
                    p.leader is not None and p.leader >= 0 for p in described.partitions
                ):
                    return
                await anyio.sleep(0.1)
            raise RuntimeError(f"{name}: partitions without a leader")

    anyio.run(run)


def java(main_class: str, *args: str, classes: Path | None = None) -> list[str]:
    """A command running `main_class` on Kafka's jars (plus `classes`) with the JVM's default
    JIT (C2), a 512 MB heap and log4j at WARN."""
    from krafka.testing.runtime import classpath_argument, require_tool

    classpath = classpath_argument()
    if classes is not None:
        classpath = f"{classes}{os.pathsep}{classpath}"
    log4j = JAVA_DIR / "log4j2.properties"
    return [
        require_tool("java", f"run {main_class}"), "-Xmx512m",
        f"-Dlog4j2.configurationFile={log4j}", "-cp", classpath, main_class, *args,
    ]  # fmt: skip


def run_java(command: list[str], timeout: float = 600.0) -> tuple[str, float]:
    """(stdout, CPU seconds of the JVM's process tree) of one run."""
    before = children_cpu()
    done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    cpu = children_cpu() - before
    if done.returncode != 0:
        raise RuntimeError(f"{command[-1]}: {done.stderr[-2000:]}")
    return done.stdout, cpu


def bench_classes() -> Path:
    """`benches/java/KrafkaBench.java` compiled against Kafka's jars (cached by its hash)."""
    from krafka.testing.runtime import compile_java

    return compile_java(JAVA_DIR / "KrafkaBench.java")
