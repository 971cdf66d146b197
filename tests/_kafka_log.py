"""Segments written by Apache Kafka itself, and what Kafka's own DumpLogSegments reads in them.

`kafka_log(kafka_clusters, tmp_path_factory)` runs a one-node cluster of its own, once per test
session whichever test directory asks first, and writes with krafka's producers:

- a topic per codec (`seg-none` ... `seg-zstd`): two transactional producers compressing with
  that codec and an idempotent one sending uncompressed batches the broker compresses with
  Java's codecs (the topic's `compression.type`) interleave committed and aborted transactions,
  an aborted one spanning another producer's commit and a segment roll; keys, values and headers
  empty or null, values of ~100 kB; `seg-lz4` stamps LogAppendTime. Timestamps are explicit,
  so the log rolls where a record's timestamp jumps past `segment.ms` (inside the aborted one);
- a compacted topic (`seg-compacted`): updates, tombstones, committed and aborted transactions,
  cleaned twice by the log cleaner (it drops superseded values, aborted data and the first
  round's tombstone, keeps an empty batch for the producer's state, sets delete horizons).

`index.interval.bytes=1` gives every batch an `.index` entry. Then the node is stopped (every
segment closed and flushed), the partitions' segment files are copied out and DumpLogSegments
reads them all (`--print-data-log`, and the `.txnindex` files: Kafka's record of aborted
transactions) in one JVM. `KafkaLog` holds the copied directory, the parsed dump and what each
producer was told about each record it sent.
"""

from __future__ import annotations

import re
import shutil
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import pytest

CODECS: Final = ("none", "gzip", "snappy", "lz4", "zstd")
COMPACTED: Final = "seg-compacted"
DELETED: Final = "seg-deleted"
LOG_APPEND_TIME_CODEC: Final = "lz4"
DUMP_LOG_SEGMENTS: Final = "org.apache.kafka.tools.DumpLogSegments"
_SEGMENT_MS: Final = 60_000
_COMPACTED_SEGMENT_MS: Final = 1000
_FILE_KINDS: Final = ("*.log", "*.index", "*.timeindex", "*.txnindex")
#: About 100 kB of ASCII: several blocks for every codec's framing (snappy's 32 kB, lz4's 64 kB).
BIG_VALUE: Final = ",".join(f"{i:06d}" for i in range(15_000)).encode()


def codec_topic(codec: str) -> str:
    return f"seg-{codec}"


@dataclass(frozen=True, slots=True)
class Sent:
    """One record as its producer sent it, at the offset the broker acknowledged."""

    topic: str
    offset: int
    key: bytes | None
    value: bytes | None
    headers: tuple[tuple[str, bytes | None], ...]
    timestamp: int
    transactional: bool


@dataclass(frozen=True, slots=True)
class DumpedRecord:
    """A `| offset: ...` line of DumpLogSegments."""

    offset: int
    timestamp_type: str
    timestamp: int
    key_size: int
    value_size: int
    sequence: int | None
    header_keys: tuple[str, ...] | None
    marker: str | None
    coordinator_epoch: int | None
    key: str | None
    payload: str | None


@dataclass(frozen=True, slots=True)
class DumpedBatch:
    """A batch line of DumpLogSegments (`fields` as printed) and its records."""

    fields: dict[str, str]
    records: list[DumpedRecord]

    def int(self, name: str) -> int:
        return int(self.fields[name])

    def flag(self, name: str) -> bool:
        return self.fields[name] == "true"


@dataclass(frozen=True, slots=True)
class AbortedTxn:
    """A `.txnindex` entry: producer `producer_id` aborted offsets [first, last]."""

    producer_id: int
    first_offset: int
    last_offset: int


@dataclass
class DumpedFile:
    """What DumpLogSegments printed for one file (after its `Dumping` line)."""

    path: Path
    lines: list[str] = field(default_factory=list)
    batches: list[DumpedBatch] = field(default_factory=list)
    aborted: list[AbortedTxn] = field(default_factory=list)


