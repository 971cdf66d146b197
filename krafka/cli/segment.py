"""`krafka segment dump PATH...`: print the batches and records of `.log` segments.

What Kafka's `kafka-dump-log --deep-iteration --print-data-log` (DumpLogSegments) prints, in its
layout and with its field names, without Java, Spark or a broker: `Dumping PATH` (then `Log
starting offset: N` for a segment named by its base offset), one line per batch and, unless
`--no-data`, one `| offset: ...` line per record. Legacy (magic 0/1) entries get Kafka's legacy
layout: `offset:` (the wrapper's), no v2 fields, a CRC per record, -1 for a magic-0 timestamp.
Keys and values are printed as UTF-8 text with invalid bytes and control characters backslash-
escaped, so a record stays on one line (Kafka prints them raw); a null key or value is left out,
as Kafka does. `--json` prints JSON lines instead: `{"type": "file", ...}`, then `batch` and
`record` objects with the same fields in snake_case, key/value both as UTF-8 text (null when not
valid UTF-8) and as base64; a legacy entry has no v2 fields. Corrupt bytes stop the dump of that
file with the byte offset, exit status 1; with `--skip-crc` a CRC mismatch is printed as Kafka
prints it (`isvalid: false`) and the dump goes on. Bytes after the last whole batch are reported
as Kafka does (`Found N invalid bytes at the end of NAME`).
"""

from __future__ import annotations

import argparse
import base64
import json
import struct
import sys
from pathlib import Path
from typing import Any, Final, TextIO

from krafka.codec import RecordBatch, iter_batches, legacy_message_crcs, parse_control
from krafka.errors import CorruptRecordError, KrafkaError

_INT32_MAX: Final = 2**31 - 1
#: Kafka's `ControlRecordType` names, by type id.
_CONTROL_TYPES: Final = ("ABORT", "COMMIT", "LEADER_CHANGE", "SNAPSHOT_HEADER",
                         "SNAPSHOT_FOOTER", "KRAFT_VERSION", "KRAFT_VOTERS")  # fmt: skip
_TIMESTAMP_TYPES: Final = ("CreateTime", "LogAppendTime")


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
    """Print every batch of `buf` (and its records), stopping at the first corrupt one (or, not
    checking CRCs, at the first one that cannot be read: a CRC mismatch is then `isvalid:
    false`, as Kafka prints it)."""
    position = 0
    for batch in iter_batches(buf, check_crc=check_crc):
        size = batch.batch_length + 12
        valid = check_crc or _crc_matches(memoryview(buf)[position : position + size])
        printer.batch(batch_fields(batch, position, valid))
        if records:
            crcs = legacy_message_crcs(buf, position, check_crc=False) if batch.magic < 2 else None
            for i, record in enumerate(batch.records):
                crc = None if crcs is None else crcs[i]
                printer.record(record_fields(batch, record, crc, valid))
        position += size
    if position < len(buf):
        printer.trailing(len(buf) - position)


def _crc_matches(entry: memoryview) -> bool:
    try:
        next(iter_batches(entry, check_crc=True))
    except CorruptRecordError:
        return False
    return True


def starting_offset(path: str) -> int | None:
    """The base offset a segment's file name gives (`00000000000000000100.log`), if any."""
    name = Path(path).name
    stem = name.split(".")[0]
    return int(stem) if name.endswith(".log") and stem.isdigit() else None


def _sequence(base_sequence: int, delta: int) -> int:
    """Kafka's sequence of a batch's `delta`-th record: -1 without one, wrapping at 2^31-1."""
    if base_sequence < 0:
        return -1
    over = base_sequence + delta - _INT32_MAX
    return over - 1 if over > 0 else base_sequence + delta


def _ts_type_name(batch: RecordBatch) -> str:
    ts_type = batch.timestamp_type
    return "NoTimestampType" if ts_type is None else _TIMESTAMP_TYPES[ts_type]


def batch_fields(batch: RecordBatch, position: int, valid: bool = True) -> dict[str, Any]:
    """A batch's fields as DumpLogSegments names them (snake_case), v2 or legacy."""
    if batch.magic >= 2:
        delta = batch.last_offset_delta
        head = {
            "base_offset": batch.base_offset,
            "last_offset": batch.last_offset,
            "count": len(batch.records),
            "base_sequence": batch.base_sequence,
            "last_sequence": _sequence(batch.base_sequence, delta),
            "producer_id": batch.producer_id,
            "producer_epoch": batch.producer_epoch,
            "partition_leader_epoch": batch.partition_leader_epoch,
            "is_transactional": batch.is_transactional,
            "is_control": batch.is_control,
            "delete_horizon_ms": batch.first_timestamp if batch.attributes & 0x40 else None,
        }
        max_timestamp = batch.max_timestamp
    else:
        head = {"offset": batch.base_offset, "count": len(batch.records)}
        max_timestamp = -1 if batch.wrapper_timestamp is None else batch.wrapper_timestamp
    return {
        **head,
        "position": position,
        "timestamp_type": _ts_type_name(batch),
        "max_timestamp": max_timestamp,
        "size": batch.batch_length + 12,
        "magic": batch.magic,
        "compression": str(batch.compression),
        "crc": batch.crc,
        "is_valid": valid,
    }


