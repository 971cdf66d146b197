"""`krafka segment dump` prints what Kafka's own DumpLogSegments prints: line for line on the
segments Apache Kafka wrote (`tests/_kafka_log.py`), field for field on legacy message sets."""

from __future__ import annotations

import base64
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from _cli import run_cli

from tests._kafka_log import DUMP_LOG_SEGMENTS, DumpedRecord, KafkaLog, codec_topic
from tests._kafka_log import kafka_log as write_kafka_log

_CONTENT = re.compile(r"^(?P<meta>.*?)(?: key: .*| payload: .*)?$")
_KRAFT_CONTROL = re.compile(r" (?:LeaderChange:|SnapshotHeader|SnapshotFooter|KRaftVersion|"
                            r"KRaftVoters) .*$")  # fmt: skip
_V2_ONLY = {"base_sequence", "last_sequence", "producer_id", "producer_epoch",
            "partition_leader_epoch", "is_transactional", "is_control",
            "delete_horizon_ms"}  # fmt: skip


@pytest.fixture(scope="session")
def kafka_log(kafka_clusters: Any, tmp_path_factory: pytest.TempPathFactory) -> KafkaLog:
    return write_kafka_log(kafka_clusters, tmp_path_factory)


def test_text_is_what_dump_log_segments_prints(kafka_log: KafkaLog) -> None:
    paths = kafka_log.segments()
    result = run_cli("segment", "dump", *map(str, paths))
    assert result.returncode == 0, result.stderr
    assert result.stdout == kafka_log.dump_text(paths)


def test_json_holds_the_dumped_fields_and_the_sent_bytes(kafka_log: KafkaLog) -> None:
    paths = kafka_log.segments()
    result = run_cli("segment", "dump", "--json", *map(str, paths))
    assert result.returncode == 0, result.stderr
    objects = [json.loads(line) for line in result.stdout.splitlines()]
    files = _by_file(objects)
    assert list(files) == [str(p) for p in paths]
    for path in paths:
        sent = kafka_log.sent[path.parent.name.rsplit("-", 1)[0]]
        batches = files[str(path)]
        dumped = kafka_log.dumps[path].batches
        assert [_java_fields(b) for b, _ in batches] == [d.fields for d in dumped]
        for (batch, records), java in zip(batches, dumped, strict=True):
            assert [_java_record(batch, r) for r in records] == java.records
            for r in [] if batch["is_control"] else records:
                want = sent[r["offset"]]
                headers = [(k, _raw(v)) for k, _, v in r["headers"]]
                assert (_raw(r["key_b64"]), _raw(r["value_b64"]), headers) == (
                    want.key, want.value, list(want.headers))  # fmt: skip


def _by_file(objects: list[dict[str, Any]]) -> dict[str, list[tuple[dict[str, Any], list[Any]]]]:
    files: dict[str, list[tuple[dict[str, Any], list[Any]]]] = {}
    current: list[tuple[dict[str, Any], list[Any]]] = []
    for obj in objects:
        if obj["type"] == "file":
            current = files.setdefault(obj["path"], [])
        elif obj["type"] == "batch":
            current.append((obj, []))
        else:
            current[-1][1].append(obj)
    return files


def _flag(value: bool) -> str:
    return "true" if value else "false"


def _java_fields(b: dict[str, Any]) -> dict[str, str]:
    horizon = b["delete_horizon_ms"]
    return {
        "baseOffset": str(b["base_offset"]),
        "lastOffset": str(b["last_offset"]),
        "count": str(b["count"]),
        "baseSequence": str(b["base_sequence"]),
        "lastSequence": str(b["last_sequence"]),
        "producerId": str(b["producer_id"]),
        "producerEpoch": str(b["producer_epoch"]),
        "partitionLeaderEpoch": str(b["partition_leader_epoch"]),
        "isTransactional": _flag(b["is_transactional"]),
        "isControl": _flag(b["is_control"]),
        "deleteHorizonMs": "OptionalLong.empty" if horizon is None else f"OptionalLong[{horizon}]",
        "position": str(b["position"]),
        b["timestamp_type"]: str(b["max_timestamp"]),
        "size": str(b["size"]),
        "magic": str(b["magic"]),
        "compresscodec": b["compression"],
        "crc": str(b["crc"]),
        "isvalid": _flag(b["is_valid"]),
    }


def _raw(b64: str | None) -> bytes | None:
    return None if b64 is None else base64.b64decode(b64)


def _size(b64: str | None) -> int:
    raw = _raw(b64)
    return -1 if raw is None else len(raw)