@dataclass
class KafkaLog:
    """The copied log directory, DumpLogSegments' reading of it, and what was sent."""

    root: Path
    sent: dict[str, dict[int, Sent]]
    dumps: dict[Path, DumpedFile]
    cleaned_to: int
    cluster: Any = field(repr=False)
    #: The deleted topic's partition, as Kafka renamed it (`seg-deleted-0.<id>-delete`).
    deleted: Path | None = None

    def partition(self, topic: str) -> Path:
        return self.root / f"{topic}-0"

    def segments(self, topic: str | None = None) -> list[Path]:
        """One partition's segment files in offset order (every partition's when None)."""
        if topic is None:
            return [p for t in sorted(self.sent) for p in self.segments(t)]
        return sorted(self.partition(topic).glob("*.log"))

    def dump_text(self, paths: list[Path]) -> str:
        """DumpLogSegments' output for these files, as it printed it."""
        return "".join(
            f"Dumping {p}\n" + "".join(f"{line}\n" for line in self.dumps[p].lines) for p in paths
        )

    def batches(self, topic: str) -> Iterator[DumpedBatch]:
        for path in self.segments(topic):
            yield from self.dumps[path].batches

    def aborted(self, topic: str) -> list[AbortedTxn]:
        found = [self.dumps[p].aborted for p in sorted(self.partition(topic).glob("*.txnindex"))]
        return [txn for entries in found for txn in entries]

    def committed_offsets(self, topic: str) -> list[int]:
        """Offsets of data records a read_committed consumer gets, by Kafka's `.txnindex`."""
        aborted = self.aborted(topic)
        out = []
        for batch in self.batches(topic):
            if batch.flag("isControl"):
                continue
            pid = batch.int("producerId")
            for r in batch.records:
                if batch.flag("isTransactional") and any(
                    t.producer_id == pid and t.first_offset <= r.offset <= t.last_offset
                    for t in aborted
                ):
                    continue
                out.append(r.offset)
        return out


# -- writing --------------------------------------------------------------------------------


class _Topic:
    """Sends to partition 0 of one topic with explicit, increasing timestamps."""

    def __init__(self, name: str, start: int, sent: dict[int, Sent]) -> None:
        self.name = name
        self.clock = start
        self.sent = sent

    def send(
        self,
        producer: Any,
        key: bytes | None,
        value: bytes | None,
        headers: tuple[tuple[str, bytes | None], ...] = (),
        *,
        timestamp: int | None = None,
        transactional: bool = False,
    ) -> Callable[[], None]:
        stamp = self.clock if timestamp is None else timestamp
        self.clock += 400
        future = producer.send(
            self.name, value, key, headers=list(headers), partition=0, timestamp=stamp
        )

        def done() -> None:
            meta = future.result(30)
            self.sent[meta.offset] = Sent(
                self.name, meta.offset, key, value, headers, stamp, transactional
            )

        return done


def _settle(pending: list[Callable[[], None]]) -> None:
    for done in pending:
        done()
    pending.clear()


def _write_codec_topic(bootstrap: str, codec: str, start: int, sent: dict[int, Sent]) -> None:
    """Transactional batches compressed by krafka with `codec`; the idempotent producer's sent
    uncompressed, so the broker compresses them (the topic's `compression.type`) with Java's."""
    from krafka.sync import Producer

    topic = _Topic(codec_topic(codec), start, sent)
    common: dict[str, Any] = {"bootstrap_servers": bootstrap, "linger": 0.02}
    pending: list[Callable[[], None]] = []
    with (
        Producer(transactional_id=f"{topic.name}-a", compression=codec, **common) as a,
        Producer(transactional_id=f"{topic.name}-b", compression=codec, **common) as b,
        Producer(enable_idempotence=True, compression="none", **common) as plain,
    ):
        a.begin_transaction()
        for i in range(4):
            headers = (("trace", b"t%d" % i), ("dup", b"1"), ("dup", None))
            value = BIG_VALUE if i == 1 else b"a-value-%d" % i
            pending.append(topic.send(a, b"a-key-%d" % i, value, headers, transactional=True))
        a.commit_transaction()
        _settle(pending)
        b.begin_transaction()
        pending.append(topic.send(b, b"b-key-0", b"b-value-0", transactional=True))
        b.flush()
        a.begin_transaction()
        pending.append(topic.send(a, b"x-key-0", b"aborted-0", transactional=True))
        pending.append(topic.send(a, None, b"aborted-1", (("h", b""),), transactional=True))
        a.flush()
        rolls = start + 5 * _SEGMENT_MS  # the log rolls inside the aborted transaction
        pending.append(topic.send(plain, None, b"plain-0" + BIG_VALUE, timestamp=rolls))
        plain.flush()
        pending.append(topic.send(b, b"b-key-1", b"b-value-1", transactional=True))
        b.commit_transaction()
        pending.append(topic.send(a, b"x-key-2", b"aborted-2", transactional=True))
        a.flush()
        a.abort_transaction()
        pending.append(topic.send(plain, b"plain-key-1", None, (("nothing", None),)))
        plain.flush()
        a.begin_transaction()
        pending.append(topic.send(a, b"", b"", transactional=True))
        a.commit_transaction()
        _settle(pending)


