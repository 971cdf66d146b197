"""Apache Kafka on demand: 1 or 3 combined broker+controller KRaft nodes as subprocesses.

    with KafkaCluster() as cluster:                        # one node, PLAINTEXT
        Producer(bootstrap_servers=cluster.bootstrap_servers)

    with KafkaCluster(nodes=3, listeners=("PLAINTEXT", "SASL_PLAINTEXT", "SSL")) as cluster:
        cluster.bootstrap_for("SASL_PLAINTEXT")            # "127.0.0.1:p1,127.0.0.1:p2,..."
        cluster.kill(2); cluster.start_node(2)             # faults: kill, stop, pause, resume

The jars come from Maven Central once (`krafka.testing.runtime`). Each node listens on loopback
ports of its own: the client listeners asked for, an INTERNAL one between brokers and a
CONTROLLER one. Client listeners:

- `PLAINTEXT`;
- `SASL_PLAINTEXT` and `SASL_SSL` with PLAIN (users from `users`), SCRAM-SHA-256/512 (the same
  users, created when storage is formatted) and OAUTHBEARER (unsecured JWTs, as Kafka's
  documentation sets up for tests);
- `SSL`, requiring a client certificate (mutual TLS; the principal is the certificate's
  subject, `User:CN=client`).

The TLS listeners present `cluster.tls.server_pem` (for localhost and 127.0.0.1), unless
`listener_certificates` picks another of `TlsMaterial`'s server certificates for a listener:
`{"SSL": "wrong_host", "SASL_SSL": "expired"}` (the broken ones a client must refuse).

`advertised_ports={node_id: port}` makes a node advertise another PLAINTEXT port (a proxy in
front of it) while it listens on its own. `netns=True` (root, with `ip`) runs each node in a
network namespace of its own (`krafka.testing.netns`): clients reach node N at its own address,
`cluster.network.isolate(N)` / `heal(N)` cut and restore that link while the nodes keep talking
to each other; the namespaces go when the cluster stops.
`authorizer=True` runs StandardAuthorizer with `super_users` (brokers then talk to each other
and to the controllers over SASL PLAIN as `admin`, so an anonymous client has no rights);
`racks=True` puts node N in rack `rack-N` with the rack-aware replica selector (KIP-392);
`delegation_tokens=True` sets a token secret; `compaction=True` makes the log cleaner eager and
lets topics roll segments quickly. Groups and brokers are tuned for tests: no initial rebalance
delay, short KIP-848 and share-group heartbeats, a dead broker fenced after 3 s. `broker_config`
overrides or adds any server property; `classpath` puts more class directories or jars on the
brokers' class path (a `metric.reporters` class of the test's own).

Broker logs are kept in `directory` (`node-N/server.log`): `log_tail(node)` reads them back.
"""

from __future__ import annotations

import atexit
import base64
import contextlib
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Final

from krafka.testing.broker import free_ports
from krafka.testing.netns import NetworkLab
from krafka.testing.runtime import (
    KAFKA_VERSION,
    KafkaUnavailable,
    classpath_argument,
    require_tool,
)
from krafka.testing.tls import TlsMaterial

CLIENT_LISTENERS: Final = ("PLAINTEXT", "SASL_PLAINTEXT", "SSL", "SASL_SSL")
SASL_MECHANISMS: Final = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER")
#: The broker's own identity when brokers authenticate to each other (authorizer on).
BROKER_USER: Final = "admin"
DEFAULT_USERS: Final[Mapping[str, str]] = {
    "admin": "admin-secret",
    "alice": "alice-secret",
    "bob": "bob-secret",
}
_INTERNAL: Final = "INTERNAL"
_CONTROLLER: Final = "CONTROLLER"
_LOG4J: Final = """\
status = error
appender.file.type = File
appender.file.name = FILE
appender.file.fileName = ${sys:kafka.logs.dir}/server.log
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = WARN
rootLogger.appenderRef.file.ref = FILE
logger.controller.name = org.apache.kafka.controller
logger.controller.level = WARN
"""
_RUNNING: set[subprocess.Popen[bytes]] = set()