def _java_record(batch: dict[str, Any], r: dict[str, Any]) -> DumpedRecord:
    control = r.get("control")
    return DumpedRecord(
        offset=r["offset"],
        timestamp_type=r["timestamp_type"],
        timestamp=r["timestamp"],
        key_size=_size(r["key_b64"]),
        value_size=_size(r["value_b64"]),
        sequence=r["sequence"],
        header_keys=tuple(k for k, _, _ in r["headers"]),
        marker=None if control is None else control["type"],
        coordinator_epoch=None if control is None else control["coordinator_epoch"],
        key=None if batch["is_control"] else r["key"],
        payload=None if batch["is_control"] else r["value"],
    )


def _legacy_sets(testdata: Path) -> list[Path]:
    real = testdata / "real-segments"
    corpus = testdata / "corpus"
    return sorted([*real.glob("*.log"), *real.glob("kafka-go/*.msgset"),
                   *corpus.glob("kp-m[01]-*.bin"), *corpus.glob("kpb-*.bin")])  # fmt: skip


def test_shared_test_data_lines_up_with_dump_log_segments(
    kafka_log: KafkaLog, testdata: Path, tmp_path: Path
) -> None:
    """Old (magic 0/1) and mixed message sets, real segments of other brokers, a truncated tail:
    the batch lines are DumpLogSegments' own, the record lines too up to the key and payload
    (Java prints those raw, over several lines)."""
    copies = []
    extra = ["rdk-txn-snappy.fetch.bin", "rdk-none.fetch.truncated.bin"]
    for source in _legacy_sets(testdata) + [testdata / "corpus" / name for name in extra]:
        copy = tmp_path / source.name.replace(".", "_") / "00000000000000000000.log"
        copy.parent.mkdir()
        shutil.copyfile(source, copy)
        copies.append(copy)
    files = ",".join(map(str, copies))
    java = kafka_log.cluster.java(DUMP_LOG_SEGMENTS, "--files", files, "--deep-iteration")
    result = run_cli("segment", "dump", *map(str, copies))
    assert result.returncode == 0, result.stderr
    assert not re.search(r"\bNone\b|: null\b", result.stdout)
    ours = [_metadata(line) for line in result.stdout.splitlines()]
    theirs = [_KRAFT_CONTROL.sub("", line) for line in java.splitlines()]
    assert ours == theirs


def _metadata(line: str) -> str:
    """A record line without its key and payload (and its KRaft control record's body)."""
    if not line.startswith("| "):
        return line
    match = _CONTENT.match(line)
    assert match is not None
    return re.sub(r" controlType: \w+\(\d+\)$", "", match["meta"])


def test_legacy_json_leaves_out_what_legacy_sets_lack(testdata: Path) -> None:
    paths = [p for p in _legacy_sets(testdata) if "kafka-go" in str(p) or "kp-m" in p.name]
    result = run_cli("segment", "dump", "--json", *map(str, paths))
    assert result.returncode == 0, result.stderr
    objects = [json.loads(line) for line in result.stdout.splitlines()]
    legacy = [(b, rs) for f in _by_file(objects).values() for b, rs in f if b["magic"] < 2]
    assert sum(b["magic"] == 0 for b, _ in legacy) > 10
    for batch, records in legacy:
        assert not _V2_ONLY & set(batch) and None not in batch.values(), batch
        no_time = batch["magic"] == 0
        assert (batch["timestamp_type"] == "NoTimestampType") == no_time
        for r in records:
            assert "sequence" not in r and "headers" not in r and isinstance(r["crc"], int), r
            assert r["timestamp_type"] == batch["timestamp_type"]
            assert (r["timestamp"] == -1) == no_time, r


def test_skip_crc_prints_a_corrupt_batch_as_dump_log_segments_does(
    kafka_log: KafkaLog, tmp_path: Path
) -> None:
    source = kafka_log.segments(codec_topic("none"))[0]
    raw = bytearray(source.read_bytes())
    raw[raw.index(b"a-value-0")] = ord("A")  # an uncompressed batch: the CRC no longer matches
    copy = tmp_path / source.parent.name / source.name
    copy.parent.mkdir()
    copy.write_bytes(bytes(raw))
    java = kafka_log.cluster.java(DUMP_LOG_SEGMENTS, "--files", str(copy), "--print-data-log",
                                  "--deep-iteration")  # fmt: skip
    assert "isvalid: false" in java
    assert run_cli("segment", "dump", "--skip-crc", str(copy)).stdout == java
    strict = run_cli("segment", "dump", str(copy))
    assert strict.returncode == 1 and "CRC" in strict.stderr