def _write_compacted(bootstrap: str, phase: int, start: int, sent: dict[int, Sent]) -> int:
    """Updates, tombstones and transactions, then a record that rolls the segment (its offset
    is returned: the cleaner can clean up to it)."""
    from krafka.sync import Producer

    topic = _Topic(COMPACTED, start, sent)
    base: dict[str, Any] = {"bootstrap_servers": bootstrap, "linger": 0.02}
    pending: list[Callable[[], None]] = []
    with (
        Producer(enable_idempotence=True, compression="zstd", **base) as plain,
        Producer(transactional_id=f"{COMPACTED}-t", compression="none", **base) as txn,
    ):
        for update in range(3):
            for k in range(6):
                value = b"p%d-u%d-k%d" % (phase, update, k)
                pending.append(topic.send(plain, b"k%d" % k, value, (("u", b"%d" % update),)))
            plain.flush()
        txn.begin_transaction()
        pending.append(topic.send(txn, b"k1", b"p%d-committed" % phase, transactional=True))
        pending.append(topic.send(txn, b"t%d" % phase, b"committed-only", transactional=True))
        txn.commit_transaction()
        txn.begin_transaction()
        pending.append(topic.send(txn, b"k2", b"p%d-aborted" % phase, transactional=True))
        pending.append(topic.send(txn, b"a%d" % phase, b"aborted-only", transactional=True))
        txn.flush()
        txn.abort_transaction()
        pending.append(topic.send(plain, b"k%d" % (3 * phase - 3), None))  # tombstones: k0, k3
        plain.flush()
        _settle(pending)
        future_stamp = int(time.time() * 1000) + 10_000 * (phase + 1)
        roll = topic.send(plain, b"roll-%d" % phase, b"roll", timestamp=future_stamp)
        plain.flush()
        roll()
    return max(sent)


def _cleaned_to(data: Path) -> int:
    """The compacted partition's offset in the cleaner's checkpoint (-1 before any cleaning)."""
    checkpoint = data / "cleaner-offset-checkpoint"
    try:
        lines = checkpoint.read_text().splitlines()
    except OSError:
        return -1
    for line in lines[2:]:
        topic, partition, offset = line.split()
        if topic == COMPACTED and partition == "0":
            return int(offset)
    return -1


def _wait_cleaned(data: Path, offset: int, timeout: float = 60.0) -> int:
    deadline = time.monotonic() + timeout
    while (cleaned := _cleaned_to(data)) < offset:
        if time.monotonic() > deadline:
            raise AssertionError(f"log cleaner did not clean {COMPACTED} to {offset} in time")
        time.sleep(0.1)
    return cleaned


def _topics() -> list[Any]:
    from krafka.sansio.admin.topics import NewTopic

    rolled = {"segment.ms": str(_SEGMENT_MS), "index.interval.bytes": "1"}
    topics = []
    for codec in CODECS:
        configs = {**rolled, "compression.type": "uncompressed" if codec == "none" else codec}
        if codec == LOG_APPEND_TIME_CODEC:
            configs["message.timestamp.type"] = "LogAppendTime"
        topics.append(NewTopic(codec_topic(codec), 1, 1, configs=configs))
    compact = {
        **rolled,
        "segment.ms": str(_COMPACTED_SEGMENT_MS),
        "cleanup.policy": "compact",
        "min.cleanable.dirty.ratio": "0.01",
        "delete.retention.ms": "100",
        "min.compaction.lag.ms": "0",
    }
    return [*topics, NewTopic(COMPACTED, 1, 1, configs=compact), NewTopic(DELETED, 1, 1)]