def _control(record: Any) -> dict[str, Any]:
    """A control record's type (Kafka's names) and, for a transaction marker, its epoch."""
    key = record.key
    kind = struct.unpack_from(">h", key, 2)[0] if key is not None and len(key) >= 4 else -1
    if kind in (0, 1):
        try:
            marker = parse_control(record)
        except CorruptRecordError:
            pass
        else:
            return {"type": marker.type.name, "coordinator_epoch": marker.coordinator_epoch}
    name = _CONTROL_TYPES[kind] if 0 <= kind < len(_CONTROL_TYPES) else "UNKNOWN"
    return {"type": name, "type_id": kind}


def record_fields(
    batch: RecordBatch, record: Any, crc: int | None, valid: bool = True
) -> dict[str, Any]:
    """A record's fields as DumpLogSegments names them, with its key, value and headers."""
    fields: dict[str, Any] = {
        "offset": record.offset,
        "timestamp": -1 if record.timestamp is None else record.timestamp,
        "timestamp_type": _ts_type_name(batch),
        "key": record.key,
        "value": record.value,
    }
    if batch.magic >= 2:
        fields["sequence"] = _sequence(batch.base_sequence, record.offset - batch.base_offset)
        fields["headers"] = list(record.headers)
    else:
        fields["is_valid"] = valid
        fields["crc"] = crc
    if batch.is_control:
        fields["control"] = _control(record)
    return fields


def _flag(value: bool) -> str:
    return "true" if value else "false"


_ESCAPES = {c: f"\\x{c:02x}" for c in range(32)} | {9: "\\t", 10: "\\n", 13: "\\r", 127: "\\x7f"}


def _text(data: bytes) -> str:
    """UTF-8 text on one line: invalid bytes and control characters backslash-escaped."""
    return data.decode("utf-8", "backslashreplace").translate(_ESCAPES)


def _size(data: bytes | None) -> int:
    return -1 if data is None else len(data)


class TextPrinter:
    """DumpLogSegments' layout: `key: value` pairs, records prefixed with `| `."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.name = ""

    def file(self, path: str) -> None:
        self.name = Path(path).name
        print(f"Dumping {path}", file=self.out)
        start = starting_offset(path)
        if start is not None:
            print(f"Log starting offset: {start}", file=self.out)

    def batch(self, f: dict[str, Any]) -> None:
        if f["magic"] >= 2:
            horizon = f["delete_horizon_ms"]
            head = (
                f"baseOffset: {f['base_offset']} lastOffset: {f['last_offset']} "
                f"count: {f['count']} baseSequence: {f['base_sequence']} "
                f"lastSequence: {f['last_sequence']} producerId: {f['producer_id']} "
                f"producerEpoch: {f['producer_epoch']} "
                f"partitionLeaderEpoch: {f['partition_leader_epoch']} "
                f"isTransactional: {_flag(f['is_transactional'])} "
                f"isControl: {_flag(f['is_control'])} deleteHorizonMs: "
                + ("OptionalLong.empty" if horizon is None else f"OptionalLong[{horizon}]")
            )
        else:
            head = f"offset: {f['offset']}"
        print(
            f"{head} position: {f['position']} {f['timestamp_type']}: {f['max_timestamp']} "
            f"size: {f['size']} magic: {f['magic']} compresscodec: {f['compression']} "
            f"crc: {f['crc']} isvalid: {_flag(f['is_valid'])}",
            file=self.out,
        )

    def record(self, f: dict[str, Any]) -> None:
        key, value = f["key"], f["value"]
        line = (
            f"| offset: {f['offset']} {f['timestamp_type']}: {f['timestamp']} "
            f"keySize: {_size(key)} valueSize: {_size(value)}"
        )
        if "sequence" in f:
            names = ",".join(k for k, _ in f["headers"])
            line += f" sequence: {f['sequence']} headerKeys: [{names}]"
        else:
            line += f" isValid: {_flag(f['is_valid'])} crc: {f['crc']}"
        control = f.get("control")
        if control is None:
            line += "" if key is None else f" key: {_text(key)}"
            line += "" if value is None else f" payload: {_text(value)}"
        elif "coordinator_epoch" in control:
            line += f" endTxnMarker: {control['type']} coordinatorEpoch: "
            line += str(control["coordinator_epoch"])
        else:
            line += f" controlType: {control['type']}({control['type_id']})"
        print(line, file=self.out)

    def trailing(self, size: int) -> None:
        print(f"Found {size} invalid bytes at the end of {self.name}", file=self.out)


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
        start = starting_offset(path)
        extra = {} if start is None else {"starting_offset": start}
        self._emit({"type": "file", "path": path, **extra})

    def batch(self, f: dict[str, Any]) -> None:
        self._emit({"type": "batch", **f})

    def record(self, f: dict[str, Any]) -> None:
        key, value = f.pop("key"), f.pop("value")
        obj = {"type": "record", **f}
        obj.update(key=_utf8(key), key_b64=_b64(key), value=_utf8(value), value_b64=_b64(value))
        if "headers" in f:
            obj["headers"] = [[k, _utf8(v), _b64(v)] for k, v in f["headers"]]
        self._emit(obj)

    def trailing(self, size: int) -> None:
        self._emit({"type": "trailing", "size": size})