@atexit.register
def _stop_leftovers() -> None:
    """Nodes still running when the interpreter exits (an interrupted run) are killed."""
    for proc in list(_RUNNING):
        _kill_group(proc)


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    _RUNNING.discard(proc)
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def _cluster_id() -> str:
    """16 random bytes, base64url; never starting with "-" (the storage tool would take it for
    an option), as Kafka's own `Uuid.randomUuid` ensures."""
    while True:
        cluster_id = base64.urlsafe_b64encode(os.urandom(16)).rstrip(b"=").decode()
        if not cluster_id.startswith("-"):
            return cluster_id


def _jaas_plain(users: Mapping[str, str]) -> str:
    entries = " ".join(f'user_{name}="{password}"' for name, password in users.items())
    login = f'username="{BROKER_USER}" password="{users[BROKER_USER]}"'
    return f"org.apache.kafka.common.security.plain.PlainLoginModule required {login} {entries};"


_JAAS_SCRAM: Final = "org.apache.kafka.common.security.scram.ScramLoginModule required;"
_JAAS_OAUTH: Final = (
    "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required "
    f'unsecuredLoginStringClaim_sub="{BROKER_USER}";'
)


@dataclass
class KafkaNode:
    """One combined broker+controller process."""

    node_id: int
    directory: Path
    ports: dict[str, int]
    controller_port: int
    rack: str | None = None
    host: str = "127.0.0.1"
    internal_host: str = "127.0.0.1"
    process: subprocess.Popen[bytes] | None = field(default=None, repr=False)

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process is not None else None

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    @property
    def log_file(self) -> Path:
        return self.directory / "server.log"

    def address(self, listener: str = "PLAINTEXT") -> str:
        return f"{self.host}:{self.ports[listener]}"


