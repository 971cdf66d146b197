"""Apache Kafka's Java client as a test peer: `java/JavaPeer.java` compiled once against the cached
`kafka-clients` jars, one role per JVM, driven through its command line.

    async with JavaPeer(Role.GROUP_MEMBER, bootstrap, topics=[topic], group="g",
                        strategy="cooperative-sticky") as member:    # or `with`
        await member.aexpect("assigned", timeout=30) # its rebalance listener spoke
        ...                                          # member.records(): what it consumed so far
    # leaving the block stops it ("stop" on stdin) and raises if it failed

    deliveries = java_produce(bootstrap, "t", [OutgoingRecord(b"v", key=b"k")], codec="zstd")
    records = java_consume(bootstrap, ["t"], isolation="read_committed")   # to the end offsets

The process prints one JSON object per line (`{"event": ...}`); a reader thread keeps every event
in `events` and queues it for `next_event` / `expect`. Every call is blocking with a timeout: from
async code run them through `anyio.to_thread.run_sync` (or use `aexpect`) so the event loop keeps
serving the krafka clients of the same test. The JVM also bounds itself (`timeout`), so a peer
never outlives a test by much even if the test process dies.
"""

from __future__ import annotations

import base64
import contextlib
import json
import queue
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from types import TracebackType
from typing import IO, Any, Final

import anyio.to_thread

from krafka.errors import KrafkaError
from krafka.structs import TopicPartition
from krafka.testing.runtime import KAFKA_VERSION, classpath_argument, compile_java, require_tool

SOURCE: Final = Path(__file__).with_name("java") / "JavaPeer.java"
_JVM_OPTIONS: Final = ("-Xmx256m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC")

Header = tuple[str, bytes | None]


class Role(str, Enum):
    """What one JavaPeer process does (its subcommand)."""

    PRODUCE = "produce"
    CONSUME = "consume"
    GROUP_MEMBER = "group-member"
    SHARE_CONSUME = "share-consume"
    GROUP_OFFSETS = "group-offsets"


class TransactionStep(str, Enum):
    """A producer step between records: `ABORT` flushes first, so aborted records reach the log."""

    BEGIN = "begin"
    COMMIT = "commit"
    ABORT = "abort"
    FLUSH = "flush"


class JavaPeerError(KrafkaError):
    """The Java peer reported an error, exited unexpectedly or did not answer in time."""


def _b64(data: bytes | None) -> str | None:
    return None if data is None else base64.b64encode(data).decode()


def _unb64(text: str | None) -> bytes | None:
    return None if text is None else base64.b64decode(text)


@dataclass(frozen=True, slots=True)
class OutgoingRecord:
    """One record for a `produce` peer; `codec` picks that codec's producer (not transactional),
    `topic` overrides the peer's."""

    value: bytes | None
    key: bytes | None = None
    headers: Sequence[Header] = ()
    partition: int | None = None
    timestamp: int | None = None
    codec: str | None = None
    topic: str | None = None

    def to_json(self) -> dict[str, Any]:
        line: dict[str, Any] = {
            "value": _b64(self.value),
            "key": _b64(self.key),
            "headers": [[k, _b64(v)] for k, v in self.headers],
        }
        for name in ("partition", "timestamp", "codec", "topic"):
            if getattr(self, name) is not None:
                line[name] = getattr(self, name)
        return line


@dataclass(frozen=True, slots=True)
class PeerRecord:
    """A record as the Java client saw it."""

    topic: str
    partition: int
    offset: int
    timestamp: int
    timestamp_type: str
    key: bytes | None
    value: bytes | None
    headers: tuple[Header, ...]
    leader_epoch: int | None = None
    delivery_count: int | None = None

    @property
    def topic_partition(self) -> TopicPartition:
        return TopicPartition(self.topic, self.partition)


@dataclass(frozen=True, slots=True)
class PeerDelivery:
    """Where the Java producer's `index`-th record was written."""

    index: int
    topic: str
    partition: int
    offset: int
    timestamp: int


