"""`krafka segment dump PATH...`: print the batches and records of `.log` segments.

What Kafka's `kafka-dump-log --print-data-log` does, without Java, Spark or a broker: one line
per batch (offsets, producer, flags, position, timestamps, codec, CRC) and, unless `--no-data`,
one line per record (offset, timestamp, sizes, headers, key, value; control records show their
transaction marker). `--json` prints JSON lines instead: `{"type": "batch", ...}` then
`{"type": "record", ...}` objects, with key/value both as UTF-8 text (null when not valid UTF-8)
and as base64. Corrupt bytes stop the dump of that file with the byte offset, exit status 1.
"""

from __future__ import annotations

import argparse
import base64
import json
import sys
from pathlib import Path
from typing import Any, TextIO

from krafka.codec import BatchHeader, iter_batch_records, parse_control, scan_batches
from krafka.errors import CorruptRecordError, KrafkaError


def add_parser(subparsers: Any) -> None:
    group = subparsers.add_parser("segment", help="inspect Kafka log segment files")
    commands = group.add_subparsers(dest="segment_command", metavar="COMMAND", required=True)
    dump = commands.add_parser(
        "dump",
        help="print the batches and records of segment files (like kafka-dump-log)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    dump.add_argument("paths", nargs="+", metavar="PATH", help=".log segment (or raw batches)")
    dump.add_argument("--json", action="store_true", help="JSON lines instead of text")
    dump.add_argument("--no-data", action="store_true", help="batches only, no records")
    dump.add_argument("--skip-crc", action="store_true", help="do not verify CRCs")
    dump.set_defaults(func=run_dump)


def run_dump(args: argparse.Namespace) -> int:
    status = 0
    for path in args.paths:
        try:
            buf = Path(path).read_bytes()
        except OSError as exc:
            print(f"krafka segment dump: {exc}", file=sys.stderr)
            status = 1
            continue
        printer = JsonPrinter(sys.stdout) if args.json else TextPrinter(sys.stdout)
        printer.file(path)
        try:
            dump(buf, printer, records=not args.no_data, check_crc=not args.skip_crc)
        except KrafkaError as exc:
            print(f"krafka segment dump: {path}: {exc}", file=sys.stderr)
            status = 1
    return status


def dump(buf: bytes, printer: Any, records: bool = True, check_crc: bool = True) -> None:
    """Print every batch of `buf` (and its records), stopping at the first corrupt one."""
    for header in scan_batches(buf):
        decoded = list(iter_batch_records(buf, header, check_crc=check_crc))
        printer.batch(header, decoded)
        if records:
            for record in decoded:
                printer.record(header, record)


def _flag(value: bool) -> str:
    return "true" if value else "false"


_ESCAPES = {c: f"\\x{c:02x}" for c in range(32)} | {9: "\\t", 10: "\\n", 13: "\\r", 127: "\\x7f"}


def _text(data: bytes | None) -> str:
    """UTF-8 text on one line: invalid bytes and control characters backslash-escaped."""
    if data is None:
        return "null"
    return data.decode("utf-8", "backslashreplace").translate(_ESCAPES)


def _ts_type_name(header: BatchHeader) -> str:
    ts_type = header.timestamp_type
    return "NoTimestampType" if ts_type is None else ("CreateTime", "LogAppendTime")[ts_type]


def _marker(record: Any) -> dict[str, Any] | None:
    try:
        control = parse_control(record)
    except CorruptRecordError:
        return None
    return {"type": control.type.name, "coordinator_epoch": control.coordinator_epoch}


def _batch_fields(header: BatchHeader, records: list[Any]) -> dict[str, Any]:
    last = records[-1].offset if records and header.magic < 2 else header.last_offset
    return {
        "base_offset": records[0].offset if records and header.magic < 2 else header.base_offset,
        "last_offset": last,
        "count": header.record_count if header.magic == 2 else len(records),
        "base_sequence": header.base_sequence,
        "producer_id": header.producer_id,
        "producer_epoch": header.producer_epoch,
        "partition_leader_epoch": header.partition_leader_epoch,
        "is_transactional": header.is_transactional,
        "is_control": header.is_control,
        "position": header.byte_offset,
        "timestamp_type": _ts_type_name(header),
        "max_timestamp": header.max_timestamp,
        "size": header.byte_length,
        "magic": header.magic,
        "compression": str(header.compression),
        "crc": header.crc,
    }


class TextPrinter:
    """kafka-dump-log's layout: `key: value` pairs, records prefixed with `| `."""

    def __init__(self, out: TextIO) -> None:
        self.out = out

    def file(self, path: str) -> None:
        print(f"Dumping {path}", file=self.out)

    def batch(self, header: BatchHeader, records: list[Any]) -> None:
        f = _batch_fields(header, records)
        print(
            f"baseOffset: {f['base_offset']} lastOffset: {f['last_offset']} count: {f['count']} "
            f"baseSequence: {f['base_sequence']} producerId: {f['producer_id']} "
            f"producerEpoch: {f['producer_epoch']} "
            f"partitionLeaderEpoch: {f['partition_leader_epoch']} "
            f"isTransactional: {_flag(f['is_transactional'])} "
            f"isControl: {_flag(f['is_control'])} position: {f['position']} "
            f"{f['timestamp_type']}: {f['max_timestamp']} size: {f['size']} magic: {f['magic']} "
            f"compresscodec: {f['compression']} crc: {f['crc']} isvalid: true",
            file=self.out,
        )

    def record(self, header: BatchHeader, record: Any) -> None:
        parts = [f"| offset: {record.offset}", f"{_ts_type_name(header)}: {record.timestamp}"]
        key, value = record.key, record.value
        parts.append(f"keySize: {-1 if key is None else len(key)}")
        parts.append(f"valueSize: {-1 if value is None else len(value)}")
        marker = _marker(record) if header.is_control else None
        if marker is not None:
            parts.append(f"endTxnMarker: {marker['type']}")
            parts.append(f"coordinatorEpoch: {marker['coordinator_epoch']}")
        else:
            names = ", ".join(k for k, _ in record.headers)
            parts.append(f"headerKeys: [{names}]")
            parts.append(f"key: {_text(key)}")
            parts.append(f"payload: {_text(value)}")
        print(" ".join(parts), file=self.out)


def _utf8(data: bytes | None) -> str | None:
    if data is None:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _b64(data: bytes | None) -> str | None:
    return None if data is None else base64.b64encode(data).decode("ascii")


class JsonPrinter:
    """One JSON object per line: a `file`, then its `batch` and `record` objects."""

    def __init__(self, out: TextIO) -> None:
        self.out = out

    def _emit(self, obj: dict[str, Any]) -> None:
        self.out.write(json.dumps(obj, ensure_ascii=False) + "\n")

    def file(self, path: str) -> None:
        self._emit({"type": "file", "path": path})

    def batch(self, header: BatchHeader, records: list[Any]) -> None:
        self._emit({"type": "batch", **_batch_fields(header, records)})

    def record(self, header: BatchHeader, record: Any) -> None:
        obj: dict[str, Any] = {
            "type": "record",
            "offset": record.offset,
            "timestamp": record.timestamp,
            "timestamp_type": _ts_type_name(header),
            "key": _utf8(record.key),
            "key_b64": _b64(record.key),
            "value": _utf8(record.value),
            "value_b64": _b64(record.value),
            "headers": [[k, _utf8(v), _b64(v)] for k, v in record.headers],
        }
        if header.is_control:
            obj["control"] = _marker(record)
        self._emit(obj)