class KafkaCluster:
    """Apache Kafka (KRaft) with `nodes` combined nodes on loopback; a (sync) context manager."""

    def __init__(
        self,
        nodes: int = 1,
        *,
        listeners: Sequence[str] = ("PLAINTEXT",),
        users: Mapping[str, str] | None = None,
        authorizer: bool = False,
        super_users: Iterable[str] = (),
        racks: bool = False,
        delegation_tokens: bool = False,
        compaction: bool = False,
        num_partitions: int = 1,
        port: int | None = None,
        advertised_ports: Mapping[int, int] | None = None,
        netns: bool = False,
        broker_config: Mapping[str, object] | None = None,
        listener_certificates: Mapping[str, str] | None = None,
        directory: Path | str | None = None,
        heap: str = "512m",
        quick_start: bool = True,
        jvm_options: Sequence[str] = (),
        classpath: Sequence[str | Path] = (),
        version: str = KAFKA_VERSION,
        start_timeout: float = 90.0,
    ) -> None:
        if nodes < 1:
            raise ValueError("a cluster has at least one node")
        unknown = set(listeners) - set(CLIENT_LISTENERS)
        if unknown or "PLAINTEXT" not in listeners:
            raise ValueError(
                f"listeners are {', '.join(CLIENT_LISTENERS)}, PLAINTEXT always included; "
                f"got {list(listeners)}"
            )
        self.listeners = tuple(dict.fromkeys(listeners))
        self.users = dict(users if users is not None else DEFAULT_USERS)
        self.users.setdefault(BROKER_USER, DEFAULT_USERS[BROKER_USER])
        self.authorizer = authorizer
        self.super_users = tuple(dict.fromkeys([BROKER_USER, *super_users]))
        self.racks = racks
        self.delegation_tokens = delegation_tokens
        self.compaction = compaction
        self.num_partitions = num_partitions
        self.first_port = port
        self.advertised_ports = dict(advertised_ports or {})
        self.netns = netns
        #: The nodes' namespaces and links while a `netns=True` cluster runs.
        self.network: NetworkLab | None = None
        self.broker_config = {k: str(v) for k, v in (broker_config or {}).items()}
        self.listener_certificates = dict(listener_certificates or {})
        if not set(self.listener_certificates) <= {"SSL", "SASL_SSL"} & set(self.listeners):
            raise ValueError(f"listener_certificates names no TLS listener of {self.listeners}")
        self.heap = heap
        self.quick_start = quick_start
        self.jvm_options = tuple(jvm_options)
        self.extra_classpath = tuple(str(entry) for entry in classpath)
        self.version = version
        self.start_timeout = start_timeout
        self.cluster_id = _cluster_id()
        self._own_directory = directory is None
        self.directory = Path(directory or tempfile.mkdtemp(prefix="krafka-kafka-"))
        self.tls: TlsMaterial | None = None
        per_node = len(self.listeners) + 2
        ports = iter(free_ports(per_node * nodes))
        self.nodes = [self._plan_node(i + 1, ports) for i in range(nodes)]

    # -- addresses ------------------------------------------------------------------------------

    @property
    def bootstrap_servers(self) -> str:
        """Every node's PLAINTEXT address."""
        return self.bootstrap_for("PLAINTEXT")

    @property
    def port(self) -> int:
        """The first node's PLAINTEXT port."""
        return self.nodes[0].ports["PLAINTEXT"]

    def bootstrap_for(self, listener: str) -> str:
        if listener not in self.listeners:
            raise ValueError(f"this cluster has no {listener} listener (it has {self.listeners})")
        return ",".join(node.address(listener) for node in self.nodes)

    def advertised_port(self, node: KafkaNode, listener: str = "PLAINTEXT") -> int:
        """The port a node tells clients to use: its own, or for PLAINTEXT the one given in
        `advertised_ports` (a proxy in front of the node, for network faults)."""
        if listener == "PLAINTEXT" and node.node_id in self.advertised_ports:
            return self.advertised_ports[node.node_id]
        return node.ports[listener]

    def node(self, node_id: int) -> KafkaNode:
        for node in self.nodes:
            if node.node_id == node_id:
                return node
        raise KeyError(f"no node {node_id}")

    # -- lifecycle ------------------------------------------------------------------------------

    def start(self) -> KafkaCluster:
        require_tool("java", "run Apache Kafka")
        self._classpath = os.pathsep.join([*self.extra_classpath, classpath_argument(self.version)])
        if any(name != "PLAINTEXT" and "SSL" in name for name in self.listeners):
            self.tls = TlsMaterial.create(self.directory / "tls")
        try:
            self._attach_network()
            self._format_all()
            for node in self.nodes:
                self._launch(node)
            self.wait_ready()
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        """Stop every node (SIGTERM, then SIGKILL after a grace period)."""
        for node in self.nodes:
            self._terminate(node)
        for node in self.nodes:
            self._reap(node, grace=10.0)
        network, self.network = self.network, None
        if network is not None:
            network.close()

    def close(self) -> None:
        """Stop and remove the cluster's directory if the cluster made it."""
        self.stop()
        if self._own_directory:
            shutil.rmtree(self.directory, ignore_errors=True)

    def __enter__(self) -> KafkaCluster:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc is not None:
            self.stop()  # keep the logs of a failed run
        else:
            self.close()

    # -- faults ---------------------------------------------------------------------------------

    def kill(self, node_id: int) -> None:
        """SIGKILL one node, as a crash would."""
        node = self.node(node_id)
        if node.process is not None:
            _kill_group(node.process)
            node.process = None

    def stop_node(self, node_id: int, grace: float = 30.0) -> None:
        """Shut one node down cleanly (SIGTERM: leadership moves away first)."""
        node = self.node(node_id)
        self._terminate(node)
        self._reap(node, grace)

    def start_node(self, node_id: int, wait: bool = True, *, new_port: bool = False) -> None:
        """Start a stopped or killed node again on its old ports and data; `new_port`: on
        another PLAINTEXT port, as a broker replaced behind a new address (clients that knew
        the old one reach it only through fresh metadata or a rebootstrap)."""
        node = self.node(node_id)
        if node.running:
            return
        if new_port:
            (node.ports["PLAINTEXT"],) = free_ports(1)
            config = node.directory / "server.properties"
            config.write_text(
                "".join(f"{k}={_escape(v)}\n" for k, v in self.properties(node).items())
            )
        self._launch(node)
        if wait:
            self.wait_ready()

    def pause(self, node_id: int) -> None:
        """SIGSTOP one node: it keeps its sockets but answers nothing."""
        node = self.node(node_id)
        if node.process is not None:
            os.killpg(node.process.pid, signal.SIGSTOP)

    def resume(self, node_id: int) -> None:
        node = self.node(node_id)
        if node.process is not None:
            os.killpg(node.process.pid, signal.SIGCONT)

    def wait_ready(self, timeout: float | None = None) -> None:
        """Until every running node is registered, unfenced and known to every running node."""
        deadline = time.monotonic() + (self.start_timeout if timeout is None else timeout)
        running = [node for node in self.nodes if node.running or node.process is not None]
        expected = {node.node_id for node in running}
        last: Exception | None = None
        while time.monotonic() < deadline:
            self._check_alive(running)
            try:
                if all(_brokers_seen(node.address()) >= expected for node in running):
                    return
            except OSError as exc:
                last = exc
            time.sleep(0.1)
        raise KafkaUnavailable(
            f"Apache Kafka nodes {sorted(expected)} not ready within "
            f"{self.start_timeout if timeout is None else timeout:.0f} s ({last}); "
            f"logs in {self.directory}"
        )

    def log_tail(self, node_id: int, lines: int = 40) -> str:
        """The last lines of one node's log (its WARN and ERROR lines, and the JVM's output)."""
        node = self.node(node_id)
        out: list[str] = []
        for path in (node.directory / "stdout.log", node.log_file):
            if path.is_file():
                out.extend(path.read_text(errors="replace").splitlines()[-lines:])
        return "\n".join(out)

    # -- tools ----------------------------------------------------------------------------------

    def java(self, main_class: str, *args: str, timeout: float = 120.0) -> str:
        """Run a class of Kafka's jars (`org.apache.kafka.tools.DumpLogSegments`, ...); stdout."""
        command = [
            require_tool("java", f"run {main_class}"), "-Xmx256m", "-XX:TieredStopAtLevel=1",
            f"-Dlog4j2.configurationFile={self._log4j_file()}",
            f"-Dkafka.logs.dir={self.directory}", "-cp", classpath_argument(self.version),
            main_class, *args,
        ]  # fmt: skip
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
        if done.returncode != 0:
            raise KafkaUnavailable(
                f"{main_class} failed ({done.returncode}): {done.stderr[-2000:]}"
            )
        return done.stdout

    def partition_directory(self, node_id: int, topic: str, partition: int) -> Path:
        """Where one node keeps a partition's segments."""
        return self.node(node_id).directory / "data" / f"{topic}-{partition}"

    # -- internals ------------------------------------------------------------------------------

    def _plan_node(self, node_id: int, free: Iterator[int]) -> KafkaNode:
        directory = self.directory / f"node-{node_id}"
        ports = {name: next(free) for name in (*self.listeners, _INTERNAL)}
        if self.first_port is not None:
            ports["PLAINTEXT"] = self.first_port + node_id - 1
        rack = f"rack-{node_id}" if self.racks else None
        return KafkaNode(node_id, directory, ports, next(free), rack)

    def _attach_network(self) -> None:
        if not self.netns or self.network is not None:
            return
        self.network = NetworkLab.create(node.node_id for node in self.nodes)
        for node in self.nodes:
            node.host = self.network.client_host(node.node_id)
            node.internal_host = self.network.fabric_host(node.node_id)

    def _log4j_file(self) -> Path:
        path = self.directory / "log4j2.properties"
        if not path.is_file():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(_LOG4J)
        return path

    def _protocol_of(self, listener: str) -> str:
        if listener in (_INTERNAL, _CONTROLLER):
            return "SASL_PLAINTEXT" if self.authorizer else "PLAINTEXT"
        return listener

    def properties(self, node: KafkaNode) -> dict[str, str]:
        """The server.properties of one node."""
        names = [*self.listeners, _INTERNAL]
        voters = ",".join(f"{n.node_id}@{n.internal_host}:{n.controller_port}" for n in self.nodes)
        replication = str(min(3, len(self.nodes)))
        min_isr = str(min(2, len(self.nodes)))
        props: dict[str, str] = {
            "process.roles": "broker,controller",
            "node.id": str(node.node_id),
            "controller.quorum.voters": voters,
            "controller.listener.names": _CONTROLLER,
            "inter.broker.listener.name": _INTERNAL,
            "listeners": ",".join(
                [f"{n}://{_host_of(node, n)}:{node.ports[n]}" for n in names]
                + [f"{_CONTROLLER}://{node.internal_host}:{node.controller_port}"]
            ),
            "advertised.listeners": ",".join(
                f"{n}://{_host_of(node, n)}:{self.advertised_port(node, n)}" for n in names
            ),
            "listener.security.protocol.map": ",".join(
                f"{n}:{self._protocol_of(n)}" for n in (*names, _CONTROLLER)
            ),
            "log.dirs": str(node.directory / "data"),
            "num.partitions": str(self.num_partitions),
            "default.replication.factor": replication,
            "min.insync.replicas": "1",
            "offsets.topic.replication.factor": replication,
            "offsets.topic.num.partitions": "10",
            "transaction.state.log.replication.factor": replication,
            "transaction.state.log.min.isr": min_isr,
            "transaction.state.log.num.partitions": "10",
            "share.coordinator.state.topic.replication.factor": replication,
            "share.coordinator.state.topic.min.isr": min_isr,
            "share.coordinator.state.topic.num.partitions": "10",
            "group.initial.rebalance.delay.ms": "0",
            "group.consumer.min.session.timeout.ms": "3000",
            "group.consumer.min.heartbeat.interval.ms": "250",
            "group.consumer.heartbeat.interval.ms": "500",
            "group.share.min.heartbeat.interval.ms": "250",
            "group.share.heartbeat.interval.ms": "500",
            "group.share.min.session.timeout.ms": "3000",
            "group.share.min.record.lock.duration.ms": "1000",
            "auto.create.topics.enable": "true",
            "broker.heartbeat.interval.ms": "500",
            "broker.session.timeout.ms": "3000",
            "log.initial.task.delay.ms": "100",
            "log.retention.check.interval.ms": "1000",
            "transaction.abort.timed.out.transaction.cleanup.interval.ms": "2000",
            "transaction.remove.expired.transaction.cleanup.interval.ms": "3000",
            "unstable.api.versions.enable": "false",
        }
        props.update(self._sasl_properties())
        props.update(self._ssl_properties())
        if self.authorizer:
            props["authorizer.class.name"] = (
                "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
            )
            props["super.users"] = ";".join(f"User:{u}" for u in self.super_users)
            props["allow.everyone.if.no.acl.found"] = "false"
        if node.rack is not None:
            props["broker.rack"] = node.rack
            props["replica.selector.class"] = (
                "org.apache.kafka.common.replica.RackAwareReplicaSelector"
            )
        if self.delegation_tokens:
            props["delegation.token.secret.key"] = "krafka-test-token-secret"
            props["delegation.token.expiry.check.interval.ms"] = "1000"
        if self.compaction:
            props["log.cleaner.backoff.ms"] = "100"
            props["log.cleaner.min.cleanable.ratio"] = "0.01"
            props["log.cleaner.min.compaction.lag.ms"] = "0"
            props["log.roll.ms"] = "500"
            props["log.cleaner.delete.retention.ms"] = "100"
        props.update(self.broker_config)
        return props

    def _sasl_properties(self) -> dict[str, str]:
        sasl_listeners = [n for n in self.listeners if n.startswith("SASL")]
        if self.authorizer:
            sasl_listeners += [_INTERNAL, _CONTROLLER]
        if not sasl_listeners:
            return {}
        props: dict[str, str] = {}
        for listener in sasl_listeners:
            prefix = f"listener.name.{listener.lower()}"
            internal = listener in (_INTERNAL, _CONTROLLER)
            mechanisms = ("PLAIN",) if internal else SASL_MECHANISMS
            props[f"{prefix}.sasl.enabled.mechanisms"] = ",".join(mechanisms)
            props[f"{prefix}.plain.sasl.jaas.config"] = _jaas_plain(self.users)
            if not internal:
                props[f"{prefix}.scram-sha-256.sasl.jaas.config"] = _JAAS_SCRAM
                props[f"{prefix}.scram-sha-512.sasl.jaas.config"] = _JAAS_SCRAM
                props[f"{prefix}.oauthbearer.sasl.jaas.config"] = _JAAS_OAUTH
        props["sasl.enabled.mechanisms"] = ",".join(SASL_MECHANISMS)
        if self.authorizer:
            props["sasl.mechanism.inter.broker.protocol"] = "PLAIN"
            props["sasl.mechanism.controller.protocol"] = "PLAIN"
        return props

    def _ssl_properties(self) -> dict[str, str]:
        if self.tls is None:
            return {}
        props: dict[str, str] = {}
        for listener in (n for n in self.listeners if "SSL" in n):
            prefix = f"listener.name.{listener.lower()}"
            props[f"{prefix}.ssl.keystore.type"] = "PEM"
            certificate = self.listener_certificates.get(listener, "server")
            props[f"{prefix}.ssl.keystore.location"] = str(self.tls.key_store(certificate))
            props[f"{prefix}.ssl.truststore.type"] = "PEM"
            props[f"{prefix}.ssl.truststore.location"] = str(self.tls.ca)
            props[f"{prefix}.ssl.endpoint.identification.algorithm"] = ""
            if listener == "SSL":
                props[f"{prefix}.ssl.client.auth"] = "required"
        return props

    def _format_all(self) -> None:
        scram = [
            f"{mechanism}=[name={name},password={password}]"
            for name, password in self.users.items()
            for mechanism in ("SCRAM-SHA-256", "SCRAM-SHA-512")
        ]
        procs = []
        for node in self.nodes:
            node.directory.mkdir(parents=True, exist_ok=True)
            config = node.directory / "server.properties"
            config.write_text(
                "".join(f"{k}={_escape(v)}\n" for k, v in self.properties(node).items())
            )
            args = ["format", "-t", self.cluster_id, "-c", str(config), "--ignore-formatted"]
            for entry in scram if any(n.startswith("SASL") for n in self.listeners) else []:
                args += ["--add-scram", entry]
            procs.append((node, self._java_process("kafka.tools.StorageTool", args, node)))
        for node, proc in procs:
            try:
                out, _ = proc.communicate(timeout=120)
            except subprocess.TimeoutExpired:
                proc.kill()
                raise KafkaUnavailable(f"formatting node {node.node_id} timed out") from None
            if proc.returncode != 0:
                raise KafkaUnavailable(
                    f"formatting node {node.node_id} failed: {out.decode(errors='replace')[-2000:]}"
                )

    def _jvm(self, heap: str) -> list[str]:
        options = [
            require_tool("java", "run Apache Kafka"), f"-Xmx{heap}", "-Xms64m",
            "-XX:+UseSerialGC", "-XX:-UsePerfData", "-Djava.awt.headless=true",
            f"-Dlog4j2.configurationFile={self._log4j_file()}",
        ]  # fmt: skip
        if self.quick_start:
            options.append("-XX:TieredStopAtLevel=1")
        return [*options, *self.jvm_options]

    def _java_process(
        self, main_class: str, args: list[str], node: KafkaNode
    ) -> subprocess.Popen[bytes]:
        command = [
            *self._jvm("256m"),
            f"-Dkafka.logs.dir={node.directory}",
            "-cp",
            self._classpath,
            main_class,
            *args,
        ]
        return subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
        )

    def _launch(self, node: KafkaNode) -> None:
        prefix = self.network.exec_prefix(node.node_id) if self.network is not None else []
        command = [
            *prefix,
            *self._jvm(self.heap),
            f"-Dkafka.logs.dir={node.directory}",
            "-cp",
            getattr(self, "_classpath", None) or classpath_argument(self.version),
            "kafka.Kafka",
            str(node.directory / "server.properties"),
        ]
        with open(node.directory / "stdout.log", "ab") as out:
            node.process = subprocess.Popen(
                command,
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
        _RUNNING.add(node.process)

    def _terminate(self, node: KafkaNode) -> None:
        proc = node.process
        if proc is not None and proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGCONT)  # a paused node cannot act on SIGTERM
                os.killpg(proc.pid, signal.SIGTERM)

    def _reap(self, node: KafkaNode, grace: float) -> None:
        proc, node.process = node.process, None
        if proc is None:
            return
        try:
            proc.wait(grace)
        except subprocess.TimeoutExpired:
            _kill_group(proc)
        _RUNNING.discard(proc)

    def _check_alive(self, nodes: list[KafkaNode]) -> None:
        for node in nodes:
            if node.process is not None and node.process.poll() is not None:
                code = node.process.returncode
                raise KafkaUnavailable(
                    f"Apache Kafka node {node.node_id} exited with code {code}:\n"
                    + self.log_tail(node.node_id)
                )