@dataclass(frozen=True, slots=True)
class PeerEvent:
    """One JSON line of the peer: `kind` is its "event" field, `data` the whole object."""

    kind: str
    data: Mapping[str, Any] = field(repr=False)

    @classmethod
    def parse(cls, line: str) -> PeerEvent:
        """A JSON line; any other line (which the peer never prints itself) is a "log" event."""
        try:
            data = json.loads(line)
        except ValueError:
            return cls("log", {"event": "log", "line": line.rstrip("\n")})
        if not isinstance(data, dict):
            return cls("log", {"event": "log", "line": line.rstrip("\n")})
        return cls(str(data.get("event", "")), data)

    def record(self) -> PeerRecord:
        d = self.data
        return PeerRecord(
            topic=d["topic"],
            partition=d["partition"],
            offset=d["offset"],
            timestamp=d["timestamp"],
            timestamp_type=d["timestamp_type"],
            key=_unb64(d["key"]),
            value=_unb64(d["value"]),
            headers=tuple((k, _unb64(v)) for k, v in d["headers"]),
            leader_epoch=d.get("leader_epoch"),
            delivery_count=d.get("delivery_count"),
        )

    def delivery(self) -> PeerDelivery:
        d = self.data
        return PeerDelivery(d["index"], d["topic"], d["partition"], d["offset"], d["timestamp"])

    @property
    def partitions(self) -> frozenset[TopicPartition]:
        """The partitions of an assigned/revoked/lost event (the change)."""
        return frozenset(TopicPartition(t, p) for t, p in self.data.get("partitions", ()))

    @property
    def assignment(self) -> frozenset[TopicPartition]:
        """The member's whole assignment when the event was printed."""
        return frozenset(TopicPartition(t, p) for t, p in self.data.get("assignment", ()))


def peer_classes(version: str = KAFKA_VERSION) -> Path:
    """JavaPeer compiled against Apache Kafka `version`'s jars (cached)."""
    return compile_java(SOURCE, version)


def _argument(name: str, value: object) -> list[str]:
    if isinstance(value, (list, tuple)):
        value = ",".join(str(v) for v in value)
    return [f"--{name.replace('_', '-')}", str(value)]


def peer_command(
    role: Role | str,
    bootstrap_servers: str,
    *,
    config: Mapping[str, object] | None = None,
    timeout: float = 120.0,
    version: str = KAFKA_VERSION,
    **options: object,
) -> list[str]:
    """The command line running one role; `options` become `--name value` (lists comma-joined,
    None left out), `config` any client property (`--config k=v`)."""
    classpath = f"{peer_classes(version)}:{classpath_argument(version)}"
    command = [require_tool("java", "run the Java peer"), *_JVM_OPTIONS, "-cp", classpath]
    command += ["JavaPeer", Role(role).value, "--bootstrap", bootstrap_servers]
    command += _argument("timeout", timeout)
    for name, value in options.items():
        if value is not None:
            command += _argument(name, value)
    for key, value in (config or {}).items():
        command += ["--config", f"{key}={value}"]
    return command


