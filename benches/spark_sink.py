"""The `format("krafka")` sink's task body outside Spark: client CPU per record of writing
Arrow batches to Kafka.

    python benches/spark_sink.py --cluster kafka [--records 1000000] [--rounds 5]
        [--partitions 4] [--value-size 100] [--rows-per-batch 10000] [--baseline DIR]

What a Spark task of `df.write.format("krafka")` runs on its executor
(`krafka.spark.kafka_write.write_batches`), fed `--records` rows of keys "key-<i>" and
`--value-size`-byte values in Arrow batches of `--rows-per-batch` (Spark's Arrow batch size
is 10,000), to a topic of `--partitions` partitions, every record acknowledged (the sink's
work). Each run is a fresh process: the clock starts after one warm-up row went through the
pooled producer. Medians of rows/s and client CPU µs per record (`time.process_time`: the
caller's and the producer's loop thread) and the broker's CPU seconds. `--baseline DIR` runs
the same body from another krafka source tree by turns (`base`), for before/after figures.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _cluster import CLUSTERS, broker, create_topic


def child(bootstrap: str, topic: str, records: int, size: int, rows: int) -> None:
    """One measured run in this process; prints it as JSON."""
    import pyarrow as pa

    from krafka.spark.client_pool import PRODUCERS
    from krafka.spark.kafka_options import SinkOptions
    from krafka.spark.kafka_write import write_batches

    options = SinkOptions.parse({"kafka.bootstrap.servers": bootstrap, "topic": topic})
    value = b"x" * size

    def batch(first: int, count: int) -> pa.RecordBatch:
        keys = pa.array([b"key-%d" % i for i in range(first, first + count)], pa.binary())
        return pa.RecordBatch.from_arrays(
            [keys, pa.array([value] * count, pa.binary())], names=["key", "value"]
        )

    batches = [batch(first, min(rows, records - first)) for first in range(0, records, rows)]
    write_batches(iter([batch(0, 1)]), options)  # connections, metadata, producer id
    wall, cpu = time.perf_counter(), time.process_time()
    written = write_batches(iter(batches), options)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    PRODUCERS.close()
    assert written == records, written
    print(json.dumps({"seconds": wall, "cpu": cpu}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cluster", choices=CLUSTERS, default="kafka")
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--value-size", type=int, default=100)
    parser.add_argument("--rows-per-batch", type=int, default=10_000)
    parser.add_argument("--baseline", help="another krafka source tree, run by turns as 'base'")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        bootstrap, topic = args.child
        child(bootstrap, topic, args.records, args.value_size, args.rows_per_batch)
        return
    trees = {"krafka": str(Path(__file__).resolve().parents[1])}
    if args.baseline:
        trees["base"] = str(Path(args.baseline).resolve())
    runs: dict[str, list[tuple[float, float, float]]] = {name: [] for name in trees}
    with broker(args.cluster) as running:
        for rnd in range(args.rounds):
            names = list(trees)[rnd % len(trees) :] + list(trees)[: rnd % len(trees)]
            for name in names:
                topic = f"sink-{name}-{rnd}"
                create_topic(running.bootstrap, topic, args.partitions)
                broker_cpu = running.cpu()
                done = subprocess.run(
                    [sys.executable, str(Path(trees[name]) / "benches" / "spark_sink.py"),
                     "--child", running.bootstrap, topic, "--records", str(args.records),
                     "--value-size", str(args.value_size),
                     "--rows-per-batch", str(args.rows_per_batch)],
                    check=True, capture_output=True, text=True, timeout=900,
                    env={**os.environ, "PYTHONPATH": trees[name]},
                )  # fmt: skip
                data = json.loads(done.stdout.strip().splitlines()[-1])
                run = (args.records / data["seconds"], data["cpu"] / args.records * 1e6,
                       running.cpu() - broker_cpu)  # fmt: skip
                runs[name].append(run)
                print(f"round {rnd + 1} {name:8s} {run[0]:>12,.0f} rows/s {run[1]:6.2f} CPU "
                      f"µs/rec  broker {run[2]:5.2f} s", flush=True)  # fmt: skip
    print(
        f"\n{args.cluster}: sink task body, medians over {args.rounds} rounds, "
        f"{args.records:,} x {args.value_size} B in Arrow batches of {args.rows_per_batch:,}, "
        f"{args.partitions} partitions:"
    )
    print(f"  {'tree':8s} {'rows/s':>12s}  {'CPU µs/rec':>10s}  {'broker CPU s':>12s}")
    for name, found in runs.items():
        rate, cpu, broker_cpu = (statistics.median(column) for column in zip(*found, strict=True))
        print(f"  {name:8s} {rate:>12,.0f}  {cpu:10.2f}  {broker_cpu:12.2f}")


if __name__ == "__main__":
    main()
