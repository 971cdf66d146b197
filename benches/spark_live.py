"""`format("krafka")` reading a live topic, against Spark's own ceiling for Python data sources.

    python benches/spark_live.py [--records 2000000] [--repeat 3]

A local Tansu broker; a topic of 4 partitions filled with N records of 100-byte values (keys
"key-<i>") by krafka's producer. Spark local[2], same run, medians of `--repeat`:

- `format("krafka")` (4 tasks, one standalone consumer each) into `count()` and into a parquet
  write;
- `read_segments` (mapInArrow) over the same record batches fetched from the broker and written
  as `.log` segments, into the same two sinks;
- the ceiling: a Python data source emitting the same number of constant rows of the Kafka
  schema (4 tasks), into the same sinks: what Spark's Python data source path costs by itself;
- the same-rows ceiling: a Python data source replaying the topic's own rows, decoded
  beforehand into one Arrow IPC file per partition (memory-mapped, 4 tasks): the same path
  with the same data. Constant rows cost a parquet writer far less than real ones (they
  repeat: dictionaries, runs), so for the parquet sink this is the like-for-like ceiling.

Ratios are `format("krafka")` / ceiling (the issue's goal: >= 0.8), for both ceilings. Beside
each rate: the CPU seconds the whole machine and the broker alone spent per run (Linux /proc),
for the CPU budget: on a small machine the broker serving the topic competes with Spark.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benches"))

from spark import ConstantSource, start_spark  # noqa: E402

from krafka import NewTopic, TopicPartition  # noqa: E402
from krafka.sync import AdminClient, Consumer, Producer  # noqa: E402

TOPIC = "spark-live"
PARTITIONS = 4


def fill(bootstrap: str, records: int) -> None:
    with AdminClient(bootstrap) as admin:
        admin.create_topics([NewTopic(TOPIC, PARTITIONS)]).raise_for_errors()
    value = b"v" * 100
    with Producer(bootstrap, linger=0.02, batch_size=1 << 20) as producer:
        for i in range(records):
            producer.send(TOPIC, value, key=b"key-%d" % i, partition=i % PARTITIONS)
        producer.flush()


def dump_segments(bootstrap: str, records: int, root: Path) -> None:
    """The topic's record batches, fetched raw, as one `.log` segment per partition."""
    files = {}
    for p in range(PARTITIONS):
        folder = root / f"{TOPIC}-{p}"
        folder.mkdir(parents=True)
        files[p] = (folder / "00000000000000000000.log").open("wb")
    with Consumer(bootstrap, auto_offset_reset="earliest") as consumer:
        consumer.assign([TopicPartition(TOPIC, p) for p in range(PARTITIONS)])
        ends = dict.fromkeys(range(PARTITIONS), 0)
        while sum(ends.values()) < records:
            for batch in consumer.poll_batches(1.0):
                files[batch.partition.partition].write(batch.data)
                ends[batch.partition.partition] = batch.next_offset
    for f in files.values():
        f.close()