def write(cluster: Any, into: Path) -> KafkaLog:
    """Write every topic, let the cleaner run, stop the node, copy the segments to `into`."""
    from krafka.sync import AdminClient

    bootstrap = cluster.bootstrap_servers
    with AdminClient(bootstrap_servers=bootstrap) as admin:
        failed = admin.create_topics(_topics()).failed
    assert not failed, failed
    now = int(time.time() * 1000) // 1000 * 1000
    sent: dict[str, dict[int, Sent]] = {}
    for codec in CODECS:
        _write_codec_topic(bootstrap, codec, now, sent.setdefault(codec_topic(codec), {}))
    start = now - 600_000
    data = cluster.node(1).directory / "data"
    compacted = sent.setdefault(COMPACTED, {})
    _wait_cleaned(data, _write_compacted(bootstrap, 1, start, compacted))
    cleaned = _wait_cleaned(data, _write_compacted(bootstrap, 2, start + 100_000, compacted))
    deleted = _write_and_delete(bootstrap, data)
    cluster.stop()
    for source in [*(cluster.partition_directory(1, topic, 0) for topic in sent), deleted]:
        target = into / source.name
        target.mkdir(parents=True)
        for pattern in _FILE_KINDS:
            for path in source.glob(pattern):
                shutil.copy2(path, target / path.name)
    live = [into / f"{topic}-0" for topic in sent]
    files = [p for d in live for p in sorted(d.glob("*.log")) + sorted(d.glob("*.txnindex"))]
    return KafkaLog(into, sent, dump_log_segments(cluster, files), cleaned, cluster,
                    into / deleted.name)  # fmt: skip


def _write_and_delete(bootstrap: str, data: Path, timeout: float = 30.0) -> Path:
    """A topic written then deleted: Kafka renames its partition folder `-delete` and removes
    it a minute later (`file.delete.delay.ms`), so a copied log dir may hold one."""
    from krafka.sync import AdminClient, Producer

    with Producer(bootstrap_servers=bootstrap) as producer:
        producer.send_and_wait(DELETED, b"gone", b"k", partition=0)
    with AdminClient(bootstrap_servers=bootstrap) as admin:
        failed = admin.delete_topics([DELETED]).failed
    assert not failed, failed
    deadline = time.monotonic() + timeout
    while not (found := sorted(data.glob(f"{DELETED}-0.*-delete"))):
        assert time.monotonic() < deadline, f"{DELETED} was not renamed for deletion in time"
        time.sleep(0.1)
    return found[0]


# -- reading DumpLogSegments' output -----------------------------------------------------------

_RECORD = re.compile(
    r"^\| offset: (?P<offset>\d+) (?P<tstype>\w+): (?P<ts>-?\d+)"
    r" keySize: (?P<ksize>-?\d+) valueSize: (?P<vsize>-?\d+)"
    r"(?: sequence: (?P<seq>-?\d+) headerKeys: \[(?P<hkeys>[^\]]*)\])?"
    r"(?: isValid: \w+ crc: \d+)?"
    r"(?: endTxnMarker: (?P<marker>\w+) coordinatorEpoch: (?P<epoch>\d+))?"
    r"(?: key: (?P<key>.*?))?(?: payload: (?P<payload>.*))?$"
)
_ABORTED = re.compile(
    r"^version: \d+ producerId: (?P<pid>-?\d+) firstOffset: (?P<first>\d+)"
    r" lastOffset: (?P<last>\d+) lastStableOffset: \d+$"
)


def dump_log_segments(cluster: Any, paths: list[Path]) -> dict[Path, DumpedFile]:
    """Kafka's own reading of segment (and `.txnindex`) files, one JVM for them all."""
    out = cluster.java(DUMP_LOG_SEGMENTS, "--files", ",".join(map(str, paths)),
                       "--print-data-log", "--deep-iteration")  # fmt: skip
    return parse_dump(out)


def parse_dump(text: str) -> dict[Path, DumpedFile]:
    files: dict[Path, DumpedFile] = {}
    current: DumpedFile | None = None
    for line in text.splitlines():
        if line.startswith("Dumping "):
            current = files.setdefault(Path(line[8:]), DumpedFile(Path(line[8:])))
            continue
        assert current is not None, line
        current.lines.append(line)
        if line.startswith("| "):
            current.batches[-1].records.append(_record(line))
        elif line.startswith(("baseOffset: ", "offset: ")):
            tokens = line.split(" ")
            pairs = zip(tokens[0::2], tokens[1::2], strict=True)
            current.batches.append(DumpedBatch({k.rstrip(":"): v for k, v in pairs}, []))
        elif match := _ABORTED.match(line):
            current.aborted.append(
                AbortedTxn(int(match["pid"]), int(match["first"]), int(match["last"]))
            )
    return files