class JavaPeer:
    """One running JavaPeer process (a context manager: started on entry, stopped on exit)."""

    def __init__(
        self,
        role: Role | str,
        bootstrap_servers: str,
        *,
        config: Mapping[str, object] | None = None,
        timeout: float = 120.0,
        version: str = KAFKA_VERSION,
        **options: object,
    ) -> None:
        self.role = Role(role)
        self.command = peer_command(
            role, bootstrap_servers, config=config, timeout=timeout, version=version, **options
        )
        self.events: list[PeerEvent] = []
        self._queue: queue.Queue[PeerEvent | None] = queue.Queue()
        self._process: subprocess.Popen[str] | None = None
        self._stderr: IO[str] | None = None
        self._reader: threading.Thread | None = None

    # -- lifecycle ---------------------------------------------------------------------------

    def start(self) -> JavaPeer:
        # the JVM's log, kept for error reports as long as the peer lives (closed on exit)
        self._stderr = tempfile.TemporaryFile("w+", prefix="java-peer-")  # noqa: SIM115
        self._process = subprocess.Popen(
            self.command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            text=True,
            bufsize=1,
            start_new_session=True,
        )
        self._reader = threading.Thread(target=self._read, name="java-peer-reader", daemon=True)
        self._reader.start()
        return self

    def _read(self) -> None:
        assert self._process is not None and self._process.stdout is not None
        for line in self._process.stdout:
            if line.strip():
                event = PeerEvent.parse(line)
                self.events.append(event)
                self._queue.put(event)
        self._queue.put(None)

    def __enter__(self) -> JavaPeer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        try:
            if exc is None:
                self.stop()
            else:
                self.kill()
        finally:
            if self._stderr is not None:
                self._stderr.close()

    async def __aenter__(self) -> JavaPeer:
        return await anyio.to_thread.run_sync(self.start)

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        """As `__exit__`, on a worker thread: the event loop keeps serving krafka's clients while
        the Java member leaves."""
        await anyio.to_thread.run_sync(lambda: self.__exit__(exc_type, exc, tb))

    @property
    def process(self) -> subprocess.Popen[str]:
        if self._process is None:
            raise JavaPeerError("the Java peer was not started")
        return self._process

    def send(self, line: Mapping[str, Any] | str) -> None:
        """One line to the peer's stdin: a command ("stop", "assignment") or a JSON object."""
        text = line if isinstance(line, str) else json.dumps(line)
        stdin = self.process.stdin
        assert stdin is not None
        stdin.write(text + "\n")
        stdin.flush()

    def close_input(self) -> None:
        """EOF on stdin: a producer ends its input, a group or share member stops."""
        stdin = self.process.stdin
        if stdin is not None and not stdin.closed:
            with contextlib.suppress(BrokenPipeError):
                stdin.close()

    def wait(self, timeout: float = 60.0) -> list[PeerEvent]:
        """Until the process ends by itself; every event. Raises if it failed."""
        try:
            self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            raise JavaPeerError(
                f"the Java {self.role.value} did not end within {timeout} s"
            ) from None
        assert self._reader is not None
        self._reader.join(10)
        self._check()
        return list(self.events)

    def stop(self, timeout: float = 30.0) -> list[PeerEvent]:
        """Ask the peer to stop ("stop", then EOF) and wait for it; every event."""
        if self.process.poll() is None:
            with contextlib.suppress(BrokenPipeError, ValueError):
                self.send("stop")
            self.close_input()
        return self.wait(timeout)

    def kill(self) -> None:
        process = self._process
        if process is not None and process.poll() is None:
            process.kill()
            process.wait()
        if self._reader is not None:
            self._reader.join(10)

    def _check(self) -> None:
        errors = [e for e in self.events if e.kind == "error"]
        code = self.process.returncode
        if errors or code != 0:
            detail = errors[0].data.get("message") if errors else f"exit status {code}"
            name = errors[0].data.get("error") if errors else "failure"
            raise JavaPeerError(
                f"the Java {self.role.value} failed ({name}): {detail}\n{self.stderr_tail()}"
            )

    def stderr_tail(self, lines: int = 30) -> str:
        if self._stderr is None or self._stderr.closed:
            return ""
        self._stderr.seek(0)
        return "\n".join(self._stderr.read().splitlines()[-lines:])

    # -- events ------------------------------------------------------------------------------

    def next_event(self, timeout: float) -> PeerEvent:
        """The next event not taken yet; raises when the peer ends or `timeout` passes first."""
        try:
            event = self._queue.get(timeout=timeout)
        except queue.Empty:
            raise JavaPeerError(
                f"no event from the Java {self.role.value} within {timeout} s"
            ) from None
        if event is None:
            self._queue.put(None)
            self.process.wait(10)
            self._check()
            raise JavaPeerError(f"the Java {self.role.value} ended")
        if event.kind == "error":
            self.process.wait(10)
            self._check()
        return event

    def expect(
        self, kind: str, timeout: float = 30.0, where: Callable[[PeerEvent], bool] | None = None
    ) -> PeerEvent:
        """Skip events until one of `kind` (matching `where`) comes."""
        deadline = _Deadline(timeout)
        while True:
            event = self.next_event(deadline.left())
            if event.kind == kind and (where is None or where(event)):
                return event

    async def aexpect(
        self, kind: str, timeout: float = 30.0, where: Callable[[PeerEvent], bool] | None = None
    ) -> PeerEvent:
        """`expect` from async code, on a worker thread."""
        return await anyio.to_thread.run_sync(lambda: self.expect(kind, timeout, where))

    def records(self) -> list[PeerRecord]:
        """Every record the peer reported so far (whether or not taken by `next_event`)."""
        return [e.record() for e in list(self.events) if e.kind == "record"]

    def last(self, *kinds: str) -> PeerEvent | None:
        """The latest event of one of `kinds` so far."""
        for event in reversed(list(self.events)):
            if event.kind in kinds:
                return event
        return None