def kafka_chunk(segment: Path, rows: int) -> Any:
    """`rows` rows of the Kafka schema decoded from real data (repeated to size)."""
    import pyarrow as pa

    from krafka.arrow import iter_arrow_batches
    from krafka.spark.kafka_read import shape

    wide = next(iter_arrow_batches(segment.read_bytes()[: 8 << 20], timestamp_unit="us"))
    one = shape(wide, False)
    table = pa.Table.from_batches([one] * (rows // one.num_rows + 1)).slice(0, rows)
    return table.combine_chunks().to_batches()[0]


def dump_arrow(logs: Path, out: Path) -> list[str]:
    """Each partition's rows in the Kafka source's columns, as one Arrow IPC file."""
    import pyarrow as pa

    from krafka.arrow import iter_arrow_batches
    from krafka.spark.kafka_read import shape

    out.mkdir()
    files = []
    for segment in sorted(logs.glob("*/*.log")):
        path = out / f"{segment.parent.name}.arrow"
        batches = [shape(b, False) for b in iter_arrow_batches(segment.read_bytes(),
                                                               timestamp_unit="us")]  # fmt: skip
        with pa.ipc.new_file(str(path), batches[0].schema) as writer:
            for batch in batches:
                writer.write_batch(batch)
        files.append(str(path))
    return files


class ReplaySource:
    """A Python data source replaying Arrow IPC files, one task each (memory-mapped)."""

    @staticmethod
    def make(files: list[str], schema: Any, name: str) -> Any:
        from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

        paths = list(files)

        class Reader(DataSourceReader):  # type: ignore[misc]
            def partitions(self) -> list[Any]:
                return [InputPartition(p) for p in paths]

            def read(self, partition: Any) -> Iterator[Any]:
                import pyarrow as pa

                with pa.memory_map(partition.value) as source:
                    reader = pa.ipc.open_file(source)
                    for i in range(reader.num_record_batches):
                        yield reader.get_batch(i)

        class Source(DataSource):  # type: ignore[misc]
            @classmethod
            def name(cls) -> str:
                return name

            def schema(self) -> Any:
                return schema

            def reader(self, schema: Any) -> Any:
                return Reader()

        return Source


def cpu_seconds(pid: int | None) -> tuple[float, float]:
    """(CPU seconds the whole machine has been busy, CPU seconds of process `pid`) so far."""
    tick = os.sysconf("SC_CLK_TCK")
    with open("/proc/stat") as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    busy = sum(fields) - fields[3] - fields[4]  # all but idle and iowait
    own = 0
    if pid is not None:
        with open(f"/proc/{pid}/stat") as f:
            stat = f.read().rsplit(")", 1)[1].split()
        own = int(stat[11]) + int(stat[12])  # utime, stime
    return busy / tick, own / tick


def median_time(
    fn: Callable[[], object], repeat: int, pid: int | None = None
) -> tuple[float, float, float]:
    """Median (seconds, machine CPU seconds, `pid`'s CPU seconds) of `repeat` runs."""
    runs = []
    for _ in range(repeat):
        machine, broker = cpu_seconds(pid)
        start = time.perf_counter()
        fn()
        elapsed = time.perf_counter() - start
        machine_after, broker_after = cpu_seconds(pid)
        runs.append((elapsed, machine_after - machine, broker_after - broker))
    return statistics.median(runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--records", type=int, default=2_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    from krafka.spark import read_segments
    from krafka.testing import LocalBroker

    n = args.records
    with LocalBroker() as broker, tempfile.TemporaryDirectory(prefix="krafka-live-") as tmp:
        bootstrap = broker.bootstrap_servers
        fill(bootstrap, n)
        dump_segments(bootstrap, n, Path(tmp) / "logs")
        spark = start_spark()
        live = (
            spark.read.format("krafka")
            .option("kafka.bootstrap.servers", bootstrap)
            .option("subscribe", TOPIC)
            .option("startingOffsets", "earliest")
            .load()
        )
        segments = read_segments(spark, str(Path(tmp) / "logs"))
        chunk = kafka_chunk(next((Path(tmp) / "logs").glob("*/*.log")), 65_536)
        from krafka.spark.kafka_read import spark_schema

        name = "krafka-bench-kafka-constant"
        source = ConstantSource.make(chunk, n, PARTITIONS, spark_schema(False), name)
        spark.dataSource.register(source)
        ceiling = spark.read.format(name).load()
        files = dump_arrow(Path(tmp) / "logs", Path(tmp) / "arrow")
        replay_name = "krafka-bench-kafka-replay"
        spark.dataSource.register(ReplaySource.make(files, spark_schema(False), replay_name))
        replay = spark.read.format(replay_name).load()
        assert live.count() == n == replay.count(), live.count()
        out = Path(tmp) / "parquet"

        def parquet(df: Any) -> Callable[[], None]:
            return lambda: df.write.mode("overwrite").parquet(str(out))

        rows = []
        pid = broker.pid
        for name, df in (("format('krafka')", live), ("read_segments", segments),
                         ("ceiling: same rows", replay),
                         ("ceiling: constant rows", ceiling)):  # fmt: skip
            t_count, cpu_count, broker_count = median_time(df.count, args.repeat, pid)
            t_parquet, cpu_parquet, broker_parquet = median_time(parquet(df), args.repeat, pid)
            rows.append((name, n / t_count, n / t_parquet))
            print(f"  {name:24} count {n / t_count / 1e6:6.2f} M rows/s "
                  f"(CPU s: machine {cpu_count:.2f}, broker {broker_count:.2f})   "
                  f"parquet {n / t_parquet / 1e6:6.2f} M rows/s "
                  f"(CPU s: machine {cpu_parquet:.2f}, broker {broker_parquet:.2f})",
                  flush=True)  # fmt: skip
        spark.stop()
    print(f"\n## {n:,} records x 100 B, {PARTITIONS} partitions, Tansu, Spark local[2] (medians)")
    for ceiling in rows[-2:]:
        print(f"\nagainst {ceiling[0]}:")
        for name, count, parquet_rate in rows:
            print(f"{name:24} count {count / 1e6:6.2f} M rows/s ({count / ceiling[1]:.2f}x)"
                  f"   parquet {parquet_rate / 1e6:6.2f} M rows/s "
                  f"({parquet_rate / ceiling[2]:.2f}x)")  # fmt: skip


if __name__ == "__main__":
    main()
