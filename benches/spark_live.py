"""`format("krafka")` against Spark's own Kafka connector, `format("kafka")`: same broker, same run.

    python benches/spark_live.py                       # every topic shape below, medians of 3
    python benches/spark_live.py --partitions 4 --shape 100B --codec none --repeat 5
    python benches/spark_live.py --lines count,parquet

Apache Kafka 4.4 (`krafka.testing.KafkaCluster`, one node) serves topics of 4 and 12
partitions holding 2,000,000 records of 100-byte values or 500,000 of 1 KB values (keys
"key-<i>", values cut from random base64 text: compressible as real payloads are), written
uncompressed or with zstd by krafka's producer. Spark local[2] holds both connectors (the JVM
one's jars come from Maven Central once, `krafka.testing.spark_kafka`), and each line runs with
`format("kafka")` and with `format("krafka")`, by turns (the order alternating from round
to round):

- `count`: a batch read from the earliest offsets into `count()`;
- `parquet`: the same read written to parquet;
- `stream->parquet`: a streaming query, `trigger(availableNow=True)`, from the earliest offsets
  to parquet (a fresh checkpoint each run);
- `stream->kafka`: the same streaming query writing key and value back to a new topic of the
  same partitions through the same connector (`kafka.compression.type` as the source topic).

For each: rows/s (streams also inside their micro-batches alone, Spark's `triggerExecution`:
the rest is the query's start and stop), and the CPU seconds per run of Spark (its JVM with
every process under it: the Python workers) and of the broker (Linux /proc), medians of
`--repeat`; the ratio is krafka / kafka on rows/s. The machine has 2 cores: broker, Spark and
client share them, so CPU seconds say where the time went.
"""

from __future__ import annotations

import argparse
import base64
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benches"))

from _installed import compile_krafka  # noqa: E402
from spark import start_spark  # noqa: E402

from krafka import NewTopic  # noqa: E402
from krafka.sync import AdminClient, Producer  # noqa: E402

FORMATS = ("kafka", "krafka")
LINES = ("count", "parquet", "stream->parquet", "stream->kafka")
SHAPES = {"100B": (2_000_000, 100), "1KB": (500_000, 1000)}


@dataclass(frozen=True)
class TopicShape:
    partitions: int
    shape: str
    codec: str

    scale: float = 1.0

    @property
    def records(self) -> int:
        return int(SHAPES[self.shape][0] * self.scale)

    @property
    def value_size(self) -> int:
        return SHAPES[self.shape][1]

    @property
    def topic(self) -> str:
        return f"bench-{self.partitions}p-{self.shape}-{self.codec}"

    def __str__(self) -> str:
        return f"{self.partitions} partitions, {self.records:,} x {self.shape}, {self.codec}"


def values(size: int, count: int = 4096) -> list[bytes]:
    rng = random.Random(size)
    text = base64.b64encode(rng.randbytes(size * count))
    return [text[i * size : (i + 1) * size] for i in range(count)]


def fill(bootstrap: str, shape: TopicShape) -> None:
    with AdminClient(bootstrap) as admin:
        admin.create_topics([NewTopic(shape.topic, shape.partitions)]).raise_for_errors()
    pool = values(shape.value_size)
    compression = None if shape.codec == "none" else shape.codec
    with Producer(bootstrap, linger=0.02, batch_size=1 << 20, compression=compression) as producer:
        for i in range(shape.records):
            producer.send(shape.topic, pool[i % len(pool)], key=b"key-%d" % i,
                          partition=i % shape.partitions)  # fmt: skip
        producer.flush()