def _record(line: str) -> DumpedRecord:
    m = _RECORD.match(line)
    assert m is not None, f"unexpected DumpLogSegments record line: {line!r}"
    keys = m["hkeys"]
    return DumpedRecord(
        offset=int(m["offset"]),
        timestamp_type=m["tstype"],
        timestamp=int(m["ts"]),
        key_size=int(m["ksize"]),
        value_size=int(m["vsize"]),
        sequence=None if m["seq"] is None else int(m["seq"]),
        header_keys=None if keys is None else tuple(keys.split(",") if keys else ()),
        marker=m["marker"],
        coordinator_epoch=None if m["epoch"] is None else int(m["epoch"]),
        key=m["key"],
        payload=m["payload"],
    )


# -- the session's log ------------------------------------------------------------------------

_MADE: dict[int, KafkaLog] = {}


def kafka_log(kafka_clusters: Any, tmp_path_factory: pytest.TempPathFactory) -> KafkaLog:
    """The session's `KafkaLog`, written on first use (one per session, whichever tests ask)."""
    made = _MADE.get(id(kafka_clusters))
    if made is None:
        cluster = kafka_clusters.new(1, compaction=True)
        try:
            made = write(cluster, tmp_path_factory.mktemp("kafka-log"))
        finally:
            cluster.stop()
        _MADE[id(kafka_clusters)] = made
    return made


# -- krafka's decoding, in DumpLogSegments' terms ----------------------------------------------

_INT32_MAX: Final = 2**31 - 1
_TIMESTAMP_TYPES: Final = ("CreateTime", "LogAppendTime")


def sequence_at(base_sequence: int, delta: int) -> int:
    """Kafka's `DefaultRecordBatch.incrementSequence`: sequences wrap at Integer.MAX_VALUE."""
    if base_sequence < 0:
        return -1
    over = base_sequence + delta - _INT32_MAX
    return over - 1 if over > 0 else base_sequence + delta


def batch_fields(batch: Any, position: int) -> dict[str, str]:
    """A decoded v2 batch as DumpLogSegments prints it (its `fields`)."""
    ts_type = _TIMESTAMP_TYPES[int(batch.timestamp_type)]
    horizon = f"OptionalLong[{batch.first_timestamp}]" if batch.attributes & 0x40 else (
        "OptionalLong.empty")  # fmt: skip
    last_delta = batch.last_offset - batch.base_offset
    return {
        "baseOffset": str(batch.base_offset),
        "lastOffset": str(batch.last_offset),
        "count": str(len(batch.records)),
        "baseSequence": str(batch.base_sequence),
        "lastSequence": str(sequence_at(batch.base_sequence, last_delta)),
        "producerId": str(batch.producer_id),
        "producerEpoch": str(batch.producer_epoch),
        "partitionLeaderEpoch": str(batch.partition_leader_epoch),
        "isTransactional": str(batch.is_transactional).lower(),
        "isControl": str(batch.is_control).lower(),
        "deleteHorizonMs": horizon,
        "position": str(position),
        ts_type: str(batch.max_timestamp),
        "size": str(batch.batch_length + 12),
        "magic": str(batch.magic),
        "compresscodec": str(batch.compression),
        "crc": str(batch.crc),
        "isvalid": "true",
    }


def record_view(batch: Any, record: Any) -> DumpedRecord:
    """A decoded v2 record as DumpLogSegments prints it (ASCII keys and values)."""
    from krafka.codec import parse_control

    control = parse_control(record) if batch.is_control else None
    key, value = record.key, record.value
    return DumpedRecord(
        offset=record.offset,
        timestamp_type=_TIMESTAMP_TYPES[int(batch.timestamp_type)],
        timestamp=record.timestamp,
        key_size=-1 if key is None else len(key),
        value_size=-1 if value is None else len(value),
        sequence=sequence_at(batch.base_sequence, record.offset - batch.base_offset),
        header_keys=tuple(k for k, _ in record.headers),
        marker=None if control is None else control.type.name,
        coordinator_epoch=None if control is None else control.coordinator_epoch,
        key=None if control is not None or key is None else key.decode(),
        payload=None if control is not None or value is None else value.decode(),
    )
