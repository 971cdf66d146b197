"""`krafka segment dump` prints every batch and record of a segment."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from pathlib import Path

import pytest

from krafka.cli import main
from krafka.codec import decode_batches

ROOT = Path(__file__).resolve().parents[2]


def _segments(testdata: Path) -> list[Path]:
    real = testdata / "real-segments"
    corpus = testdata / "corpus"
    files = [*real.glob("*.log"), *real.glob("kafka-go/*.msgset"), *corpus.glob("segments/*/*.log")]
    return sorted([*files, corpus / "rdk-txn-snappy.fetch.bin"])


def test_json_lines_hold_every_record(testdata: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for path in _segments(testdata):
        assert main(["segment", "dump", "--json", str(path)]) == 0
        lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
        batches = decode_batches(path.read_bytes())
        want = [(r.offset, r.key, r.value) for b in batches for r in b.records]
        got = [(o["offset"], _raw(o["key_b64"]), _raw(o["value_b64"]))
               for o in lines if o["type"] == "record"]  # fmt: skip
        assert got == want, path.name
        assert sum(o["type"] == "batch" for o in lines) == len(batches)


def _raw(b64: str | None) -> bytes | None:
    return None if b64 is None else base64.b64decode(b64)


def test_text_prints_one_line_per_batch_and_record(
    testdata: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = testdata / "corpus" / "rdk-txn-snappy.fetch.bin"
    assert main(["segment", "dump", str(path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"Dumping {path}"
    records = [line for line in lines if line.startswith("| offset: ")]
    assert [int(line.split()[2]) for line in records] == list(range(93))
    markers = [
        line.split("endTxnMarker: ")[1].split()[0] for line in records if "endTxnMarker" in line
    ]
    assert markers == ["COMMIT", "ABORT", "COMMIT"]
    assert sum(line.startswith("baseOffset: ") for line in lines) == 6
    assert main(["segment", "dump", "--no-data", str(path)]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 7


def test_legacy_entries_print_no_none(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Magic 0/1 entries have no v2 fields (sequence, producer id ...): none is printed as
    `None`, and a magic-0 timestamp is Kafka's -1."""
    from kafka.record.legacy_records import LegacyRecordBatchBuilder

    raw = b""
    for magic in (0, 1):
        for codec in (0, 1):
            builder = LegacyRecordBatchBuilder(
                magic=magic, compression_type=codec, batch_size=1 << 16
            )
            builder.append(0, timestamp=None if magic == 0 else 1000, key=b"k", value=b"v")
            builder.append(1, timestamp=None if magic == 0 else 1001, key=None, value=b"w")
            raw += bytes(builder.build())
    path = tmp_path / "legacy.log"
    path.write_bytes(raw)
    assert main(["segment", "dump", str(path)]) == 0
    out = capsys.readouterr().out
    assert "None" not in out
    assert out.count("magic: 0 ") == 3 and out.count("magic: 1 ") == 3
    assert "NoTimestampType: -1 keySize: 1 valueSize: 1" in out
    assert main(["segment", "dump", "--json", str(path)]) == 0
    batches = [json.loads(line) for line in capsys.readouterr().out.splitlines()[1:]]
    assert all(v is not None for b in batches if b["type"] == "batch" for v in b.values())


def test_corrupt_segment_exits_1_naming_the_byte(
    testdata: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    raw = bytearray((testdata / "corpus" / "kp-v2-none.fetch.bin").read_bytes())
    first = next(iter(decode_batches(bytes(raw))))
    second_at = first.batch_length + 12
    raw[second_at + 100] ^= 0xFF
    path = tmp_path / "bad.log"
    path.write_bytes(bytes(raw))
    assert main(["segment", "dump", str(path)]) == 1
    captured = capsys.readouterr()
    assert f"at byte {second_at}" in captured.err and "CRC" in captured.err
    assert captured.out.count("baseOffset: ") == 1


def test_console_entry_point(testdata: Path) -> None:
    path = testdata / "real-segments" / "kaspar_someTopic-0_100.log"
    done = subprocess.run(
        [sys.executable, "-m", "krafka.cli", "segment", "dump", str(path)],
        capture_output=True, text=True, cwd=ROOT, check=True,
    )  # fmt: skip
    assert "| offset: 0 " in done.stdout and "payload: key,val" in done.stdout