def _host_of(node: KafkaNode, listener: str) -> str:
    return node.internal_host if listener == _INTERNAL else node.host


def _escape(value: str) -> str:
    """A Java .properties value (backslashes and leading spaces kept literal)."""
    return value.replace("\\", "\\\\")


def _brokers_seen(address: str, timeout: float = 2.0) -> set[int]:
    """Node ids in a Metadata response from `address` (empty while it is not serving)."""
    from krafka.protocol import ApiKey
    from krafka.protocol.messages import MetadataRequest
    from krafka.sansio.connection import BrokerConnection, ConnectionConfig
    from krafka.sansio.events import ConnectionClosed, RequestFailed, ResponseReceived

    host, _, port = address.rpartition(":")
    with socket.create_connection((host, int(port)), timeout=timeout) as sock:
        sock.settimeout(timeout)
        start = time.monotonic()
        conn = BrokerConnection(ConnectionConfig(client_id="krafka-testing"), now=0.0)
        sent = False
        while True:
            data = conn.data_to_send()
            if data:
                sock.sendall(data)
            chunk = sock.recv(65536)
            events = conn.receive_data(chunk, time.monotonic() - start)
            if not sent and conn.is_ready:
                conn.send_request(MetadataRequest(topics=[]), time.monotonic() - start)
                sent = True
                sock.sendall(conn.data_to_send())
            for event in events:
                if isinstance(event, ResponseReceived) and event.api_key == ApiKey.METADATA:
                    return {broker.node_id for broker in event.response.brokers}
                if isinstance(event, RequestFailed | ConnectionClosed):
                    return set()
            if not chunk:
                return set()


def running_clusters() -> Iterator[subprocess.Popen[bytes]]:
    """Processes of nodes started by this interpreter and not stopped yet."""
    yield from list(_RUNNING)