def process_tree_cpu(root: int) -> float:
    """CPU seconds of `root` and every live process under it, with their reaped children."""
    tick = os.sysconf("SC_CLK_TCK")
    stats: dict[int, tuple[int, float]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parent = int(fields[1])
        stats[int(entry)] = (parent, sum(int(x) for x in fields[11:15]) / tick)
    children: dict[int, list[int]] = {}
    for pid, (parent, _) in stats.items():
        children.setdefault(parent, []).append(pid)
    total, stack = 0.0, [root]
    while stack:
        pid = stack.pop()
        if pid in stats:
            total += stats[pid][1]
        stack += children.get(pid, [])
    return total


@dataclass
class Meter:
    """CPU seconds of Spark (the driver process and its JVM tree) and of the broker."""

    spark_pid: int
    broker_pid: int

    def read(self) -> tuple[float, float]:
        own = os.times()
        driver = own.user + own.system
        return driver + process_tree_cpu(self.spark_pid), process_tree_cpu(self.broker_pid)


@dataclass(frozen=True)
class Result:
    seconds: float
    spark_cpu: float
    broker_cpu: float
    batch_seconds: float | None  # streams: the time inside the micro-batches alone


Run = tuple[float, float, float, float | None]


def timed(job: Callable[[], float | None], meter: Meter) -> Run:
    """(seconds, Spark CPU seconds, broker CPU seconds, seconds in micro-batches) of one run."""
    spark0, broker0 = meter.read()
    start = time.perf_counter()
    in_batches = job()
    elapsed = time.perf_counter() - start
    spark1, broker1 = meter.read()
    return elapsed, spark1 - spark0, broker1 - broker0, in_batches


def measure(
    jobs: dict[str, Callable[[], float | None]], meter: Meter, repeat: int
) -> dict[str, Result]:
    """Medians of `repeat` rounds; each round runs every connector once, the order alternating
    from round to round (drift in a shared machine's load hits both alike)."""
    runs: dict[str, list[Run]] = {fmt: [] for fmt in jobs}
    order = list(jobs)
    for _ in range(repeat):
        for fmt in order:
            runs[fmt].append(timed(jobs[fmt], meter))
        order.reverse()
    results = {}
    for fmt, rounds in runs.items():
        batches = [r[3] for r in rounds if r[3] is not None]
        results[fmt] = Result(
            statistics.median(r[0] for r in rounds),
            statistics.median(r[1] for r in rounds),
            statistics.median(r[2] for r in rounds),
            statistics.median(batches) if batches else None,
        )
    return results


class Lines:
    """The four jobs of one topic, for either connector."""

    def __init__(self, spark: Any, bootstrap: str, shape: TopicShape, scratch: Path) -> None:
        self.spark, self.bootstrap, self.shape, self.scratch = spark, bootstrap, shape, scratch
        self.runs = 0

    def _options(self, reader: Any, fmt: str) -> Any:
        return (
            reader.format(fmt)
            .option("kafka.bootstrap.servers", self.bootstrap)
            .option("subscribe", self.shape.topic)
            .option("startingOffsets", "earliest")
        )

    def _fresh(self, name: str) -> Path:
        self.runs += 1
        path = self.scratch / f"{name}-{self.runs}"
        shutil.rmtree(path, ignore_errors=True)
        return path

    def job(self, line: str, fmt: str) -> Callable[[], float | None]:
        return {
            "count": lambda: self.count(fmt),
            "parquet": lambda: self.parquet(fmt),
            "stream->parquet": lambda: self.stream_parquet(fmt),
            "stream->kafka": lambda: self.stream_kafka(fmt),
        }[line]

    def count(self, fmt: str) -> None:
        n = self._options(self.spark.read, fmt).load().count()
        assert n == self.shape.records, (fmt, n)

    def parquet(self, fmt: str) -> None:
        out = self._fresh("parquet")
        self._options(self.spark.read, fmt).load().write.parquet(str(out))
        shutil.rmtree(out)

    def _stream(self, fmt: str, sink: str, options: dict[str, str]) -> float:
        """Runs the query; returns the seconds its micro-batches took (Spark's progress
        `triggerExecution`), the rest of the wall time being the query's start and stop."""
        checkpoint = self._fresh("checkpoint")
        stream = self._options(self.spark.readStream, fmt).load()
        if sink != "parquet":
            stream = stream.select("key", "value")
        writer = stream.writeStream.format(sink).option("checkpointLocation", str(checkpoint))
        for key, value in options.items():
            writer = writer.option(key, value)
        query = writer.trigger(availableNow=True).start()
        query.awaitTermination()
        assert query.exception() is None, query.exception()
        rows = sum(p["numInputRows"] for p in query.recentProgress)
        assert rows == self.shape.records, (fmt, sink, rows)
        shutil.rmtree(checkpoint)
        millis: float = sum(
            p["durationMs"].get("triggerExecution", 0) for p in query.recentProgress
        )
        return millis / 1e3

    def stream_parquet(self, fmt: str) -> float:
        out = self._fresh("stream")
        try:
            return self._stream(fmt, "parquet", {"path": str(out)})
        finally:
            shutil.rmtree(out, ignore_errors=True)

    def stream_kafka(self, fmt: str) -> float:
        topic = f"{self.shape.topic}-copy-{fmt}-{time.time_ns()}"
        with AdminClient(self.bootstrap) as admin:
            admin.create_topics([NewTopic(topic, self.shape.partitions)]).raise_for_errors()
        options = {"kafka.bootstrap.servers": self.bootstrap, "topic": topic}
        if self.shape.codec != "none":
            options["kafka.compression.type"] = self.shape.codec
        try:
            return self._stream(fmt, fmt, options)
        finally:
            with AdminClient(self.bootstrap) as admin:
                admin.delete_topics([topic])


def run_shape(spark: Any, bootstrap: str, shape: TopicShape, lines: list[str], meter: Meter,
              repeat: int, scratch: Path) -> Iterator[tuple[str, dict[str, Result]]]:  # fmt: skip
    jobs = Lines(spark, bootstrap, shape, scratch)
    for fmt in FORMATS:  # warm both connectors (JIT, consumer pools, Python workers)
        jobs.count(fmt)
    for line in lines:
        yield line, measure({fmt: jobs.job(line, fmt) for fmt in FORMATS}, meter, repeat)


def report_line(shape: TopicShape, line: str, results: dict[str, Result]) -> str:
    n = shape.records
    kafka, krafka = results["kafka"], results["krafka"]
    cells = []
    for fmt in FORMATS:
        r = results[fmt]
        cells.append(f"{n / r.seconds:9,.0f} rows/s  cpu spark {r.spark_cpu:6.2f} s "
                     f"broker {r.broker_cpu:5.2f} s")  # fmt: skip
    ratio = kafka.seconds / krafka.seconds
    text = f"{line:16} | kafka {cells[0]} | krafka {cells[1]} | {ratio:5.2f}x"
    if kafka.batch_seconds and krafka.batch_seconds:
        rates = [n / r.batch_seconds for r in (kafka, krafka) if r.batch_seconds]
        text += (f"\n{'  in batches':16} | kafka {rates[0]:9,.0f} rows/s | krafka "
                 f"{rates[1]:9,.0f} rows/s | {rates[1] / rates[0]:5.2f}x")  # fmt: skip
    return text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--partitions", default="4,12")
    parser.add_argument("--shape", default="100B,1KB")
    parser.add_argument("--codec", default="none,zstd")
    parser.add_argument("--lines", default=",".join(LINES))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--scale", type=float, default=1.0, help="records x this (quick runs)")
    args = parser.parse_args()
    compile_krafka()
    from krafka.testing import KafkaCluster
    from krafka.testing.spark_kafka import pyspark_version, spark_kafka_jars

    shapes = [
        TopicShape(int(p), s, c, args.scale)
        for p in args.partitions.split(",")
        for s in args.shape.split(",")
        for c in args.codec.split(",")
    ]
    lines = [line for line in args.lines.split(",") if line]
    unknown = set(lines) - set(LINES)
    if unknown:
        parser.error(f"unknown lines {sorted(unknown)}; known: {', '.join(LINES)}")
    report: list[str] = []
    with (
        KafkaCluster(heap="1g") as cluster,
        tempfile.TemporaryDirectory(prefix="krafka-live-") as tmp,
    ):
        bootstrap = cluster.bootstrap_servers
        for shape in shapes:
            fill(bootstrap, shape)
        spark = start_spark(spark_kafka_jars())
        gateway = spark.sparkContext._gateway  # the JVM spark-submit started
        broker_pid = cluster.nodes[0].pid
        assert broker_pid is not None
        meter = Meter(gateway.proc.pid, broker_pid)
        header = (f"## Apache Kafka 4.4, Spark {pyspark_version()} local[2], medians of "
                  f"{args.repeat}; ratio = krafka rows/s / kafka rows/s")  # fmt: skip
        print(header, flush=True)
        report.append(header)
        for shape in shapes:
            title = f"\n### {shape}"
            print(title, flush=True)
            report.append(title)
            for line, results in run_shape(spark, bootstrap, shape, lines, meter, args.repeat,
                                           Path(tmp)):  # fmt: skip
                text = report_line(shape, line, results)
                print(text, flush=True)
                report.append(text)
        spark.stop()
    print("\n" + "\n".join(report))


if __name__ == "__main__":
    main()
