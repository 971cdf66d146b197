"""Fetched batches to Arrow on one core: `poll_arrow`'s decode beside aiokafka + pyarrow.

    python benches/arrow.py [--records 1000000] [--per-batch 1000] [--codec none,zstd]
                            [--max-records N]

One fetched buffer (what a Fetch response holds for a partition) of `--records` records
(`key-<i>` keys, 100-byte values, no headers) in batches of `--per-batch`, per codec. Each side
turns it into a `pyarrow.RecordBatch` in `poll_arrow`'s schema (`krafka.arrow.kafka_schema()`:
Spark's Kafka row with headers):

- `krafka`: `decode_fetched` with `spark_rows`, the decode `Consumer.poll_arrow` runs (records
  decoded by the compiled codec straight into Arrow buffers, no Python object per record);
- `aiokafka+pyarrow`: aiokafka's compiled codec (`MemoryRecords`, its consumer's path) reading
  every record, then `pa.array` per column from those records (what a user of it would write).

Runs alternate between the sides; medians of rows per CPU second of the process
(`time.process_time`: one thread, so rows/s on one core however busy the machine is) and of
rows per wall second. The network and the broker are not in it (`benches/consume.py --cluster kafka
--clients krafka-arrow,aiokafka-arrow` measures `poll_arrow` end to end).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pyarrow as pa
from _timing import rate, table
from aiokafka.record.memory_records import MemoryRecords

from krafka.arrow import decode_fetched, kafka_schema, spark_rows
from krafka.codec import Record, encode_batch

VALUE = b"x" * 100
SCHEMA = kafka_schema()


def fetched(records: int, per_batch: int, codec: str) -> bytes:
    parts, offset = [], 0
    while offset < records:
        n = min(per_batch, records - offset)
        batch = [Record(i, 1_700_000_000_000 + i, b"key-%d" % (offset + i), VALUE, [])
                 for i in range(n)]  # fmt: skip
        parts.append(encode_batch(batch, codec, offset, -1, -1, -1, False))
        offset += n
    return b"".join(parts)


def krafka(buf: bytes, records: int, max_rows: int = 1 << 62) -> Callable[[], Any]:
    def run() -> Any:
        out = list(decode_fetched(buf, topic="t", partition=0, start=0, end=records,
                                  max_rows=max_rows, finish=spark_rows))  # fmt: skip
        assert sum(b.num_rows for b in out) == records
        return out

    return run


def aiokafka(buf: bytes, records: int) -> Callable[[], Any]:
    def run() -> Any:
        rs: list[Any] = []
        memory = MemoryRecords(buf)
        while (batch := memory.next_batch()) is not None:
            rs += batch
        out = pa.RecordBatch.from_arrays(
            [
                pa.array([r.key for r in rs], pa.binary()),
                pa.array([r.value for r in rs], pa.binary()),
                pa.array(["t"] * len(rs), pa.string()),
                pa.array([0] * len(rs), pa.int32()),
                pa.array([r.offset for r in rs], pa.int64()),
                pa.array([r.timestamp * 1000 for r in rs], SCHEMA.field("timestamp").type),
                pa.array([r.timestamp_type for r in rs], pa.int32()),
                pa.array([list(r.headers) or None for r in rs], SCHEMA.field("headers").type),
            ],
            schema=SCHEMA,
        )
        assert out.num_rows == records
        return out

    return run


def measure(fns: dict[str, Callable[[], Any]], samples: int) -> dict[str, tuple[float, float]]:
    """Median (CPU seconds, wall seconds) per call of each function, run in alternation."""
    runs: dict[str, list[tuple[float, float]]] = {name: [] for name in fns}
    names = list(fns)
    for i in range(samples):
        for name in names[i % len(names) :] + names[: i % len(names)]:
            cpu, wall = time.process_time(), time.perf_counter()
            fns[name]()
            runs[name].append((time.process_time() - cpu, time.perf_counter() - wall))
    return {
        name: (statistics.median(r[0] for r in rs), statistics.median(r[1] for r in rs))
        for name, rs in runs.items()
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--per-batch", type=int, default=1000)
    parser.add_argument("--codec", default="none,zstd")
    parser.add_argument("--samples", type=int, default=7)
    parser.add_argument("--max-records", type=int, default=None,
                        help="krafka's rows per Arrow batch, as poll_arrow(max_records=...); "
                        "default: one batch per fetched buffer")  # fmt: skip
    args = parser.parse_args()
    rows = []
    for codec in args.codec.split(","):
        buf = fetched(args.records, args.per_batch, codec)
        mine_run = krafka(buf, args.records, args.max_records or 1 << 62)
        assert mine_run()[0].schema == aiokafka(buf, args.records)().schema
        timings = measure(
            {"krafka": mine_run, "aiokafka": aiokafka(buf, args.records)},
            args.samples,
        )
        n, mine, peer = args.records, timings["krafka"], timings["aiokafka"]
        rows.append([codec, rate(n, mine[0]) + " rows/s", rate(n, peer[0]) + " rows/s",
                     f"{peer[0] / mine[0]:.1f}x", rate(n, mine[1]) + " rows/s",
                     rate(n, peer[1]) + " rows/s"])  # fmt: skip
    title = (f"{args.records:,} x 100 B records, {args.per_batch} per batch, to Arrow on one "
             f"thread (medians of {args.samples})")  # fmt: skip
    header = ["codec", "krafka /cpu s", "aiokafka+pyarrow /cpu s", "ratio", "krafka /wall s",
              "aiokafka+pyarrow /wall s"]  # fmt: skip
    print(table(title, header, rows))


if __name__ == "__main__":
    main()