class _Deadline:
    def __init__(self, seconds: float) -> None:
        self._end = time.monotonic() + seconds

    def left(self) -> float:
        return max(0.0, self._end - time.monotonic())


def java_produce(
    bootstrap_servers: str,
    topic: str | None,
    items: Iterable[OutgoingRecord | TransactionStep],
    *,
    codec: str = "none",
    transactional_id: str | None = None,
    idempotent: bool = True,
    config: Mapping[str, object] | None = None,
    timeout: float = 120.0,
) -> list[PeerDelivery]:
    """Write records (and transaction steps) with `KafkaProducer` to `topic` (or each record's
    own); their deliveries in order. Raises `JavaPeerError` if any record failed."""
    peer = JavaPeer(
        Role.PRODUCE,
        bootstrap_servers,
        config=config,
        timeout=timeout,
        topic=topic,
        codec=codec,
        transactional_id=transactional_id,
        idempotent=str(idempotent).lower(),
    )
    with peer:
        for item in items:
            if isinstance(item, TransactionStep):
                peer.send({"op": item.value})
            else:
                peer.send(item.to_json())
        peer.close_input()
        events = peer.wait(timeout)
    failed = [e.data for e in events if e.kind == "send-failed"]
    if failed:
        raise JavaPeerError(f"{len(failed)} records not delivered, first: {failed[0]}")
    return sorted((e.delivery() for e in events if e.kind == "sent"), key=lambda d: d.index)


def java_consume(
    bootstrap_servers: str,
    topics: Sequence[str],
    *,
    group: str | None = None,
    isolation: str = "read_uncommitted",
    count: int | None = None,
    idle: float | None = None,
    config: Mapping[str, object] | None = None,
    timeout: float = 120.0,
) -> list[PeerRecord]:
    """Read with `KafkaConsumer`: without `group`, every partition from the beginning up to the
    end offsets seen at start (the last stable offsets when read_committed) or `count` records;
    with `group`, until `count` records or `idle` seconds without one."""
    peer = JavaPeer(
        Role.CONSUME,
        bootstrap_servers,
        config=config,
        timeout=timeout,
        topics=list(topics),
        group=group,
        isolation=isolation,
        count=count,
        idle=idle,
    )
    with peer:
        events = peer.wait(timeout)
    return [e.record() for e in events if e.kind == "record"]


def java_group_offsets(
    bootstrap_servers: str, group: str, *, timeout: float = 60.0
) -> dict[TopicPartition, tuple[int, str]]:
    """The group's committed offsets as Java's `Admin.listConsumerGroupOffsets` lists them:
    `{partition: (offset, metadata)}`."""
    with JavaPeer(Role.GROUP_OFFSETS, bootstrap_servers, timeout=timeout, group=group) as peer:
        events = peer.wait(timeout)
    return {
        TopicPartition(e.data["topic"], int(e.data["partition"])): (
            int(e.data["offset"]),
            str(e.data.get("metadata") or ""),
        )
        for e in events
        if e.kind == "offset"
    }


__all__ = [
    "SOURCE",
    "JavaPeer",
    "JavaPeerError",
    "OutgoingRecord",
    "PeerDelivery",
    "PeerEvent",
    "PeerRecord",
    "Role",
    "TransactionStep",
    "java_consume",
    "java_group_offsets",
    "java_produce",
    "peer_classes",
    "peer_command",
]
